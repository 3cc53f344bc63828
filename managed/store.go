package managed

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/riverqueue/river"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
)

// Store is the farm's durable state. Every method is one transaction; every
// refusal is a *fault.Error with a stable code (the Code* constants).
type Store interface {
	// Health summarises devices, tasks and active assignments.
	Health(ctx context.Context) (Health, error)

	// RegisterDevice adds or updates a device (an upsert by deviceId).
	RegisterDevice(ctx context.Context, spec DeviceSpec) (Device, error)
	// SetDeviceHealth records a probe's verdict on a registered device.
	SetDeviceHealth(ctx context.Context, deviceID, health string) (Device, error)
	Device(ctx context.Context, deviceID string) (Device, error)
	// DeviceBySerial finds the device registered with an adb serial.
	DeviceBySerial(ctx context.Context, serial string) (Device, error)
	Devices(ctx context.Context) ([]Device, error)

	// Submit creates a task, its shards and their River jobs atomically,
	// or returns the task an identical earlier submission created.
	Submit(ctx context.Context, sub Submission) (Task, error)
	Status(ctx context.Context, taskID string) (TaskStatus, error)
	Events(ctx context.Context, taskID string, afterSequence int64) ([]Event, error)
	Report(ctx context.Context, taskID string) (Report, error)
	// Cancel needs the task's owner token; it fences active attempts and
	// cancels the shards' River jobs, which stops running workers.
	Cancel(ctx context.Context, taskID, ownerToken string) (Task, error)
	// Recover expires overdue leases and ends shards whose River job was
	// given up; River's elected leader runs it periodically.
	Recover(ctx context.Context) (Recovery, error)
	// ShardJobs lists the River job carrying each shard of a task.
	ShardJobs(ctx context.Context, taskID string) ([]ShardJob, error)

	// Claim leases a device for the shard a River job carries.
	Claim(ctx context.Context, req ClaimRequest) (ClaimResult, error)
	// Start, Heartbeat, Complete, Fail and Release must present the
	// assignment's exact identity and a lease that has not expired;
	// otherwise they fail with stale_assignment.
	Start(ctx context.Context, id Identity) error
	Heartbeat(ctx context.Context, id Identity) (leaseExpiresAt int64, err error)
	Complete(ctx context.Context, id Identity, c Completion) (Outcome, error)
	Fail(ctx context.Context, id Identity, category string, retryable bool) (Outcome, error)
	// Release hands a shard back without counting the attempt against
	// its retries (a worker that is stopping).
	Release(ctx context.Context, id Identity) (Outcome, error)

	// RetentionCandidates lists the evidence of finished tasks whose
	// retention has passed and that is not purged yet.
	RetentionCandidates(ctx context.Context) ([]evidence, error)
	// MarkPurged records that an attempt's evidence was deleted; its
	// digest stays.
	MarkPurged(ctx context.Context, taskID string, attemptIDs []string) (int64, error)

	// NewRiverClient builds a River client on the store's database.
	NewRiverClient(cfg *river.Config) (riverClient, error)
	// RiverUI builds River's dashboard mounted at prefix.
	RiverUI(ctx context.Context, prefix string) (uiHandler, error)

	Close() error
}

// Options configure Open.
type Options struct {
	// Clock stands in for the database's clock (tests: one fake clock
	// that every store on the database shares). Nil, as every command
	// leaves it, means the database's own clock: lease expiry, recovery
	// and every timestamp are judged by the database server (SQL now()),
	// never by the clock of the host a worker runs on.
	Clock clock.Clock
	// Existing opens a store that exists and is initialised at this
	// binary's schema version, and changes nothing to do so: no file or
	// directory is created, no table migrated (the read-only commands, and
	// those that only act on tasks already submitted). Otherwise Open
	// creates and migrates as needed.
	Existing bool
	// Logger receives River's logs; nil discards them.
	Logger *slog.Logger
	// BusyTimeout is how long a SQLite statement waits for another
	// process's write lock before the store reports database_locked; zero
	// means 10 s, long enough for any transaction of a busy farm.
	BusyTimeout time.Duration
}

// busyPragma is SQLite's busy_timeout parameter for the connection URI.
func (o Options) busyPragma() string {
	ms := int64(10000)
	if o.BusyTimeout > 0 {
		ms = max(1, o.BusyTimeout.Milliseconds())
	}
	return "&_pragma=busy_timeout(" + strconv.FormatInt(ms, 10) + ")"
}

// Open opens (creating and migrating as needed, unless opts.Existing) the
// store at database: a
// postgres:// or postgresql:// URL selects PostgreSQL, anything else is a
// SQLite file path.
func Open(ctx context.Context, database string, opts Options) (Store, error) {
	var be backend
	var err error
	if IsPostgresURL(database) {
		be, err = openPostgres(ctx, database, opts)
	} else {
		be, err = openSQLite(ctx, database, opts)
	}
	if err != nil {
		return nil, asFault(err)
	}
	return &store{be: be, clock: opts.Clock}, nil
}

type store struct {
	be backend
	// clock is a test's stand-in for the database's clock; nil in
	// production.
	clock clock.Clock
}

var _ Store = (*store)(nil)

// now is the farm's time in Unix milliseconds: the database's clock, read
// in SQL, so that every host of a farm judges leases by one clock however
// far its own runs ahead or behind.
func (s *store) now(ctx context.Context) (int64, error) {
	if s.clock != nil {
		return s.clock.Now().UnixMilli(), nil
	}
	var ms int64
	if err := s.be.reader().queryRow(ctx, s.be.nowQuery()).Scan(&ms); err != nil {
		return 0, fault.Wrap(fault.Transport, fault.CodeDatabaseError, "cannot read the database's clock", err)
	}
	return ms, nil
}

func (s *store) Close() error { return s.be.close() }

func (s *store) NewRiverClient(cfg *river.Config) (riverClient, error) { return s.be.newClient(cfg) }

func (s *store) RiverUI(ctx context.Context, prefix string) (uiHandler, error) {
	return s.be.uiHandler(ctx, prefix)
}

// write runs fn in a write transaction, again (at once, up to five runs in
// all) after a transient conflict: a serialization failure or a deadlock.
func (s *store) write(ctx context.Context, fn func(t txn) error) error {
	retry := clock.Retry{Attempts: 5, Retryable: s.be.retryable}
	return asFault(retry.Do(ctx, func(ctx context.Context) error { return s.writeOnce(ctx, fn) }))
}

func (s *store) writeOnce(ctx context.Context, fn func(t txn) error) error {
	t, err := s.be.begin(ctx)
	if err != nil {
		return err
	}
	defer t.rollback()
	if err := fn(t); err != nil {
		return err
	}
	return t.commit()
}

// asFault types a database error (the store's own refusals pass through).
func asFault(err error) error {
	if err == nil {
		return nil
	}
	var f *fault.Error
	if errors.As(err, &f) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	switch c := sqliteCode(err) & 0xff; c {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_FULL:
		// The same codes as at open; the path is the store's own.
		return sqliteFault(err, "", "")
	}
	return fault.Wrap(fault.Transport, fault.CodeDatabaseError, "the managed database failed: "+err.Error(), err)
}

package managed

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/solopi-dev/solopi/fault"
)

// migrationLockKey serialises concurrent first starts of workers on one
// database (pg_advisory_lock).
const migrationLockKey = 0x736f6c6f7069 // "solopi"

// IsPostgresURL reports whether a --database value selects PostgreSQL.
func IsPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// postgresBackend is the farm store: every host's workers share one
// PostgreSQL database. Tables (ours and River's) live in the connection's
// search_path; a URL parameter search_path=NAME selects a schema.
type postgresBackend struct {
	url  string
	pool *pgxpool.Pool
	*riverOps[pgx.Tx]
}

func openPostgres(ctx context.Context, dsn string, opts Options) (*postgresBackend, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, CodeDatabase, "the PostgreSQL URL is invalid", err)
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = 10
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fault.Wrap(fault.Transport, CodeDatabase, "cannot connect to PostgreSQL", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fault.Wrap(fault.Transport, CodeDatabase, "cannot connect to PostgreSQL", err).With("database", redactURL(dsn))
	}
	b := &postgresBackend{url: redactURL(dsn), pool: pool}
	if b.riverOps, err = newRiverOps(riverpgxv5.New(pool), opts.Logger); err != nil {
		pool.Close()
		return nil, err
	}
	if err := b.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return b, nil
}

// redactURL drops the password from a database URL so that it can be
// printed.
func redactURL(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "postgres://(unparsable)"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.User(u.User.Username())
	}
	q := u.Query()
	if q.Has("password") {
		q.Del("password")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// migrate brings River's tables and ours up to date. River's migrations run
// one transaction each (PostgreSQL cannot use an enum value added in the same
// transaction), so concurrent first starts serialise on a session advisory
// lock held on a connection of its own.
func (b *postgresBackend) migrate(ctx context.Context) error {
	migrator, err := rivermigrate.New(b.driver, &rivermigrate.Config{Logger: b.logger})
	if err != nil {
		return fmt.Errorf("river migrator: %w", err)
	}
	lock, err := b.pool.Acquire(ctx)
	if err != nil {
		return fault.Wrap(fault.Transport, CodeDatabase, "cannot connect to PostgreSQL", err)
	}
	defer lock.Release()
	if _, err := lock.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrationLockKey)); err != nil {
		return fault.Wrap(fault.Transport, CodeDatabase, "cannot lock the schema for migration", err)
	}
	defer lock.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(migrationLockKey))
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fault.Wrap(fault.Transport, CodeDatabase, "cannot migrate River's tables", err)
	}
	t, err := b.begin(ctx)
	if err != nil {
		return fault.Wrap(fault.Transport, CodeDatabase, "cannot begin the migration", err)
	}
	defer t.rollback()
	var hasMetadata bool
	if err := t.queryRow(ctx, `SELECT to_regclass('managed_metadata') IS NOT NULL`).Scan(&hasMetadata); err != nil {
		return fault.Wrap(fault.Transport, CodeDatabase, "cannot read the schema", err)
	}
	if err := migrate(ctx, t, "postgres", hasMetadata); err != nil {
		return err
	}
	return t.commit()
}

func (b *postgresBackend) name() string     { return "postgres" }
func (b *postgresBackend) location() string { return b.url }
func (b *postgresBackend) reader() querier  { return pgQuerier{b.pool} }

// nowQuery reads the PostgreSQL server's clock: one clock for every host
// of the farm.
func (b *postgresBackend) nowQuery() string {
	return `SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint`
}
func (b *postgresBackend) close() error { b.pool.Close(); return nil }

func (b *postgresBackend) begin(ctx context.Context) (txn, error) {
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return &pgTx{pgQuerier: pgQuerier{tx}, tx: tx, river: b.riverOps}, nil
}

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// retryable: serialization_failure and deadlock_detected.
func (b *postgresBackend) retryable(err error) bool {
	c := pgCode(err)
	return c == "40001" || c == "40P01"
}

func (b *postgresBackend) uniqueViolation(err error) bool { return pgCode(err) == "23505" }

type pgTx struct {
	pgQuerier
	tx    pgx.Tx
	river *riverOps[pgx.Tx]
}

func (t *pgTx) lockTask(ctx context.Context, taskID string) error {
	_, err := t.exec(ctx, `SELECT 1 FROM managed_tasks WHERE task_id = $1 FOR UPDATE`, taskID)
	return err
}

func (t *pgTx) shareTask(ctx context.Context, taskID string) error {
	_, err := t.exec(ctx, `SELECT 1 FROM managed_tasks WHERE task_id = $1 FOR SHARE`, taskID)
	return err
}

func (t *pgTx) insertJobs(ctx context.Context, jobs []river.InsertManyParams) ([]int64, error) {
	return t.river.insertJobs(ctx, t.tx, jobs)
}

func (t *pgTx) cancelJob(ctx context.Context, id int64) error {
	return t.river.cancelJob(ctx, t.tx, id)
}

func (t *pgTx) commit() error { return t.tx.Commit(context.Background()) }
func (t *pgTx) rollback()     { _ = t.tx.Rollback(context.Background()) }

// pgQuerier adapts pgx (a pool or a transaction).
type pgQuerier struct {
	db interface {
		Exec(ctx context.Context, q string, args ...any) (pgconn.CommandTag, error)
		QueryRow(ctx context.Context, q string, args ...any) pgx.Row
		Query(ctx context.Context, q string, args ...any) (pgx.Rows, error)
	}
}

func (q pgQuerier) exec(ctx context.Context, s string, args ...any) (int64, error) {
	tag, err := q.db.Exec(ctx, s, args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (q pgQuerier) queryRow(ctx context.Context, s string, args ...any) row {
	return pgRow{q.db.QueryRow(ctx, s, args...)}
}

func (q pgQuerier) query(ctx context.Context, s string, args ...any) (rows, error) {
	return q.db.Query(ctx, s, args...)
}

type pgRow struct{ r pgx.Row }

func (r pgRow) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return errNoRows
	}
	return err
}

// Package history is the local results store of the suite runner: one
// embedded SQLite file (the farm's driver, in WAL mode with a busy
// timeout, so concurrent solopi processes can append), one row per
// attempt of a case: its name and content fingerprint, the phone, the
// attempt's verdict and error code, when it ran and for how long, the
// batch. It never holds secrets or evidence. The schema is versioned
// (PRAGMA user_version, marked as ours by PRAGMA application_id) and
// migrated by a writer; a reader (OpenReadOnly) never creates, migrates or
// changes a file, so a mistyped path is an error, not a new database.
package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
)

// applicationID marks a SQLite file as a solopi history ("SoLH").
const applicationID = 0x536f4c48

// DefaultBusyTimeout is how long a statement waits for another
// process's write lock before the database counts as locked.
const DefaultBusyTimeout = 10 * time.Second

// Options tune a store (the zero value is the default).
type Options struct {
	// BusyTimeout replaces DefaultBusyTimeout.
	BusyTimeout time.Duration
}

func (o Options) busyMs() int64 {
	if o.BusyTimeout <= 0 {
		return DefaultBusyTimeout.Milliseconds()
	}
	return max(o.BusyTimeout.Milliseconds(), 1)
}

// Store is an open results store.
type Store struct {
	db       *sql.DB
	path     string
	readOnly bool
	// empty: a reader found an empty database (no tables): it holds no
	// history and is not queried.
	empty bool
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// DefaultPath is $XDG_DATA_HOME/solopi/history.sqlite (as getenv reads
// it), or ~/.local/share/solopi/history.sqlite.
func DefaultPath(getenv func(string) string) (string, error) {
	if d := getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "solopi", "history.sqlite"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", fault.Wrap(fault.Invalid, fault.CodeHistoryInvalidPath, "there is no data directory for the results history", err).
			WithUserAction("Set XDG_DATA_HOME or HOME, or name the file (--history PATH).")
	}
	return filepath.Join(home, ".local", "share", "solopi", "history.sqlite"), nil
}

func uri(path, params string) string {
	return (&url.URL{Scheme: "file", Path: path}).String() + "?" + params
}

// Open opens the store at path for appending and queries: the directory
// (0700) and the file are created when missing, the schema created or
// migrated. A file that is not ours, is newer or is damaged is refused
// before anything is written to it.
func Open(ctx context.Context, path string, o Options) (*Store, error) {
	abs, err := absPath(path)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); err == nil {
		// Look before writing: opening for write would already switch a
		// foreign database to WAL mode.
		st, err := openReadOnly(ctx, abs, o)
		if err != nil && fault.CodeOf(err) != fault.CodeHistoryNeedsMigration {
			return nil, err
		}
		if st != nil {
			st.Close()
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, classify(err, abs, "cannot inspect the history file")
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, classify(err, abs, "cannot create the history directory")
	}
	// Processes opening a new store together race to switch it to WAL,
	// which SQLite answers with SQLITE_BUSY at once (no busy wait): try
	// again, within the busy timeout.
	rctx, cancel := context.WithTimeout(ctx, time.Duration(o.busyMs())*time.Millisecond)
	defer cancel()
	var s *Store
	var last error
	err = clock.Retry{Attempts: math.MaxInt, Backoff: clock.Backoff{Base: 10 * time.Millisecond, Max: 200 * time.Millisecond, Jitter: 0.5},
		Retryable: func(err error) bool { return fault.CodeOf(err) == fault.CodeHistoryLocked }}.Do(rctx, func(ctx context.Context) error {
		s, last = openWriter(ctx, abs, o)
		return last
	})
	if err != nil && last != nil && ctx.Err() == nil {
		err = last // the busy timeout ran out between two tries
	}
	if err != nil {
		return nil, classify(err, abs, "cannot open the history")
	}
	return s, nil
}

// openWriter opens the store for writing and migrates it.
func openWriter(ctx context.Context, abs string, o Options) (*Store, error) {
	db, err := sql.Open("sqlite", uri(abs, fmt.Sprintf("_txlock=immediate&_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)", o.busyMs())))
	if err != nil {
		return nil, classify(err, abs, "cannot open the history")
	}
	s := &Store{db: db, path: abs}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// OpenReadOnly opens an existing store for queries. It never creates a
// file or a directory and never migrates: a missing file is
// history_not_found, an older schema history_needs_migration.
func OpenReadOnly(ctx context.Context, path string, o Options) (*Store, error) {
	abs, err := absPath(path)
	if err != nil {
		return nil, err
	}
	return openReadOnly(ctx, abs, o)
}

func openReadOnly(ctx context.Context, abs string, o Options) (*Store, error) {
	fi, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fault.Usagef(fault.CodeHistoryNotFound, "there is no results history at %s", abs).With("history", abs).
			WithUserAction("Check the path (--history), or run a suite first: only a run creates the history.")
	}
	if err != nil {
		return nil, classify(err, abs, "cannot inspect the history file")
	}
	if fi.IsDir() {
		return nil, fault.Usage(fault.CodeHistoryInvalidPath, "the history path is a directory").With("history", abs)
	}
	db, err := sql.Open("sqlite", uri(abs, fmt.Sprintf("mode=ro&_pragma=busy_timeout(%d)", o.busyMs())))
	if err != nil {
		return nil, classify(err, abs, "cannot open the history")
	}
	s := &Store{db: db, path: abs, readOnly: true}
	v, err := s.identify(ctx, db)
	if err == nil && v.fresh {
		s.empty = true
	} else if err == nil && v.version < schemaVersion {
		err = fault.Usagef(fault.CodeHistoryNeedsMigration, "the history has schema version %d; a run of this solopi migrates it to %d", v.version, schemaVersion).With("history", abs)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func absPath(path string) (string, error) {
	if path == "" {
		return "", fault.Usage(fault.CodeHistoryInvalidPath, "the history path is empty")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fault.Wrap(fault.Invalid, fault.CodeHistoryInvalidPath, "the history path is invalid", err)
	}
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		return "", fault.Usage(fault.CodeHistoryInvalidPath, "the history path is a directory").With("history", abs)
	}
	return abs, nil
}

// classify turns a database or file-system error into the store's error:
// what is wrong, in its own code.
func classify(err error, path, what string) *fault.Error {
	var fe *fault.Error
	if errors.As(err, &fe) {
		return fe
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fault.From(err)
	}
	kind, code, msg := fault.Transport, fault.CodeHistoryError, what
	var se *sqlite.Error
	switch {
	case errors.As(err, &se):
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN:
			kind, code, msg = fault.Invalid, fault.CodeHistoryReadOnly, what+": the file or its directory cannot be written"
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			code, msg = fault.CodeHistoryLocked, what+": another process holds the database"
		case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
			kind, code, msg = fault.Invalid, fault.CodeHistoryCorrupt, what+": the file is not a SQLite database, or it is damaged"
		}
	case errors.Is(err, syscall.EROFS), errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EPERM), errors.Is(err, syscall.ENOTDIR):
		kind, code, msg = fault.Invalid, fault.CodeHistoryReadOnly, what+": the file or its directory cannot be written"
	}
	e := fault.Wrap(kind, code, msg, err).With("history", path)
	switch code {
	case fault.CodeHistoryReadOnly:
		e.WithUserAction("Point --history at a writable place, or pass --no-history.")
	case fault.CodeHistoryCorrupt:
		e.WithUserAction("Move the file away (a new history is created in its place), or point --history elsewhere.")
	case fault.CodeHistoryLocked:
		e.WithUserAction("Another solopi holds the history; run again, or pass --no-history.")
	}
	return e
}

package managed

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/solopi-dev/solopi/fault"
)

// sqliteBackend is the single-host store: one SQLite file in WAL mode,
// shared by every process on the host through SQLite's own locking. River's
// SQLite driver wants one connection per pool (SQLite allows one writer at a
// time); every write transaction starts with BEGIN IMMEDIATE so that it
// holds the write lock from its first statement and never fails half-way on
// a lock upgrade.
type sqliteBackend struct {
	path string
	db   *sql.DB
	*riverOps[*sql.Tx]
}

func sqliteURI(path string, params string) string {
	return (&url.URL{Scheme: "file", Path: path}).String() + "?" + params
}

func openSQLite(ctx context.Context, path string, opts Options) (*sqliteBackend, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, fault.CodeDatabaseError, "the database path is invalid", err)
	}
	switch info, err := os.Stat(abs); {
	case err == nil && info.IsDir():
		return nil, storeError(fault.CodeDatabaseIsDirectory, "--database names a directory, not a SQLite file").With("database", abs).
			WithUserAction("name the store's file, for example " + filepath.Join(abs, "managed.sqlite"))
	case errors.Is(err, os.ErrNotExist) && opts.Existing:
		return nil, storeError(fault.CodeDatabaseNotFound, "no managed store exists at this path; this command does not create one").
			With("database", abs).WithUserAction("check --database (or SOLOPI_MANAGED_DB); managed-init creates a store")
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return nil, sqliteFault(err, abs, "cannot read the database file")
	}
	if !opts.Existing {
		if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
			return nil, sqliteFault(err, abs, "cannot create the database directory")
		}
	}
	b, err := openSQLiteFile(ctx, abs, opts, false)
	if opts.Existing && fault.CodeOf(err) == fault.CodeDatabaseReadOnly {
		// A WAL database on read-only media cannot be read the usual way
		// (SQLite would create its -shm file); nothing can change it there,
		// so a command that only reads opens it as immutable.
		b, err = openSQLiteFile(ctx, abs, opts, true)
	}
	return b, err
}

func openSQLiteFile(ctx context.Context, abs string, opts Options, immutable bool) (*sqliteBackend, error) {
	ro := ""
	if immutable {
		ro = "&immutable=1"
	}
	existing, version, err := inspectSQLite(ctx, abs, opts.busyPragma()+ro)
	if err != nil {
		return nil, err
	}
	hasMetadata := slices.Contains(existing, "managed_metadata")
	if opts.Existing {
		if err := checkInitialised(hasMetadata, version); err != nil {
			return nil, fault.From(err).With("database", abs)
		}
	}
	// mode=rw never creates the file: a command on an existing store only.
	mode := "rwc"
	switch {
	case immutable:
		mode = "ro" + ro
	case opts.Existing:
		mode = "rw"
	}
	db, err := sql.Open("sqlite", sqliteURI(abs, "mode="+mode+
		"&_txlock=immediate"+opts.busyPragma()+"&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"))
	if err != nil {
		return nil, sqliteFault(err, abs, "cannot open the managed database")
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, sqliteFault(err, abs, "cannot open the managed database")
	}
	b := &sqliteBackend{path: abs, db: db}
	if b.riverOps, err = newRiverOps(riversqlite.New(db), opts.Logger); err != nil {
		db.Close()
		return nil, err
	}
	if !opts.Existing {
		if err := b.migrate(ctx, hasMetadata); err != nil {
			db.Close()
			return nil, sqliteFault(err, abs, "cannot migrate the managed database")
		}
	}
	return b, nil
}

// checkInitialised refuses, for a command that never migrates, a database
// without our tables or at another schema version.
func checkInitialised(hasMetadata bool, version string) error {
	if !hasMetadata {
		return storeError(fault.CodeDatabaseNotInitialized, "the database holds no managed store; this command does not create one").
			WithUserAction("check --database (or SOLOPI_MANAGED_DB); managed-init creates a store")
	}
	n, err := strconv.Atoi(version)
	switch {
	case err != nil:
		return storeError(fault.CodeUnsupportedSchema, "the managed database's schema version is unreadable")
	case n > SchemaVersion:
		return storeError(fault.CodeUnsupportedSchema, "the managed database was written by a newer solopi (schema version "+version+")").
			WithUserAction("upgrade solopi, or point --database at another store")
	case n < SchemaVersion:
		return storeError(fault.CodeDatabaseNotInitialized, "the managed database is at an older schema version ("+version+"); this command does not migrate").
			WithUserAction("run managed-init with this solopi to migrate it")
	}
	return nil
}

// inspectSQLite lists the tables of an existing database and its schema
// version, read-only, and refuses one this package must not touch:
// SoloPi's own host CLI's managed database (a "metadata" table and no
// managed_metadata), or any other application's. A new file is not
// created here.
func inspectSQLite(ctx context.Context, path, params string) ([]string, string, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, "", nil
	}
	db, err := sql.Open("sqlite", sqliteURI(path, "mode=ro"+params))
	if err != nil {
		return nil, "", sqliteFault(err, path, "cannot open the managed database")
	}
	defer db.Close()
	tables, err := listTables(ctx, db)
	if err != nil {
		return nil, "", sqliteFault(err, path, "cannot read the database schema")
	}
	if slices.Contains(tables, "metadata") && !slices.Contains(tables, "managed_metadata") {
		return nil, "", storeError(fault.CodeUnsupportedSchema, "this is a managed database of SoloPi's Python host CLI (solopi-ai); solopi does not convert or modify it").
			With("database", path).WithUserAction("point --database (or SOLOPI_MANAGED_DB) at a new file")
	}
	for _, t := range tables {
		if !strings.HasPrefix(t, "managed_") && !strings.HasPrefix(t, "river_") && !strings.HasPrefix(t, "sqlite_") {
			return nil, "", storeError(fault.CodeUnsupportedSchema, "the database holds tables of another application").
				With("database", path).With("table", t).WithUserAction("point --database (or SOLOPI_MANAGED_DB) at a new file")
		}
	}
	var version string
	if slices.Contains(tables, "managed_metadata") {
		err := db.QueryRowContext(ctx, `SELECT value FROM managed_metadata WHERE key = 'schema_version'`).Scan(&version)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, "", sqliteFault(err, path, "cannot read the schema version")
		}
	}
	return tables, version, nil
}

func listTables(ctx context.Context, db *sql.DB) ([]string, error) {
	rs, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var tables []string
	for rs.Next() {
		var name string
		if err := rs.Scan(&name); err != nil {
			return nil, err
		}
		tables = append(tables, name)
	}
	return tables, rs.Err()
}

// sqliteFault says what is wrong with a SQLite store that could not be
// opened, read or migrated: a read-only file or file system, a lock held by
// another process past the busy timeout, a file that is not a SQLite
// database or is damaged, a file this user may not open. Anything else is
// a database_error naming what was being done.
func sqliteFault(err error, path, doing string) error {
	f := classifySQLite(err, path, doing)
	if fe, ok := f.(*fault.Error); ok && path == "" {
		delete(fe.Details, "database")
	}
	return f
}

func classifySQLite(err error, path, doing string) error {
	var f *fault.Error
	if errors.As(err, &f) && f.Code != fault.CodeDatabaseError || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	code := sqliteCode(err)
	switch {
	case code&0xff == sqlite3.SQLITE_BUSY || code&0xff == sqlite3.SQLITE_LOCKED:
		return fault.Wrap(fault.Transport, fault.CodeDatabaseLocked, "another process holds the database's lock and did not release it within 10 s", err).
			With("database", path).WithUserAction("retry when the other solopi process has finished, or stop it")
	case code&0xff == sqlite3.SQLITE_NOTADB || code&0xff == sqlite3.SQLITE_CORRUPT:
		return fault.Wrap(fault.Invalid, fault.CodeDatabaseCorrupt, "the file is not a SQLite database, or it is damaged", err).
			With("database", path).WithUserAction("point --database at another file; keep this one for inspection")
	case code&0xff == sqlite3.SQLITE_FULL:
		return fault.Wrap(fault.Transport, fault.CodeDatabaseFull, "the disk holding the database is full", err).With("database", path)
	}
	var ro, denied bool
	if path != "" {
		ro, denied = writability(path)
	}
	switch {
	case code&0xff == sqlite3.SQLITE_READONLY || ro:
		return fault.Wrap(fault.Invalid, fault.CodeDatabaseReadOnly, "the database cannot be written: its file, directory or file system is read-only", err).
			With("database", path).WithUserAction("point --database at a writable location")
	case denied || code&0xff == sqlite3.SQLITE_PERM || code&0xff == sqlite3.SQLITE_AUTH || errors.Is(err, syscall.EACCES):
		return fault.Wrap(fault.Invalid, fault.CodeDatabasePermissionDenied, "this user may not open the database or its directory", err).
			With("database", path).WithUserAction("run as the store's owner, or fix the file's permissions")
	}
	if f != nil {
		return f.With("database", path)
	}
	return fault.Wrap(fault.Transport, fault.CodeDatabaseError, doing+": "+err.Error(), err).With("database", path)
}

// writability finds out, on the error path only, whether the database's
// file or its directory refuses writing because it or its file system is
// read-only (EROFS, or EPERM for an immutable file) or by permissions
// (EACCES). The file is opened for writing and closed without a write;
// the directory is probed with a file created and removed at once.
func writability(path string) (readOnly, denied bool) {
	classify := func(err error) (bool, bool) {
		return errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EPERM), errors.Is(err, syscall.EACCES)
	}
	if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
		f.Close()
	} else if !errors.Is(err, os.ErrNotExist) {
		return classify(err)
	}
	probe, err := os.CreateTemp(filepath.Dir(path), ".solopi-probe-*")
	if err != nil {
		return classify(err)
	}
	probe.Close()
	os.Remove(probe.Name())
	return false, false
}

func (b *sqliteBackend) migrate(ctx context.Context, hasMetadata bool) error {
	migrator, err := rivermigrate.New(b.driver, &rivermigrate.Config{Logger: b.logger})
	if err != nil {
		return fmt.Errorf("river migrator: %w", err)
	}
	t, err := b.begin(ctx)
	if err != nil {
		return err
	}
	defer t.rollback()
	if _, err := migrator.MigrateTx(ctx, t.(*sqliteTx).tx, rivermigrate.DirectionUp, nil); err != nil {
		return fault.Wrap(fault.Transport, fault.CodeDatabaseError, "cannot migrate River's tables", err)
	}
	if err := migrate(ctx, t, "sqlite", hasMetadata); err != nil {
		return err
	}
	// SQLite opens a file it may not write read-only without a word; a
	// store that writes must learn it here, not at its first claim.
	if _, err := t.exec(ctx, `UPDATE managed_metadata SET value = value WHERE key = 'schema_version'`); err != nil {
		return err
	}
	return t.commit()
}

func (b *sqliteBackend) name() string     { return "sqlite" }
func (b *sqliteBackend) location() string { return b.path }
func (b *sqliteBackend) reader() querier  { return sqlQuerier{b.db} }

// nowQuery: SQLite's clock is the host's (a SQLite store never spans
// hosts), read by SQLite itself with millisecond precision.
func (b *sqliteBackend) nowQuery() string {
	return `SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)`
}
func (b *sqliteBackend) close() error { return b.db.Close() }

func (b *sqliteBackend) begin(ctx context.Context) (txn, error) {
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return &sqliteTx{sqlQuerier: sqlQuerier{tx}, tx: tx, river: b.riverOps}, nil
}

func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()
	}
	return 0
}

func (b *sqliteBackend) retryable(err error) bool {
	c := sqliteCode(err) & 0xff
	return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
}

func (b *sqliteBackend) uniqueViolation(err error) bool {
	c := sqliteCode(err)
	return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

type sqliteTx struct {
	sqlQuerier
	tx    *sql.Tx
	river *riverOps[*sql.Tx]
}

// lockTask and shareTask have nothing to do: the transaction holds the
// database's write lock already.
func (t *sqliteTx) lockTask(context.Context, string) error { return nil }

func (t *sqliteTx) shareTask(context.Context, string) error { return nil }

func (t *sqliteTx) insertJobs(ctx context.Context, jobs []river.InsertManyParams) ([]int64, error) {
	return t.river.insertJobs(ctx, t.tx, jobs)
}

func (t *sqliteTx) cancelJob(ctx context.Context, id int64) error {
	return t.river.cancelJob(ctx, t.tx, id)
}

func (t *sqliteTx) commit() error { return t.tx.Commit() }
func (t *sqliteTx) rollback()     { _ = t.tx.Rollback() }

// sqlQuerier adapts database/sql (a pool or a transaction).
type sqlQuerier struct {
	db interface {
		ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
		QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
		QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	}
}

func (q sqlQuerier) exec(ctx context.Context, s string, args ...any) (int64, error) {
	res, err := q.db.ExecContext(ctx, s, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (q sqlQuerier) queryRow(ctx context.Context, s string, args ...any) row {
	return sqlRow{q.db.QueryRowContext(ctx, s, args...)}
}

func (q sqlQuerier) query(ctx context.Context, s string, args ...any) (rows, error) {
	rs, err := q.db.QueryContext(ctx, s, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rs}, nil
}

type sqlRow struct{ r *sql.Row }

func (r sqlRow) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return errNoRows
	}
	return err
}

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }

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
	"strings"

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
		return nil, fault.Wrap(fault.Invalid, CodeDatabase, "the database path is invalid", err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fault.Wrap(fault.Invalid, CodeDatabase, "cannot create the database directory", err).With("database", abs)
	}
	existing, err := inspectSQLite(ctx, abs)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", sqliteURI(abs,
		"_txlock=immediate&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"))
	if err != nil {
		return nil, fault.Wrap(fault.Transport, CodeDatabase, "cannot open the managed database", err)
	}
	db.SetMaxOpenConns(1)
	b := &sqliteBackend{path: abs, db: db}
	if b.riverOps, err = newRiverOps(riversqlite.New(db), opts.Logger); err != nil {
		db.Close()
		return nil, err
	}
	if err := b.migrate(ctx, slices.Contains(existing, "managed_metadata")); err != nil {
		db.Close()
		return nil, err
	}
	return b, nil
}

// inspectSQLite lists the tables of an existing database, read-only, and
// refuses one this package must not touch: SoloPi's own host CLI's managed
// database (a "metadata" table and no managed_metadata), or any other
// application's. A new file is not created here.
func inspectSQLite(ctx context.Context, path string) ([]string, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	db, err := sql.Open("sqlite", sqliteURI(path, "mode=ro&_pragma=busy_timeout(10000)"))
	if err != nil {
		return nil, fault.Wrap(fault.Transport, CodeDatabase, "cannot open the managed database", err)
	}
	defer db.Close()
	rs, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return nil, storeError(CodeUnsupportedSchema, "the file is not a SQLite database this solopi can use").With("database", path)
	}
	defer rs.Close()
	var tables []string
	for rs.Next() {
		var name string
		if err := rs.Scan(&name); err != nil {
			return nil, fault.Wrap(fault.Transport, CodeDatabase, "cannot read the database schema", err)
		}
		tables = append(tables, name)
	}
	if err := rs.Err(); err != nil {
		return nil, storeError(CodeUnsupportedSchema, "the file is not a SQLite database this solopi can use").With("database", path)
	}
	if slices.Contains(tables, "metadata") && !slices.Contains(tables, "managed_metadata") {
		return nil, storeError(CodeUnsupportedSchema, "this is a managed database of SoloPi's Python host CLI (solopi-ai); solopi does not convert or modify it").
			With("database", path).WithUserAction("point --database (or SOLOPI_MANAGED_DB) at a new file")
	}
	for _, t := range tables {
		if !strings.HasPrefix(t, "managed_") && !strings.HasPrefix(t, "river_") && !strings.HasPrefix(t, "sqlite_") {
			return nil, storeError(CodeUnsupportedSchema, "the database holds tables of another application").
				With("database", path).With("table", t).WithUserAction("point --database (or SOLOPI_MANAGED_DB) at a new file")
		}
	}
	return tables, nil
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
		return fault.Wrap(fault.Transport, CodeDatabase, "cannot migrate River's tables", err)
	}
	if err := migrate(ctx, t, "sqlite", hasMetadata); err != nil {
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

package managed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
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
		return nil, fault.Wrap(fault.Invalid, fault.CodeDatabaseError, "the PostgreSQL URL is invalid", err)
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = 10
	}
	where := redactURL(dsn)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, pgFault(err, cfg, where, "cannot connect to PostgreSQL")
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, pgFault(err, cfg, where, "cannot connect to PostgreSQL")
	}
	if err := checkSearchPath(ctx, pool, where); err != nil {
		pool.Close()
		return nil, err
	}
	b := &postgresBackend{url: where, pool: pool}
	if b.riverOps, err = newRiverOps(riverpgxv5.New(pool), opts.Logger); err != nil {
		pool.Close()
		return nil, err
	}
	if opts.Existing {
		err = b.checkInitialised(ctx)
	} else {
		err = b.migrate(ctx)
	}
	if err != nil {
		pool.Close()
		return nil, pgFault(err, cfg, where, "cannot migrate the managed database")
	}
	return b, nil
}

// checkSearchPath refuses a connection whose search_path names no schema
// that exists: every table would otherwise fail to be created or found.
func checkSearchPath(ctx context.Context, pool *pgxpool.Pool, where string) error {
	var schema *string
	var path string
	if err := pool.QueryRow(ctx, `SELECT current_schema(), current_setting('search_path')`).Scan(&schema, &path); err != nil {
		return fault.Wrap(fault.Transport, fault.CodeDatabaseError, "cannot read the connection's search_path", err).With("database", where)
	}
	if schema != nil {
		return nil
	}
	// PostgreSQL skips a schema the role may not use as if it did not
	// exist; tell the two apart.
	var denied []string
	rows, err := pool.Query(ctx, `SELECT nspname FROM pg_namespace WHERE nspname = ANY($1) AND NOT has_schema_privilege(oid, 'USAGE') ORDER BY nspname`,
		searchPathNames(path))
	if err == nil {
		denied, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil {
		return fault.Wrap(fault.Transport, fault.CodeDatabaseError, "cannot read the connection's schemas", err).With("database", where)
	}
	if len(denied) > 0 {
		return storeError(fault.CodeDatabasePermissionDenied, "the role may not use the schema of its search_path ("+strings.Join(denied, ", ")+")").
			With("database", where).With("searchPath", path).
			WithUserAction("GRANT USAGE, CREATE ON SCHEMA … TO the role, or connect as its owner")
	}
	return storeError(fault.CodeDatabaseSchemaNotFound, "no schema of the connection's search_path exists ("+path+")").
		With("database", where).With("searchPath", path).
		WithUserAction("create the schema (CREATE SCHEMA …) or correct search_path in the URL")
}

// searchPathNames splits a search_path setting into schema names (quotes
// removed; "$user" kept as written, it matches no schema name).
func searchPathNames(path string) []string {
	var out []string
	for _, p := range strings.Split(path, ",") {
		p = strings.TrimSpace(p)
		if len(p) >= 2 && p[0] == '"' && p[len(p)-1] == '"' {
			p = strings.ReplaceAll(p[1:len(p)-1], `""`, `"`)
		}
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// checkInitialised refuses, for a command that never migrates, a schema
// without our tables or at another version.
func (b *postgresBackend) checkInitialised(ctx context.Context) error {
	var version *string
	err := b.pool.QueryRow(ctx, `SELECT (SELECT value FROM managed_metadata WHERE key = 'schema_version')`).Scan(&version)
	if pgCode(err) == "42P01" { // undefined_table
		return fault.From(checkInitialised(false, "")).With("database", b.url)
	}
	if err != nil {
		return err
	}
	v := ""
	if version != nil {
		v = *version
	}
	if err := checkInitialised(true, v); err != nil {
		return fault.From(err).With("database", b.url)
	}
	return nil
}

// pgFault names why PostgreSQL refused or could not be reached, from the
// server's SQLSTATE or the dial error: a wrong role or password, a
// database that does not exist, a missing privilege, a server nobody
// answers for at that host and port. The password is never in the text.
func pgFault(err error, cfg *pgxpool.Config, where, doing string) error {
	var f *fault.Error
	if errors.As(err, &f) && f.Code != fault.CodeDatabaseError || errors.Is(err, context.Canceled) {
		return err
	}
	hide := redact.New(cfg.ConnConfig.Password)
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		detail := hide.Text(pe.Message)
		switch {
		case pe.Code == "28P01" || pe.Code == "28000":
			return fault.Wrap(fault.Invalid, fault.CodeDatabaseAuthFailed, "PostgreSQL refused the role or its password: "+detail, err).
				With("database", where).With("sqlstate", pe.Code).With("user", cfg.ConnConfig.User)
		case pe.Code == "3D000":
			return fault.Wrap(fault.Invalid, fault.CodeDatabaseNotFound, "the PostgreSQL database does not exist: "+detail, err).
				With("database", where).With("sqlstate", pe.Code)
		case pe.Code == "3F000":
			return fault.Wrap(fault.Invalid, fault.CodeDatabaseSchemaNotFound, "no schema of the connection's search_path exists: "+detail, err).
				With("database", where).With("sqlstate", pe.Code)
		case pe.Code == "42501":
			return fault.Wrap(fault.Invalid, fault.CodeDatabasePermissionDenied, "the role lacks a privilege the store needs: "+detail, err).
				With("database", where).With("sqlstate", pe.Code).With("user", cfg.ConnConfig.User)
		case pe.Code == "25006": // read_only_sql_transaction: a standby
			return fault.Wrap(fault.Invalid, fault.CodeDatabaseReadOnly, "the PostgreSQL server is read-only (a standby?): "+detail, err).
				With("database", where).With("sqlstate", pe.Code)
		case strings.HasPrefix(pe.Code, "57P") || pe.Code == "53300":
			return fault.Wrap(fault.Transport, fault.CodeDatabaseUnreachable, "the PostgreSQL server is not accepting connections: "+detail, err).
				With("database", where).With("sqlstate", pe.Code)
		}
		if f != nil {
			return f.With("sqlstate", pe.Code)
		}
		return fault.Wrap(fault.Transport, fault.CodeDatabaseError, doing+": "+detail, err).With("database", where).With("sqlstate", pe.Code)
	}
	if f != nil {
		return err
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || errors.Is(err, context.DeadlineExceeded) {
		addr := net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port)))
		return fault.Wrap(fault.Transport, fault.CodeDatabaseUnreachable, "cannot reach the PostgreSQL server at "+addr+": "+hide.Text(innermost(err).Error()), err).
			With("database", where).WithUserAction("check the host and port in the URL and that the server is running")
	}
	return fault.Wrap(fault.Transport, fault.CodeDatabaseError, doing+": "+hide.Text(err.Error()), err).With("database", where)
}

// innermost is the deepest cause of a wrapped error (the dial error under
// pgx's connect error).
func innermost(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
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
		return fault.Wrap(fault.Transport, fault.CodeDatabaseError, "cannot connect to PostgreSQL", err)
	}
	defer lock.Release()
	if _, err := lock.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrationLockKey)); err != nil {
		return fault.Wrap(fault.Transport, fault.CodeDatabaseError, "cannot lock the schema for migration", err)
	}
	defer lock.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(migrationLockKey))
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fault.Wrap(fault.Transport, fault.CodeDatabaseError, "cannot migrate River's tables", err)
	}
	t, err := b.begin(ctx)
	if err != nil {
		return fault.Wrap(fault.Transport, fault.CodeDatabaseError, "cannot begin the migration", err)
	}
	defer t.rollback()
	var hasMetadata bool
	if err := t.queryRow(ctx, `SELECT to_regclass('managed_metadata') IS NOT NULL`).Scan(&hasMetadata); err != nil {
		return fault.Wrap(fault.Transport, fault.CodeDatabaseError, "cannot read the schema", err)
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

package history

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/solopi-dev/solopi/fault"
)

// schemaVersion is the newest schema this solopi writes (PRAGMA
// user_version); migrations[v-1] takes a store from version v-1 to v.
const schemaVersion = 1

var migrations = []string{
	// 1: one row per attempt. A run of a case is its attempts in one
	// batch (on one phone when the suite binds cases to phones: shard).
	`CREATE TABLE attempts (
		id               INTEGER PRIMARY KEY,
		batch_id         TEXT    NOT NULL,
		case_name        TEXT    NOT NULL,
		case_fingerprint TEXT    NOT NULL DEFAULT '',
		serial           TEXT    NOT NULL,
		model            TEXT    NOT NULL DEFAULT '',
		shard            TEXT    NOT NULL DEFAULT '',
		attempt          INTEGER NOT NULL CHECK (attempt >= 1),
		verdict          TEXT    NOT NULL CHECK (verdict IN ('passed', 'failed', 'error', 'cancelled')),
		error_code       TEXT    NOT NULL DEFAULT '',
		started_at_ms    INTEGER NOT NULL,
		ended_at_ms      INTEGER NOT NULL,
		duration_ms      INTEGER NOT NULL CHECK (duration_ms >= 0)
	);
	CREATE INDEX attempts_by_case ON attempts (case_name, id);`,
}

// identity is what a database file says about itself.
type identity struct {
	version int
	// fresh: no tables and no application id (a new or empty file).
	fresh bool
}

// identify reads the application id, the schema version and whether the
// file holds tables, and refuses a file that is not ours or is newer.
func (s *Store) identify(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (identity, error) {
	// One statement, one snapshot: a writer creating the store meanwhile
	// is seen entirely or not at all.
	var app, version, tables int
	if err := q.QueryRowContext(ctx, `SELECT (SELECT application_id FROM pragma_application_id), (SELECT user_version FROM pragma_user_version),
		(SELECT count(*) FROM sqlite_master)`).Scan(&app, &version, &tables); err != nil {
		return identity{}, classify(err, s.path, "cannot read the history")
	}
	switch {
	case app == 0 && tables == 0 && version == 0:
		return identity{fresh: true}, nil
	case app != applicationID:
		return identity{}, fault.Usage(fault.CodeHistoryNotOurs, "the file is a SQLite database of another application, not a solopi results history").
			With("history", s.path).WithUserAction("Point --history at a new file.")
	case version > schemaVersion:
		return identity{}, fault.Usagef(fault.CodeHistorySchemaNewer, "the history was written by a newer solopi (schema %d; this one knows %d)", version, schemaVersion).
			With("history", s.path).WithUserAction("Use the newer solopi, or point --history at another file.")
	}
	return identity{version: version}, nil
}

// migrate brings the schema to schemaVersion in one immediate
// transaction, so two processes opening a new store do not both create it.
func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return classify(err, s.path, "cannot open the history")
	}
	defer tx.Rollback()
	id, err := s.identify(ctx, tx)
	if err != nil {
		return err
	}
	if id.version == schemaVersion {
		return nil
	}
	for v := id.version; v < schemaVersion; v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return classify(err, s.path, fmt.Sprintf("cannot migrate the history to schema %d", v+1))
		}
	}
	for _, p := range []string{fmt.Sprintf(`PRAGMA application_id = %d`, applicationID), fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion)} {
		if _, err := tx.ExecContext(ctx, p); err != nil {
			return classify(err, s.path, "cannot migrate the history")
		}
	}
	if err := tx.Commit(); err != nil {
		return classify(err, s.path, "cannot migrate the history")
	}
	return nil
}

// readOnlyError is the refusal of a write to a store opened for reading.
func (s *Store) readOnlyError() error {
	return fault.New(fault.Internal, fault.CodeHistoryReadOnly, "the history was opened read-only").With("history", s.path)
}

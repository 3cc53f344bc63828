package managed

import (
	"context"
	"fmt"
	"github.com/solopi-dev/solopi/fault"
	"strconv"
)

// Our tables live beside River's and are versioned on their own: the
// managed_metadata row "schema_version" holds the highest migration applied.
// A migration is one DDL script per dialect; both dialects keep the same
// table and column names so that every query is shared, and differ only in
// the event sequence column and in how triggers are written.

type migration struct {
	version  int
	sqlite   string
	postgres string
}

// v1Tables are the tables of schema version 1 in both dialects: every
// number is BIGINT, which SQLite stores as a 64-bit INTEGER.
const v1Tables = `
CREATE TABLE managed_metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE managed_devices (
	device_id TEXT PRIMARY KEY,
	serial TEXT NOT NULL UNIQUE,
	platform TEXT NOT NULL,
	api_level BIGINT NOT NULL,
	capabilities_json TEXT NOT NULL,
	labels_json TEXT NOT NULL,
	health TEXT NOT NULL,
	last_seen_ms BIGINT NOT NULL,
	generation BIGINT NOT NULL DEFAULT 0,
	lease_id TEXT,
	lease_task_id TEXT,
	lease_shard_id TEXT,
	lease_expires_ms BIGINT,
	consecutive_failures BIGINT NOT NULL DEFAULT 0,
	circuit_open_until_ms BIGINT NOT NULL DEFAULT 0,
	created_at_ms BIGINT NOT NULL,
	updated_at_ms BIGINT NOT NULL
);
CREATE TABLE managed_tasks (
	task_id TEXT PRIMARY KEY,
	idempotency_key TEXT NOT NULL UNIQUE,
	request_fingerprint TEXT NOT NULL,
	owner_hash TEXT NOT NULL,
	plan_json TEXT NOT NULL,
	decisions_json TEXT NOT NULL,
	plan_fingerprint TEXT NOT NULL,
	max_retries BIGINT NOT NULL,
	lease_duration_ms BIGINT NOT NULL,
	retention_ms BIGINT NOT NULL,
	status TEXT NOT NULL,
	cancel_requested BIGINT NOT NULL DEFAULT 0,
	event_count BIGINT NOT NULL DEFAULT 0,
	created_at_ms BIGINT NOT NULL,
	updated_at_ms BIGINT NOT NULL,
	finished_at_ms BIGINT
);
CREATE TABLE managed_shards (
	shard_id TEXT PRIMARY KEY,
	task_id TEXT NOT NULL REFERENCES managed_tasks(task_id),
	target_id TEXT NOT NULL,
	target_index BIGINT NOT NULL,
	replica_index BIGINT NOT NULL,
	selector_json TEXT NOT NULL,
	status TEXT NOT NULL,
	attempt_count BIGINT NOT NULL DEFAULT 0,
	released_count BIGINT NOT NULL DEFAULT 0,
	current_attempt_id TEXT,
	assigned_device_id TEXT,
	owner_generation BIGINT,
	lease_id TEXT,
	lease_expires_ms BIGINT,
	next_attempt_ms BIGINT NOT NULL DEFAULT 0,
	river_job_id BIGINT,
	result_status TEXT,
	failure_category TEXT,
	created_at_ms BIGINT NOT NULL,
	updated_at_ms BIGINT NOT NULL,
	finished_at_ms BIGINT,
	UNIQUE (task_id, target_index, replica_index)
);
CREATE TABLE managed_attempts (
	attempt_id TEXT PRIMARY KEY,
	task_id TEXT NOT NULL REFERENCES managed_tasks(task_id),
	shard_id TEXT NOT NULL REFERENCES managed_shards(shard_id),
	attempt_number BIGINT NOT NULL,
	worker_id TEXT NOT NULL,
	worker_host TEXT,
	device_id TEXT NOT NULL,
	serial TEXT NOT NULL,
	lease_id TEXT NOT NULL UNIQUE,
	owner_generation BIGINT NOT NULL,
	lease_expires_ms BIGINT NOT NULL,
	status TEXT NOT NULL,
	failure_category TEXT,
	artifacts_dir TEXT,
	report_path TEXT,
	report_json TEXT,
	verification_outcome_fingerprint TEXT,
	evidence_digest TEXT,
	evidence_purged_at_ms BIGINT,
	created_at_ms BIGINT NOT NULL,
	started_at_ms BIGINT,
	finished_at_ms BIGINT,
	UNIQUE (shard_id, attempt_number)
);
CREATE TABLE managed_events (
	sequence %s,
	task_id TEXT NOT NULL REFERENCES managed_tasks(task_id),
	task_sequence BIGINT NOT NULL,
	shard_id TEXT,
	attempt_id TEXT,
	event_type TEXT NOT NULL,
	timestamp_ms BIGINT NOT NULL,
	content_json TEXT NOT NULL,
	UNIQUE (task_id, task_sequence)
);
CREATE INDEX managed_shards_task ON managed_shards (task_id, target_index, replica_index);
CREATE INDEX managed_attempts_active ON managed_attempts (status, lease_expires_ms);
CREATE INDEX managed_attempts_shard ON managed_attempts (shard_id, attempt_number);
`

var migrations = []migration{{
	version: 1,
	sqlite: fmt.Sprintf(v1Tables, "INTEGER PRIMARY KEY AUTOINCREMENT") + `
CREATE TRIGGER managed_tasks_terminal_immutable BEFORE UPDATE OF status ON managed_tasks
WHEN OLD.status IN ('passed','failed','not_tested','cancelled') AND NEW.status <> OLD.status
BEGIN SELECT RAISE(ABORT, 'terminal task state is immutable'); END;
CREATE TRIGGER managed_shards_terminal_immutable BEFORE UPDATE OF status ON managed_shards
WHEN OLD.status IN ('passed','failed','not_tested','cancelled') AND NEW.status <> OLD.status
BEGIN SELECT RAISE(ABORT, 'terminal shard state is immutable'); END;
CREATE TRIGGER managed_events_no_update BEFORE UPDATE ON managed_events
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
CREATE TRIGGER managed_events_no_delete BEFORE DELETE ON managed_events
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
`,
	postgres: fmt.Sprintf(v1Tables, "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY") + `
CREATE FUNCTION managed_terminal_immutable() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
	IF OLD.status IN ('passed','failed','not_tested','cancelled') AND NEW.status <> OLD.status THEN
		RAISE EXCEPTION 'terminal % state is immutable', TG_TABLE_NAME;
	END IF;
	RETURN NEW;
END $fn$;
CREATE TRIGGER managed_tasks_terminal_immutable BEFORE UPDATE OF status ON managed_tasks
	FOR EACH ROW EXECUTE FUNCTION managed_terminal_immutable();
CREATE TRIGGER managed_shards_terminal_immutable BEFORE UPDATE OF status ON managed_shards
	FOR EACH ROW EXECUTE FUNCTION managed_terminal_immutable();
CREATE FUNCTION managed_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
	RAISE EXCEPTION 'events are append-only';
END $fn$;
CREATE TRIGGER managed_events_append_only BEFORE UPDATE OR DELETE ON managed_events
	FOR EACH ROW EXECUTE FUNCTION managed_events_append_only();
`,
}}

// migrate applies every migration newer than the database's schema version
// inside t. hasMetadata says whether managed_metadata exists already.
func migrate(ctx context.Context, t txn, dialect string, hasMetadata bool) error {
	current := 0
	if hasMetadata {
		var v string
		if err := t.queryRow(ctx, `SELECT value FROM managed_metadata WHERE key = 'schema_version'`).Scan(&v); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return storeError(fault.CodeUnsupportedSchema, "the managed database's schema version is unreadable")
		}
		current = n
	}
	if current > SchemaVersion {
		return storeError(fault.CodeUnsupportedSchema, "the managed database was written by a newer solopi (schema version "+strconv.Itoa(current)+")").
			WithUserAction("upgrade solopi, or point --database at another file")
	}
	for _, m := range migrations {
		if m.version <= current {
			continue
		}
		script := m.sqlite
		if dialect == "postgres" {
			script = m.postgres
		}
		// Both drivers run a script of several statements when it has no
		// arguments (pgx through the simple protocol).
		if _, err := t.exec(ctx, script); err != nil {
			return fmt.Errorf("managed migration %d: %w", m.version, err)
		}
		if _, err := t.exec(ctx, `INSERT INTO managed_metadata (key, value) VALUES ('schema_version', $1)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, strconv.Itoa(m.version)); err != nil {
			return fmt.Errorf("record schema version: %w", err)
		}
	}
	return nil
}

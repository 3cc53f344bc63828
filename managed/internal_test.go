package managed

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/pgtest"
)

func TestBackoffAndRetryPolicy(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]time.Duration{0: time.Second, 1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second,
		6: 32 * time.Second, 7: time.Minute, 8: time.Minute, 100: time.Minute} {
		if got := Backoff(n); got != want {
			t.Errorf("Backoff(%d) = %v, want %v", n, got, want)
		}
	}
	args, _ := json.Marshal(ShardArgs{TaskID: "t", ShardID: "s", AttemptBase: 2})
	at := RetryPolicy{}.NextRetry(&rivertype.JobRow{Kind: KindShard, Attempt: 1, EncodedArgs: args})
	if d := time.Until(at); d < 3*time.Second || d > 4*time.Second {
		t.Fatalf("the retry after counted attempt 3 comes in %v, want 4s", d)
	}
}

func TestUpstreamMatrixFixture(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/android-agent-matrix.json")
	if err != nil {
		t.Fatal(err)
	}
	v, err := canonjson.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	targets, err := expandMatrix(v)
	if err != nil {
		t.Fatal(err)
	}
	sel, _ := canonjson.Marshal(targets[0].Selector)
	if len(targets) != 1 || targets[0].TargetID != "android-agent" || string(sel) != `{"capabilities":["agent","verification"],"platform":"android"}` {
		t.Fatalf("targets %+v selector %s", targets, sel)
	}
}

func FuzzExpandMatrix(f *testing.F) {
	f.Add([]byte(`[{"id":"a","replicas":2,"selector":{"platform":"Android","minApiLevel":30,"labels":{"k":"v"}}}]`))
	f.Add([]byte(`[{"id":"a"},{"id":"b","selector":{"deviceIds":["x"],"serials":["y"],"capabilities":["c"],"maxApiLevel":1000}}]`))
	f.Add([]byte(`{"id":"a"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := canonjson.Decode(b)
		if err != nil {
			return
		}
		targets, err := expandMatrix(v)
		if err != nil {
			if fault.From(err).Kind != fault.Invalid {
				t.Fatalf("a bad matrix gave a %v error: %v", fault.From(err).Kind, err)
			}
			return
		}
		if len(targets) == 0 || len(targets) > maxMatrixShards {
			t.Fatalf("%d shards", len(targets))
		}
		for _, tg := range targets {
			if _, err := canonjson.Marshal(tg.Selector); err != nil {
				t.Fatal(err)
			}
			var s selector
			raw, _ := json.Marshal(tg.Selector)
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatalf("stored selector %s does not decode: %v", raw, err)
			}
		}
	})
}

// rawExec runs a statement in a write transaction that it rolls back,
// bypassing the store.
func rawExec(t *testing.T, s Store, q string, args ...any) error {
	t.Helper()
	st := s.(*store)
	tx, err := st.be.begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.rollback()
	_, err = tx.exec(context.Background(), q, args...)
	return err
}

// The database itself refuses to move a terminal task or shard and to
// rewrite or delete an event, whatever code runs against it.
func TestDatabaseGuards(t *testing.T) {
	t.Parallel()
	for name, database := range map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return filepath.Join(t.TempDir(), "m.sqlite") },
		"postgres": func(t *testing.T) string { return pgtest.Schema(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, err := Open(ctx, database(t), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.RegisterDevice(ctx, DeviceSpec{DeviceID: "d", Serial: "s", APILevel: 30}); err != nil {
				t.Fatal(err)
			}
			sub := NewSubmission()
			sub.Plan = map[string]any{"schemaVersion": PlanSchema, "planFingerprint": strings.Repeat("a", 64)}
			sub.Matrix, sub.IdempotencyKey, sub.OwnerToken = []any{map[string]any{"id": "t"}}, "k", "owner-token-1234567890"
			task, err := s.Submit(ctx, sub)
			if err != nil {
				t.Fatal(err)
			}
			jobs, _ := s.ShardJobs(ctx, task.TaskID)
			res, err := s.Claim(ctx, ClaimRequest{JobID: jobs[0].JobID, TaskID: task.TaskID, ShardID: jobs[0].ShardID, WorkerID: "w", Serials: []string{"s"}})
			if err != nil || res.Assignment == nil {
				t.Fatalf("claim %+v %v", res, err)
			}
			secret := "Bearer super-secret-credential"
			if _, err := s.Complete(ctx, res.Assignment.Identity(), Completion{Status: "passed",
				Report: map[string]any{"ownerToken": "x", "note": secret}}); err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{
				`UPDATE managed_tasks SET status = 'queued' WHERE task_id = $1`,
				`UPDATE managed_shards SET status = 'queued' WHERE task_id = $1`,
				`UPDATE managed_events SET event_type = 'x' WHERE task_id = $1`,
				`DELETE FROM managed_events WHERE task_id = $1`,
			} {
				if err := rawExec(t, s, q, task.TaskID); err == nil {
					t.Errorf("the database accepted %s", q)
				}
			}
			var stored string
			if err := s.(*store).be.reader().queryRow(ctx, `SELECT report_json FROM managed_attempts WHERE task_id = $1`, task.TaskID).Scan(&stored); err != nil {
				t.Fatal(err)
			}
			if stored != `{"note":"Bearer [redacted]"}` {
				t.Fatalf("stored report %s", stored)
			}
		})
	}
}

// createUpstream writes a database shaped like SoloPi's own host CLI's.
func createUpstream(t *testing.T, path string, extra string) []byte {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`PRAGMA journal_mode = WAL`,
		`CREATE TABLE metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
		`INSERT INTO metadata VALUES ('schema_version', '1')`,
		`CREATE TABLE tasks (task_id TEXT PRIMARY KEY, status TEXT NOT NULL)`,
		extra,
	} {
		if q == "" {
			continue
		}
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRefusesForeignSQLiteDatabases(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	upstream := filepath.Join(dir, "upstream.sqlite")
	before := createUpstream(t, upstream, "")
	_, err := Open(ctx, upstream, Options{})
	if fault.CodeOf(err) != fault.CodeUnsupportedSchema || fault.KindOf(err) != fault.Invalid {
		t.Fatalf("opening an upstream database: %v", err)
	}
	after, _ := os.ReadFile(upstream)
	if !bytes.Equal(before, after) {
		t.Fatal("the upstream database was modified")
	}

	other := filepath.Join(dir, "other.sqlite")
	db, _ := sql.Open("sqlite", other)
	db.Exec(`CREATE TABLE invoices (id INTEGER)`)
	db.Close()
	if _, err := Open(ctx, other, Options{}); fault.CodeOf(err) != fault.CodeUnsupportedSchema {
		t.Fatalf("opening another application's database: %v", err)
	}

	newer := filepath.Join(dir, "newer.sqlite")
	s, err := Open(ctx, newer, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := s.(*store)
	tx, _ := st.be.begin(ctx)
	tx.exec(ctx, `UPDATE managed_metadata SET value = '99' WHERE key = 'schema_version'`)
	tx.commit()
	s.Close()
	if _, err := Open(ctx, newer, Options{}); fault.CodeOf(err) != fault.CodeUnsupportedSchema {
		t.Fatalf("opening a newer schema: %v", err)
	}

	// A second open of our own database migrates nothing and works.
	again := filepath.Join(dir, "again.sqlite")
	for range 2 {
		s, err := Open(ctx, again, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if h, err := s.Health(ctx); err != nil || h.Database != again || h.Backend != "sqlite" {
			t.Fatalf("health %+v %v", h, err)
		}
		s.Close()
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatal(err)
	}
}

func TestRedactURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"postgres://u:secret@h:5432/db?sslmode=disable":           "postgres://u@h:5432/db?sslmode=disable",
		"postgresql://h/db?password=secret&search_path=farm":      "postgresql://h/db?search_path=farm",
		"postgres://postgres@127.0.0.1:5432/test?sslmode=disable": "postgres://postgres@127.0.0.1:5432/test?sslmode=disable",
	} {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%s) = %s, want %s", in, got, want)
		}
	}
}

// behindDB is a database whose clock runs ten minutes behind the hosts
// that use it: every host's own clock is ten minutes ahead of the farm's.
type behindDB struct{ backend }

const skew = 10 * time.Minute

func (b behindDB) nowQuery() string {
	return strings.Replace(b.backend.nowQuery(), "SELECT ", "SELECT -"+strconv.FormatInt(skew.Milliseconds(), 10)+" + ", 1)
}

// TestLeaseClockIsTheDatabases: the hosts' clocks run ten minutes ahead of
// the database's, far past a 60 s lease. A host that judged expiry by its
// own clock would expire the lease at once; the store judges by the
// database's, so another host's recovery leaves the heartbeating lease
// alone, and the lease's times are the database's.
func TestLeaseClockIsTheDatabases(t *testing.T) {
	t.Parallel()
	for name, db := range map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return filepath.Join(t.TempDir(), "managed.sqlite") },
		"postgres": func(t *testing.T) string { return pgtest.Schema(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			database := db(t)
			open := func() *store {
				s, err := Open(context.Background(), database, Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				st := s.(*store)
				st.be = behindDB{st.be}
				return st
			}
			ctx := context.Background()
			hostA, hostB := open(), open()
			if _, err := hostA.RegisterDevice(ctx, DeviceSpec{DeviceID: "pixel-8", Serial: "SERIAL-1", APILevel: 35}); err != nil {
				t.Fatal(err)
			}
			sub := NewSubmission()
			sub.Plan = map[string]any{"schemaVersion": PlanSchema, "planFingerprint": strings.Repeat("a", 64)}
			sub.Matrix = []any{map[string]any{"id": "android"}}
			sub.IdempotencyKey, sub.OwnerToken, sub.LeaseDurationMs = "ci-1", "owner-token-1234567890abcdef", 60_000
			task, err := hostA.Submit(ctx, sub)
			if err != nil {
				t.Fatal(err)
			}
			jobs, err := hostA.ShardJobs(ctx, task.TaskID)
			if err != nil {
				t.Fatal(err)
			}
			res, err := hostA.Claim(ctx, ClaimRequest{JobID: jobs[0].JobID, TaskID: task.TaskID, ShardID: jobs[0].ShardID,
				WorkerID: "worker-a", Serials: []string{"SERIAL-1"}, Host: "host-a"})
			if err != nil || res.Assignment == nil {
				t.Fatalf("claim: %+v %v", res, err)
			}
			a := res.Assignment
			hostNow := time.Now().UnixMilli()
			if a.LeaseExpiresAt > hostNow-skew.Milliseconds()+60_000+5_000 || a.LeaseExpiresAt < hostNow-skew.Milliseconds() {
				t.Fatalf("leaseExpiresAt %d is not the database's clock + 60 s (host clock %d, database %v behind)", a.LeaseExpiresAt, hostNow, skew)
			}
			if err := hostA.Start(ctx, a.Identity()); err != nil {
				t.Fatal(err)
			}
			rec, err := hostB.Recover(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Requeued != 0 || rec.Terminated != 0 {
				t.Fatalf("host B's recovery expired a live lease: %+v", rec)
			}
			if _, err := hostA.Heartbeat(ctx, a.Identity()); err != nil {
				t.Fatalf("host A's heartbeat: %v", err)
			}
			if st, err := hostB.Status(ctx, task.TaskID); err != nil || st.ShardCounts["running"] != 1 {
				t.Fatalf("status %+v %v", st, err)
			}
		})
	}
}

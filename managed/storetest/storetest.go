// Package storetest is the conformance suite every managed.Store backend
// must pass (SQLite and PostgreSQL), in the manner of River's
// riverdrivertest: one set of behaviours, run against each backend on a
// fresh database per test, with a fake clock wherever time matters.
package storetest

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/managed"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx", for raw
	_ "modernc.org/sqlite"             // database/sql driver "sqlite", for raw
)

// fresh returns the --database value of a new, empty database for one test
// (a SQLite path in a temporary directory, or a PostgreSQL URL whose
// search_path selects a new schema).
type fresh func(t *testing.T) string

// Run runs the whole suite, its cases in parallel: fresh must give each a
// database of its own.
func Run(t *testing.T, fresh fresh) {
	for _, c := range []struct {
		name string
		fn   func(t *testing.T, h *harness)
	}{
		{"Devices", testDevices},
		{"SubmitValidation", testSubmitValidation},
		{"SubmitIdempotency", testSubmitIdempotency},
		{"SubmitWarnsWhenNoDeviceCanRunATarget", testPlacementWarnings},
		{"ClaimMatchesSelector", testClaimMatchesSelector},
		{"ClaimOutcomes", testClaimOutcomes},
		{"ClaimIsFencedByGeneration", testReclaimFencesOldWorker},
		{"LateHeartbeatRefusedBeforeRecovery", testLateHeartbeat},
		{"HeartbeatExtendsLease", testHeartbeatExtends},
		{"LeasesJudgedByTheDatabaseClock", testDatabaseClock},
		{"RetryBackoffAndExhaustion", testRetryExhaustion},
		{"BackoffDoubles", testBackoffDoubles},
		{"VerdictsAreFinal", testVerdictsFinal},
		{"Circuit", testCircuit},
		{"MatrixAggregate", testMatrixAggregate},
		{"ConcurrentClaims", testConcurrentClaims},
		{"Cancel", testCancel},
		{"RecoveryAfterRestart", testRecoveryAfterRestart},
		{"ReleaseDoesNotCountAttempt", testRelease},
		{"AbandonedCarrier", testAbandonedCarrier},
		{"OrphanedCarrier", testOrphanedCarrier},
		{"EventContiguityUnderConcurrency", testEventContiguity},
		{"Redaction", testRedaction},
		{"TerminalImmutability", testTerminalImmutability},
		{"Retention", testRetention},
		{"PurgeStaysInsideTheRoot", testPurgeSymlinks},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // every case has its own database
			c.fn(t, newHarness(t, fresh(t)))
		})
	}
}

// Start is the fake clock's starting time.
var Start = time.UnixMilli(1_700_000_000_000)

// Owner is the owner token most tests submit with.
const Owner = "owner-token-1234567890abcdef"

type harness struct {
	ctx      context.Context
	database string
	clock    *clock.Fake
	s        managed.Store
}

func newHarness(t *testing.T, database string) *harness {
	h := &harness{ctx: context.Background(), database: database, clock: clock.NewFake(Start)}
	h.s = h.open(t)
	return h
}

// open opens another store on the same database (a restart).
func (h *harness) open(t *testing.T) managed.Store {
	t.Helper()
	s, err := managed.Open(h.ctx, h.database, managed.Options{Clock: h.clock})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// openProduction opens another store on the database as every command
// does: no clock of its own, so the store reads the database's.
func (h *harness) openProduction(t *testing.T) managed.Store {
	t.Helper()
	s, err := managed.Open(h.ctx, h.database, managed.Options{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// databaseNow reads the database's clock directly, in Unix milliseconds.
func (h *harness) databaseNow(t *testing.T) int64 {
	t.Helper()
	db, query := h.rawDB(t), `SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)`
	defer db.Close()
	if managed.IsPostgresURL(h.database) {
		query = `SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint`
	}
	var ms int64
	if err := db.QueryRowContext(h.ctx, query).Scan(&ms); err != nil {
		t.Fatal(err)
	}
	return ms
}

func (h *harness) statusOn(t *testing.T, s managed.Store, taskID string) managed.TaskStatus {
	t.Helper()
	st, err := s.Status(h.ctx, taskID)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func (h *harness) rawDB(t *testing.T) *sql.DB {
	t.Helper()
	driver, dsn := "sqlite", "file:"+h.database+"?_pragma=busy_timeout(10000)"
	if managed.IsPostgresURL(h.database) {
		driver, dsn = "pgx", h.database
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// Plan is a minimal verification plan with the given fingerprint.
func Plan(fp string) map[string]any {
	return map[string]any{
		"schemaVersion":   managed.PlanSchema,
		"planFingerprint": fp,
		"intent":          map[string]any{"requirement": map[string]any{"id": "managed-counter"}},
	}
}

// Matrix is one target with replicas and a selector.
func Matrix(replicas int, selector map[string]any) []any {
	if selector == nil {
		selector = map[string]any{"platform": "android"}
	}
	return []any{map[string]any{"id": "android-main", "replicas": replicas, "selector": selector}}
}

// raw runs one statement on the database directly, beside the store: the
// suite's only way to leave River's tables as a process that died would.
func (h *harness) raw(t *testing.T, query string, args ...any) {
	t.Helper()
	db := h.rawDB(t)
	defer db.Close()
	if _, err := db.ExecContext(h.ctx, query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func (h *harness) register(t *testing.T, id, serial string, mutate ...func(*managed.DeviceSpec)) managed.Device {
	t.Helper()
	spec := managed.DeviceSpec{DeviceID: id, Serial: serial, APILevel: 35,
		Capabilities: []string{"agent", "verification"}, Labels: map[string]string{"tier": "physical"}}
	for _, m := range mutate {
		m(&spec)
	}
	d, err := h.s.RegisterDevice(h.ctx, spec)
	if err != nil {
		t.Fatalf("register %s: %v", id, err)
	}
	return d
}

func (h *harness) submission(mutate ...func(*managed.Submission)) managed.Submission {
	sub := managed.NewSubmission()
	sub.Plan = Plan(strings.Repeat("a", 64))
	sub.Matrix = Matrix(1, nil)
	sub.IdempotencyKey = "ci-build-1"
	sub.OwnerToken = Owner
	sub.LeaseDurationMs = 1000
	sub.RetentionMs = 10_000
	for _, m := range mutate {
		m(&sub)
	}
	return sub
}

func (h *harness) submit(t *testing.T, mutate ...func(*managed.Submission)) managed.Task {
	t.Helper()
	task, err := h.s.Submit(h.ctx, h.submission(mutate...))
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	return task
}

// farm registers n devices and submits a task of n replicas; it returns the
// task, its shards' jobs and the devices' serials.
func (h *harness) farm(t *testing.T, n int) (managed.Task, []managed.ShardJob, []string) {
	t.Helper()
	for i := range n {
		h.register(t, "device-"+string(rune('a'+i)), "SERIAL-"+string(rune('a'+i)))
	}
	task := h.submit(t, func(s *managed.Submission) { s.Matrix = Matrix(n, nil) })
	jobs, err := h.s.ShardJobs(h.ctx, task.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	return task, jobs, h.serials(t)
}

// serials lists what a worker reaches: every registered device.
func (h *harness) serials(t *testing.T) []string {
	t.Helper()
	ds, err := h.s.Devices(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range ds {
		out = append(out, d.Serial)
	}
	return out
}

// tryClaim claims the first queued shard of a task through its River job.
func (h *harness) tryClaim(t *testing.T, taskID, worker string, serials []string) managed.ClaimResult {
	t.Helper()
	jobs, err := h.s.ShardJobs(h.ctx, taskID)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.Status != "queued" {
			continue
		}
		res, err := h.s.Claim(h.ctx, managed.ClaimRequest{JobID: j.JobID, TaskID: taskID, ShardID: j.ShardID, WorkerID: worker, Serials: serials})
		if err != nil {
			t.Fatalf("claim: %v", err)
		}
		return res
	}
	t.Fatalf("task %s has no queued shard", taskID)
	return managed.ClaimResult{}
}

func (h *harness) claim(t *testing.T, taskID, worker string) *managed.Assignment {
	t.Helper()
	res := h.tryClaim(t, taskID, worker, h.serials(t))
	if res.Assignment == nil {
		t.Fatalf("claim by %s: no assignment (%s, wait %v)", worker, res.Reason, res.Wait)
	}
	return res.Assignment
}

func (h *harness) complete(t *testing.T, a *managed.Assignment, status string) managed.Outcome {
	t.Helper()
	out, err := h.s.Complete(h.ctx, a.Identity(), managed.Completion{Status: status,
		Report: map[string]any{"outcomeFingerprint": strings.Repeat("c", 64)}, EvidenceDigest: strings.Repeat("d", 64)})
	if err != nil {
		t.Fatalf("complete: %v", err)
	}
	return out
}

func (h *harness) status(t *testing.T, taskID string) managed.TaskStatus {
	t.Helper()
	st, err := h.s.Status(h.ctx, taskID)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func (h *harness) report(t *testing.T, taskID string) managed.Report {
	t.Helper()
	r, err := h.s.Report(h.ctx, taskID)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (h *harness) events(t *testing.T, taskID string) []managed.Event {
	t.Helper()
	evs, err := h.s.Events(h.ctx, taskID, 0)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// wantCode fails unless err is a *fault.Error with code.
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	if got := fault.CodeOf(err); got != code {
		t.Fatalf("got error %v (code %s), want %s", err, got, code)
	}
}

// wantContiguous checks that a task's events are numbered 1..n.
func wantContiguous(t *testing.T, evs []managed.Event) {
	t.Helper()
	for i, e := range evs {
		if e.TaskSequence != int64(i+1) {
			t.Fatalf("event %d has taskSequence %d; sequences: %v", i, e.TaskSequence, sequences(evs))
		}
	}
}

func sequences(evs []managed.Event) []int64 {
	var out []int64
	for _, e := range evs {
		out = append(out, e.TaskSequence)
	}
	return out
}

func eventTypes(evs []managed.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func wantEqual[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

func wantSlice[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

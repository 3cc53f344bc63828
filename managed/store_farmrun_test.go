package managed_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/internal/pgtest"
	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/managed/storetest"
)

// FailInfrastructure on both backends: a retry while the budget lasts
// (attempt retryable_failed, shard requeued), then the attempt and the
// shard not_tested with the report kept, the device blamed each time, and
// a stale identity refused.
func TestFailInfrastructure(t *testing.T) {
	t.Parallel()
	for name, db := range map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return filepath.Join(t.TempDir(), "managed.sqlite") },
		"postgres": func(t *testing.T) string { return pgtest.Schema(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			failInfrastructure(t, db(t))
		})
	}
}

func failInfrastructure(t *testing.T, database string) {
	ctx := context.Background()
	clk := clock.NewFake(storetest.Start)
	s, err := managed.Open(ctx, database, managed.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.RegisterDevice(ctx, managed.DeviceSpec{DeviceID: "phone", Serial: "sim-1", APILevel: 34}); err != nil {
		t.Fatal(err)
	}
	sub := managed.NewSubmission()
	sub.Plan, sub.Matrix = storetest.Plan(strings.Repeat("a", 64)), storetest.Matrix(1, nil)
	sub.IdempotencyKey, sub.OwnerToken, sub.MaxRetries = "infra", storetest.Owner, 1
	task, err := s.Submit(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	claim := func() *managed.Assignment {
		t.Helper()
		jobs, err := s.ShardJobs(ctx, task.TaskID)
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Claim(ctx, managed.ClaimRequest{JobID: jobs[0].JobID, TaskID: task.TaskID, ShardID: jobs[0].ShardID,
			WorkerID: "w", Serials: []string{"sim-1"}})
		if err != nil || res.Assignment == nil {
			t.Fatalf("claim %+v %v", res, err)
		}
		if err := s.Start(ctx, res.Assignment.Identity()); err != nil {
			t.Fatal(err)
		}
		return res.Assignment
	}
	f := s.(managed.InfraFailer)
	report := map[string]any{"status": "not_tested", "outcomeFingerprint": strings.Repeat("c", 64)}
	c := managed.Completion{Report: report, ReportPath: "/evidence/report.json", EvidenceDigest: strings.Repeat("d", 64)}

	first := claim()
	out, err := f.FailInfrastructure(ctx, first.Identity(), "replay_transport_failed", c)
	if err != nil || out.ShardStatus != "queued" || out.TaskStatus != "queued" {
		t.Fatalf("first failure %+v %v", out, err)
	}
	if _, err := f.FailInfrastructure(ctx, first.Identity(), "replay_transport_failed", c); err == nil {
		t.Fatal("a stale identity was accepted")
	}
	clk.Advance(managed.Backoff(1))
	second := claim()
	out, err = f.FailInfrastructure(ctx, second.Identity(), "replay_not_started", c)
	if err != nil || out.ShardStatus != "not_tested" || out.TaskStatus != "not_tested" {
		t.Fatalf("last failure %+v %v", out, err)
	}
	rep, err := s.Report(ctx, task.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	sh := rep.Shards[0]
	if sh.Status != "not_tested" || *sh.FailureCategory != "replay_not_started" || len(sh.Attempts) != 2 {
		t.Fatalf("shard %+v", sh)
	}
	if a := sh.Attempts[0]; a.Status != "retryable_failed" || *a.FailureCategory != "replay_transport_failed" {
		t.Errorf("first attempt %s", a.Status)
	}
	if a := sh.Attempts[1]; a.Status != "not_tested" || *a.FailureCategory != "replay_not_started" || a.ReportPath == nil ||
		*a.ReportPath != c.ReportPath || *a.VerificationOutcomeFingerprint != strings.Repeat("c", 64) || *a.EvidenceDigest != c.EvidenceDigest {
		t.Errorf("last attempt %+v", a)
	}
	d, err := s.Device(ctx, "phone")
	if err != nil || d.Leased || d.ConsecutiveFailures != 2 {
		t.Errorf("device %+v %v", d, err)
	}
	evs, err := s.Events(ctx, task.TaskID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var failed int
	for _, e := range evs {
		if e.Type == managed.EventAttemptFailed {
			failed++
		}
	}
	if failed != 2 || evs[len(evs)-1].Type != managed.EventTaskFinished {
		t.Errorf("events %d failed, last %s", failed, evs[len(evs)-1].Type)
	}
	// A refused category or digest writes nothing.
	if _, err := f.FailInfrastructure(ctx, second.Identity(), "bad category!", c); err == nil {
		t.Error("a bad category was accepted")
	}
}

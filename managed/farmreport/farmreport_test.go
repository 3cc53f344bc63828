package farmreport

import (
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/suitereport"
)

func p(s string) *string { return &s }
func n(v int64) *int64   { return &v }

// attempt is a finished attempt of the report; fp marks a Result Judge
// verdict (the attempt has an outcome fingerprint).
func attemptOf(number int64, serial, status, category string, fp bool, start, end int64) managed.ReportAttempt {
	a := managed.ReportAttempt{AttemptID: "attempt-" + serial, AttemptNumber: number, Serial: serial, Status: status,
		CreatedAt: start - 5, StartedAt: n(start), FinishedAt: n(end)}
	if category != "" {
		a.FailureCategory = p(category)
	}
	if fp {
		a.VerificationOutcomeFingerprint = p(strings.Repeat("a", 64))
	}
	return a
}

// Every way a shard's attempts can end maps to the batch's verdicts:
// product and infrastructure apart, a pass after a failure flaky, a pass
// after infrastructure errors passed, a shard with no finished attempt
// skipped (still running) or error (ended without one).
func TestSuite(t *testing.T) {
	t.Parallel()
	r := managed.Report{TaskID: "task-1", PlanFingerprint: strings.Repeat("b", 64), Status: "failed", Terminal: true,
		CreatedAt: 1_000, FinishedAt: n(60_000), Shards: []managed.ReportShard{
			{TargetID: "login", ReplicaIndex: 0, Status: "passed", Attempts: []managed.ReportAttempt{
				attemptOf(1, "p1", "retryable_failed", "replay_transport_failed", false, 2_000, 3_000),
				attemptOf(2, "p2", "passed", "", true, 4_000, 9_000)}},
			{TargetID: "counter", ReplicaIndex: 0, Status: "passed", Attempts: []managed.ReportAttempt{
				attemptOf(1, "p1", "failed", "oracle_mismatch", true, 10_000, 12_000),
				attemptOf(2, "p2", "passed", "", true, 13_000, 15_000)}},
			{TargetID: "counter", ReplicaIndex: 1, Status: "failed", Attempts: []managed.ReportAttempt{
				attemptOf(1, "p2", "failed", "oracle_mismatch", true, 16_000, 18_000)}},
			{TargetID: "phone", ReplicaIndex: 0, Status: "not_tested", FailureCategory: p("replay_not_started"), Attempts: []managed.ReportAttempt{
				attemptOf(1, "p1", "retryable_failed", "replay_not_started", false, 20_000, 21_000),
				attemptOf(2, "p1", "not_tested", "replay_not_started", true, 22_000, 23_000)}},
			{TargetID: "gone", ReplicaIndex: 0, Status: "not_tested", FailureCategory: p("shard_abandoned")},
			{TargetID: "later", ReplicaIndex: 0, Status: "running", Attempts: []managed.ReportAttempt{
				{AttemptNumber: 1, Serial: "p3", Status: "running", CreatedAt: 30_000}}},
		}}
	s := Suite(r)
	want := map[string]suitereport.Verdict{"login": suitereport.Passed, "counter-r0": suitereport.Flaky, "counter-r1": suitereport.Failed,
		"phone": suitereport.Error, "gone": suitereport.Error, "later": suitereport.Skipped}
	if len(s.Cases) != len(want) {
		t.Fatalf("%d cases", len(s.Cases))
	}
	for _, c := range s.Cases {
		if c.Verdict != want[c.Name] {
			t.Errorf("case %s: %s, want %s", c.Name, c.Verdict, want[c.Name])
		}
	}
	if c := s.Counts; c.Cases != 6 || c.Passed != 1 || c.Flaky != 1 || c.Failed != 1 || c.Error != 2 || c.Skipped != 1 || c.Attempts != 7 {
		t.Errorf("counts %+v", c)
	}
	if s.BatchID != "task-1" || s.Schema != suitereport.Schema || s.DurationMs != 59_000 || len(s.Devices) != 2 {
		t.Errorf("report %s %s %d, %d devices", s.BatchID, s.Schema, s.DurationMs, len(s.Devices))
	}
	if d := s.Devices[0]; d.Serial != "p1" || len(d.Timeline) != 4 || d.Timeline[0].Verdict != suitereport.Error {
		t.Errorf("phone p1 %+v", d)
	}
	if a := s.Cases[0].Attempts[0]; a.Verdict != suitereport.Error || a.ErrorCode != "replay_transport_failed" || a.DurationMs != 1_000 {
		t.Errorf("the infrastructure attempt %+v", a)
	}
	if f := s.Failure(); f == nil || f.Code != fault.CodeBatchFailed {
		t.Errorf("outcome %v", f)
	}
	// The JUnit: one suite per phone, the unfinished shard in not-run.
	suites := s.JUnit()
	if len(suites) != 3 || suites[0].Name != "p1" || suites[1].Name != "p2" || suites[2].Name != suitereport.NotRunSuite {
		t.Fatalf("suites %+v", suites)
	}
}

// A cancelled task is an interrupted suite.
func TestSuiteOfACancelledTask(t *testing.T) {
	t.Parallel()
	s := Suite(managed.Report{TaskID: "task-2", Status: "cancelled", Terminal: true, CreatedAt: 1_000, FinishedAt: n(2_000),
		Shards: []managed.ReportShard{{TargetID: "a", Status: "cancelled", FailureCategory: p("cancelled_by_owner")}}})
	if !s.Interrupted || s.Cases[0].Verdict != suitereport.Skipped || s.Failure().Code != fault.CodeBatchInterrupted {
		t.Errorf("suite %+v", s)
	}
}

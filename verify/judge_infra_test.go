package verify

import "testing"

// Where solopi differs from solopi-ai's judge on purpose: a cleanup that
// could not run, or left no evidence, did not fail; every checkpoint passed,
// so the scenario is not_tested (cleanup_not_tested), and the acceptance
// criterion, which cleanup never touches, passes.
func TestCleanupThatCouldNotRunIsNotACleanupFailure(t *testing.T) {
	t.Parallel()
	p := compileFixture(t, "counter-success")
	for name, cleanup := range map[string]*SegmentOutcome{
		"never started":    {State: stateNotTested, Reason: ReasonReplayNotStarted, Evidence: judgeEvidence},
		"import refused":   {State: stateNotTested, Reason: ReasonCaseImportFailed, Evidence: judgeEvidence},
		"without evidence": {State: StateFailed},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rec := &RunRecord{ReportID: "verification-run-test"}
			rec.Record("deterministic-success", &SegmentOutcome{SegmentID: segCT, State: StatePassed, Evidence: judgeEvidence})
			cleanup.SegmentID = segCC
			rec.Record("deterministic-success", cleanup)
			r := Judge(p, rec)
			sc := r.Scenarios[0]
			want := cleanup.Reason
			if want == "" {
				want = reasonMissingEvidence
			}
			if r.Status != NotTested || sc.Status != NotTested || sc.Cleanup.Status != NotTested {
				t.Fatalf("status %s, scenario %s, cleanup %s", r.Status, sc.Status, sc.Cleanup.Status)
			}
			if sc.Failure == nil || sc.Failure.Category != CategoryCleanupNotTested {
				t.Errorf("failure %+v", sc.Failure)
			}
			if sc.Failure.Reason != want {
				t.Errorf("failure reason %q, want %q", sc.Failure.Reason, want)
			}
			for _, cp := range sc.Checkpoints {
				if cp.Status != Passed {
					t.Errorf("checkpoint %s %s", cp.CheckpointID, cp.Status)
				}
			}
			if r.AcceptanceCriteria[0].Status != Passed {
				t.Errorf("AC %s", r.AcceptanceCriteria[0].Status)
			}
		})
	}
}

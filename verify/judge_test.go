package verify

import (
	"strings"
	"testing"
)

// Judge table: each case gives some segments an outcome (every other
// segment passed with one file of evidence and no observation) and the
// verdicts and outcome fingerprint solopi-ai's judge gives for the same
// outcomes (computed with its engine and a scripted adapter).

type cpWant struct{ id, status, reason string }

type scWant struct {
	id, status, category string
	checkpoints          []cpWant
	cleanup              string
}

var judgeEvidence = []Evidence{{Type: "replay_result", Path: "/x", SHA256: strings.Repeat("a", 64), Size: 1}}

func counterPage(value any, duplicate bool) map[string]any {
	n := map[string]any{"nodeId": "n1", "className": "android.widget.TextView", "resourceId": "com.example.counter:id/counter_value", "packageName": "com.example.counter", "text": value}
	children := []any{n}
	if duplicate {
		d := map[string]any{}
		for k, v := range n {
			d[k] = v
		}
		d["nodeId"] = "n9"
		children = append(children, d)
	}
	return map[string]any{"observationId": "o", "page": map[string]any{"className": "F", "children": children}}
}

const (
	segCT = "segment-deterministic-success-test-01-ec1274778c5b"
	segCC = "segment-deterministic-success-cleanup-01-2697e9195ad2"
	segHD = "segment-hybrid-success-test-02-f940cc4ff330"
	segAP = "segment-agent-false-done-precondition-01-acf9fce3b730"
	segAD = "segment-agent-false-done-test-01-0284177e0766"
	segUD = "segment-uncovered-checkpoint-test-01-8e14aff6cec7"
)

func done(obs map[string]any, reason string, evidence bool) *SegmentOutcome {
	o := &SegmentOutcome{State: StateDone, Reason: reason, AgentDone: true, Observation: obs}
	if evidence {
		o.Evidence = judgeEvidence
	}
	return o
}

var judgeCases = map[string]struct {
	fixture  string
	outcomes map[string]*SegmentOutcome
}{
	"A": {"counter-success", map[string]*SegmentOutcome{segCT: {State: StateFailed, FailedStepID: "oracle-value-is-one", Evidence: judgeEvidence}}},
	"B": {"counter-success", map[string]*SegmentOutcome{segCT: {State: StateFailed, FailedStepID: "tap-increment", Evidence: judgeEvidence}}},
	"C": {"counter-success", map[string]*SegmentOutcome{segCT: {State: StateFailed, FailedStepID: "oracle-status-is-counting", Evidence: judgeEvidence}}},
	"D": {"counter-success", map[string]*SegmentOutcome{segCT: {State: StateFailed, FailedStepID: "nope", Evidence: judgeEvidence}}},
	"E": {"counter-success", map[string]*SegmentOutcome{segCT: {State: stateNotTested, Reason: ReasonReplayNotTerminal, Evidence: judgeEvidence}}},
	"F": {"counter-success", map[string]*SegmentOutcome{segCT: {State: StatePassed}}},
	"G": {"counter-success", map[string]*SegmentOutcome{segCC: {State: StateFailed, Evidence: judgeEvidence}}},
	"H": {"counter-outcome-matrix", map[string]*SegmentOutcome{segHD: done(counterPage("1", true), "", true)}},
	"I": {"counter-outcome-matrix", map[string]*SegmentOutcome{segHD: done(map[string]any{"observationId": "o"}, "", true)}},
	"J": {"counter-outcome-matrix", map[string]*SegmentOutcome{segHD: done(map[string]any{"observationId": "o", "page": map[string]any{"className": "F", "children": []any{}}}, "", true)}},
	"K": {"counter-outcome-matrix", map[string]*SegmentOutcome{segHD: done(counterPage("1", false), "", true), segAP: {State: StateFailed, Evidence: judgeEvidence}}},
	"L": {"counter-outcome-matrix", map[string]*SegmentOutcome{segHD: done(counterPage("1", false), "", true), segAD: done(counterPage("1", false), "", false)}},
	"M": {"counter-outcome-matrix", map[string]*SegmentOutcome{segHD: {State: stateNotTested, Reason: ReasonAgentActionFailed, Observation: counterPage("1", false), Evidence: judgeEvidence}}},
	"N": {"counter-success", map[string]*SegmentOutcome{segCT: {State: stateNotTested, Reason: ReasonAdapterError}}},
	"O": {"counter-outcome-matrix", map[string]*SegmentOutcome{segHD: done(counterPage(5, false), ReasonAgentExecutionFailed, true), segUD: done(counterPage("1", false), "", true)}},
}

var judgeWants = map[string]struct {
	status, outcome string
	evidence        int
	acs             [][2]string
	scenarios       []scWant
}{
	"A": {status: "failed", outcome: "8e11724e3701336e2479466e536f167f7789f8f0d66702c75739f6d56a73b2e4", evidence: 1, acs: [][2]string{{"AC-SUCCESS", "failed"}}, scenarios: []scWant{
		{"deterministic-success", "failed", "oracle_mismatch", []cpWant{{"value-is-one", "failed", "oracle_mismatch"}, {"status-is-counting", "not_tested", "checkpoint_not_reached"}}, "passed"},
	}},
	"B": {status: "not_tested", outcome: "f14913f5ef0d04e92babf612f95581e146d28855b6215705bee70a40807518f1", evidence: 1, acs: [][2]string{{"AC-SUCCESS", "not_tested"}}, scenarios: []scWant{
		{"deterministic-success", "not_tested", "checkpoint_not_reached", []cpWant{{"value-is-one", "not_tested", "checkpoint_not_reached"}, {"status-is-counting", "not_tested", "checkpoint_not_reached"}}, "passed"},
	}},
	"C": {status: "failed", outcome: "d87a15ff3f6ff1ffed2babe1e4f9288b7764a432fddc0f5a4ee3d9ba07af88c7", evidence: 1, acs: [][2]string{{"AC-SUCCESS", "failed"}}, scenarios: []scWant{
		{"deterministic-success", "failed", "oracle_mismatch", []cpWant{{"value-is-one", "passed", "compiled_oracle_passed"}, {"status-is-counting", "failed", "oracle_mismatch"}}, "passed"},
	}},
	"D": {status: "not_tested", outcome: "90de3c7c9a03ebcda24b458a0fd6fbe0027069d5df1acdfdc52d4a106ca65e1c", evidence: 1, acs: [][2]string{{"AC-SUCCESS", "not_tested"}}, scenarios: []scWant{
		{"deterministic-success", "not_tested", "checkpoint_not_reached", []cpWant{{"value-is-one", "not_tested", "unattributed_replay_failure"}, {"status-is-counting", "not_tested", "unattributed_replay_failure"}}, "passed"},
	}},
	"E": {status: "not_tested", outcome: "b049a4bf0274a5bfe66b740b22d978d560d3097af4712f3c1792afd1a0859c6f", evidence: 1, acs: [][2]string{{"AC-SUCCESS", "not_tested"}}, scenarios: []scWant{
		{"deterministic-success", "not_tested", "checkpoint_not_reached", []cpWant{{"value-is-one", "not_tested", "replay_not_terminal"}, {"status-is-counting", "not_tested", "replay_not_terminal"}}, "passed"},
	}},
	"F": {status: "not_tested", outcome: "a48e922884597defdf9bf458214042ef1717656824ea4b454034838e88f03e1b", evidence: 2, acs: [][2]string{{"AC-SUCCESS", "not_tested"}}, scenarios: []scWant{
		{"deterministic-success", "not_tested", "checkpoint_not_reached", []cpWant{{"value-is-one", "not_tested", ""}, {"status-is-counting", "not_tested", ""}}, "passed"},
	}},
	"G": {status: "failed", outcome: "bdec74d072cf61cb16d7df9e806b850b14a448daa616c8a92ac6a22e788e48c5", evidence: 1, acs: [][2]string{{"AC-SUCCESS", "passed"}}, scenarios: []scWant{
		{"deterministic-success", "failed", "cleanup_failure", []cpWant{{"value-is-one", "passed", "compiled_oracle_passed"}, {"status-is-counting", "passed", "compiled_oracle_passed"}}, "failed"},
	}},
	"H": {status: "not_tested", outcome: "288a825dd47d4669b8262e4320b705e3e0049cab77314580e4191cd897a6613a", evidence: 5, acs: [][2]string{{"AC-HYBRID", "not_tested"}, {"AC-PRODUCT-FAILURE", "not_tested"}, {"AC-AGENT-DONE", "not_tested"}, {"AC-UNCOVERED", "not_tested"}, {"AC-CLEANUP", "not_tested"}}, scenarios: []scWant{
		{"hybrid-success", "not_tested", "checkpoint_not_reached", []cpWant{{"hybrid-value-one", "not_tested", "ambiguous_selector"}}, "passed"},
		{"product-failure", "not_tested", "dependency_not_passed", []cpWant{{"intentional-value-two", "not_tested", "dependency_not_passed"}}, "not_required"},
		{"agent-false-done", "not_tested", "dependency_not_passed", []cpWant{{"false-done-value-one", "not_tested", "dependency_not_passed"}}, "not_required"},
		{"uncovered-checkpoint", "not_tested", "dependency_not_passed", []cpWant{{"blocked-value-one", "not_tested", "dependency_not_passed"}}, "not_required"},
		{"cleanup-failure", "not_tested", "dependency_not_passed", []cpWant{{"test-value-one", "not_tested", "dependency_not_passed"}}, "not_required"},
	}},
	"I": {status: "not_tested", outcome: "467df326dba47ae55a0c5bd8ab723b3b116d5fb6856c5915f61d700bd8545521", evidence: 5, acs: [][2]string{{"AC-HYBRID", "not_tested"}, {"AC-PRODUCT-FAILURE", "not_tested"}, {"AC-AGENT-DONE", "not_tested"}, {"AC-UNCOVERED", "not_tested"}, {"AC-CLEANUP", "not_tested"}}, scenarios: []scWant{
		{"hybrid-success", "not_tested", "checkpoint_not_reached", []cpWant{{"hybrid-value-one", "not_tested", "missing_observation"}}, "passed"},
		{"product-failure", "not_tested", "dependency_not_passed", []cpWant{{"intentional-value-two", "not_tested", "dependency_not_passed"}}, "not_required"},
		{"agent-false-done", "not_tested", "dependency_not_passed", []cpWant{{"false-done-value-one", "not_tested", "dependency_not_passed"}}, "not_required"},
		{"uncovered-checkpoint", "not_tested", "dependency_not_passed", []cpWant{{"blocked-value-one", "not_tested", "dependency_not_passed"}}, "not_required"},
		{"cleanup-failure", "not_tested", "dependency_not_passed", []cpWant{{"test-value-one", "not_tested", "dependency_not_passed"}}, "not_required"},
	}},
	"J": {status: "failed", outcome: "75109501387a60c27fe1c43739b618dd0f6741aebb3acc722539091dc741f4d1", evidence: 5, acs: [][2]string{{"AC-HYBRID", "failed"}, {"AC-PRODUCT-FAILURE", "not_tested"}, {"AC-AGENT-DONE", "not_tested"}, {"AC-UNCOVERED", "not_tested"}, {"AC-CLEANUP", "not_tested"}}, scenarios: []scWant{
		{"hybrid-success", "failed", "oracle_mismatch", []cpWant{{"hybrid-value-one", "failed", "selector_not_found"}}, "passed"},
		{"product-failure", "not_tested", "dependency_not_passed", []cpWant{{"intentional-value-two", "not_tested", "dependency_not_passed"}}, "not_required"},
		{"agent-false-done", "not_tested", "dependency_not_passed", []cpWant{{"false-done-value-one", "not_tested", "dependency_not_passed"}}, "not_required"},
		{"uncovered-checkpoint", "not_tested", "dependency_not_passed", []cpWant{{"blocked-value-one", "not_tested", "dependency_not_passed"}}, "not_required"},
		{"cleanup-failure", "not_tested", "dependency_not_passed", []cpWant{{"test-value-one", "not_tested", "dependency_not_passed"}}, "not_required"},
	}},
	"K": {status: "not_tested", outcome: "45c21b582d6881785a2e4d5ff97cc9275dedfe80be651d48b2ea8a2a0702a03c", evidence: 2, acs: [][2]string{{"AC-HYBRID", "passed"}, {"AC-PRODUCT-FAILURE", "passed"}, {"AC-AGENT-DONE", "not_tested"}, {"AC-UNCOVERED", "not_tested"}, {"AC-CLEANUP", "passed"}}, scenarios: []scWant{
		{"hybrid-success", "passed", "", []cpWant{{"hybrid-value-one", "passed", "matched"}}, "passed"},
		{"product-failure", "passed", "", []cpWant{{"intentional-value-two", "passed", "compiled_oracle_passed"}}, "passed"},
		{"agent-false-done", "not_tested", "precondition_failed", []cpWant{{"false-done-value-one", "not_tested", "precondition_failed"}}, "passed"},
		{"uncovered-checkpoint", "not_tested", "checkpoint_not_reached", []cpWant{{"blocked-value-one", "not_tested", "missing_observation"}}, "passed"},
		{"cleanup-failure", "passed", "", []cpWant{{"test-value-one", "passed", "compiled_oracle_passed"}}, "passed"},
	}},
	"L": {status: "not_tested", outcome: "20cb5e25e6831fc5977c5f0fa439b9de9d9ba1fa8e629c128ad0d90007e77bad", evidence: 2, acs: [][2]string{{"AC-HYBRID", "passed"}, {"AC-PRODUCT-FAILURE", "passed"}, {"AC-AGENT-DONE", "not_tested"}, {"AC-UNCOVERED", "not_tested"}, {"AC-CLEANUP", "passed"}}, scenarios: []scWant{
		{"hybrid-success", "passed", "", []cpWant{{"hybrid-value-one", "passed", "matched"}}, "passed"},
		{"product-failure", "passed", "", []cpWant{{"intentional-value-two", "passed", "compiled_oracle_passed"}}, "passed"},
		{"agent-false-done", "not_tested", "checkpoint_not_reached", []cpWant{{"false-done-value-one", "not_tested", ""}}, "passed"},
		{"uncovered-checkpoint", "not_tested", "checkpoint_not_reached", []cpWant{{"blocked-value-one", "not_tested", "missing_observation"}}, "passed"},
		{"cleanup-failure", "passed", "", []cpWant{{"test-value-one", "passed", "compiled_oracle_passed"}}, "passed"},
	}},
	"M": {status: "not_tested", outcome: "9f679a3dfa4564f1d2869558d8b01655f43c690bc2ed66673040727e600bf819", evidence: 5, acs: [][2]string{{"AC-HYBRID", "not_tested"}, {"AC-PRODUCT-FAILURE", "not_tested"}, {"AC-AGENT-DONE", "not_tested"}, {"AC-UNCOVERED", "not_tested"}, {"AC-CLEANUP", "not_tested"}}, scenarios: []scWant{
		{"hybrid-success", "not_tested", "checkpoint_not_reached", []cpWant{{"hybrid-value-one", "not_tested", "agent_action_failed"}}, "passed"},
		{"product-failure", "not_tested", "dependency_not_passed", []cpWant{{"intentional-value-two", "not_tested", "dependency_not_passed"}}, "not_required"},
		{"agent-false-done", "not_tested", "dependency_not_passed", []cpWant{{"false-done-value-one", "not_tested", "dependency_not_passed"}}, "not_required"},
		{"uncovered-checkpoint", "not_tested", "dependency_not_passed", []cpWant{{"blocked-value-one", "not_tested", "dependency_not_passed"}}, "not_required"},
		{"cleanup-failure", "not_tested", "dependency_not_passed", []cpWant{{"test-value-one", "not_tested", "dependency_not_passed"}}, "not_required"},
	}},
	"N": {status: "not_tested", outcome: "882d887700590d8ed830c403621973752db4e1999b81409029236bfaf50fe037", evidence: 2, acs: [][2]string{{"AC-SUCCESS", "not_tested"}}, scenarios: []scWant{
		{"deterministic-success", "not_tested", "checkpoint_not_reached", []cpWant{{"value-is-one", "not_tested", "adapter_error"}, {"status-is-counting", "not_tested", "adapter_error"}}, "passed"},
	}},
	"O": {status: "failed", outcome: "c64562c4fce1106c43b8d055fec2909d9843f26517a9d0337ae708af37dbdf09", evidence: 5, acs: [][2]string{{"AC-HYBRID", "failed"}, {"AC-PRODUCT-FAILURE", "not_tested"}, {"AC-AGENT-DONE", "not_tested"}, {"AC-UNCOVERED", "not_tested"}, {"AC-CLEANUP", "not_tested"}}, scenarios: []scWant{
		{"hybrid-success", "failed", "oracle_mismatch", []cpWant{{"hybrid-value-one", "failed", "oracle_mismatch"}}, "passed"},
		{"product-failure", "not_tested", "dependency_not_passed", []cpWant{{"intentional-value-two", "not_tested", "dependency_not_passed"}}, "not_required"},
		{"agent-false-done", "not_tested", "dependency_not_passed", []cpWant{{"false-done-value-one", "not_tested", "dependency_not_passed"}}, "not_required"},
		{"uncovered-checkpoint", "not_tested", "dependency_not_passed", []cpWant{{"blocked-value-one", "not_tested", "dependency_not_passed"}}, "not_required"},
		{"cleanup-failure", "not_tested", "dependency_not_passed", []cpWant{{"test-value-one", "not_tested", "dependency_not_passed"}}, "not_required"},
	}},
}

func TestJudgeMatchesSolopiAI(t *testing.T) {
	t.Parallel()
	plans := map[string]*Plan{}
	for name, c := range judgeCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := plans[c.fixture]
			if p == nil {
				p = compileFixture(t, c.fixture)
				plans[c.fixture] = p
			}
			rec := &RunRecord{ReportID: "verification-run-test", StartedAt: 1, FinishedAt: 1}
			for _, sc := range p.Scenarios {
				for _, seg := range sc.Segments {
					o := c.outcomes[seg.ID]
					if o == nil {
						o = &SegmentOutcome{State: StatePassed, Evidence: judgeEvidence}
					}
					o.SegmentID = seg.ID
					rec.Record(sc.ID, o)
				}
			}
			r := Judge(p, rec)
			w := judgeWants[name]
			if r.Status != w.status || r.OutcomeFingerprint != w.outcome || len(r.Evidence) != w.evidence {
				t.Errorf("status %s outcome %s evidence %d; want %s %s %d", r.Status, r.OutcomeFingerprint, len(r.Evidence), w.status, w.outcome, w.evidence)
			}
			for i, s := range r.Scenarios {
				ws := w.scenarios[i]
				cat := ""
				if s.Failure != nil {
					cat = s.Failure.Category
				}
				if s.ScenarioID != ws.id || s.Status != ws.status || cat != ws.category || s.Cleanup.Status != ws.cleanup {
					t.Errorf("scenario %d = %s %s %s cleanup %s; want %+v", i, s.ScenarioID, s.Status, cat, s.Cleanup.Status, ws)
				}
				for j, c := range s.Checkpoints {
					if got := (cpWant{c.CheckpointID, c.Status, c.Reason}); got != ws.checkpoints[j] {
						t.Errorf("%s checkpoint %d = %+v, want %+v", s.ScenarioID, j, got, ws.checkpoints[j])
					}
				}
			}
			for i, a := range r.AcceptanceCriteria {
				if got := [2]string{a.AcceptanceCriterionID, a.Status}; got != w.acs[i] {
					t.Errorf("AC %d = %v, want %v", i, got, w.acs[i])
				}
			}
		})
	}
}

package execution

import (
	"os"
	"slices"
	"testing"

	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/verify"
)

// The vision oracle on replay screenshots, judged by the planner's
// isolated completion review: the fake model reads the counter in the
// pixels, and cannot tell about anything else.
func TestVisionOracle(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../testdata/vision-requirement.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg, srv := startVision(t, fakemodel.Options{})
	r := readReport(t, runVision(t, compileRequirement(t, b), cfg, &counterPhone{}))
	types := map[string]string{}
	for _, e := range r.Evidence {
		types[e.ID] = e.Type
	}
	got := map[string]verify.CheckpointResult{}
	for _, c := range r.Scenarios[0].Checkpoints {
		got[c.CheckpointID] = c
	}
	for id, want := range map[string][3]string{
		"ui-one":    {verify.Passed, verify.ReasonCompiledOraclePassed, ""},
		"looks-one": {verify.Passed, verify.ReasonMatched, "vision"},
		"looks-two": {verify.Failed, verify.ReasonOracleMismatch, "vision"},
		"unsure":    {verify.NotTested, verify.ReasonVisionUncertain, "vision"},
	} {
		c := got[id]
		if c.Status != want[0] || c.Reason != want[1] || c.Judge != want[2] {
			t.Errorf("%s = %s/%s judge %q, want %v", id, c.Status, c.Reason, c.Judge, want)
		}
		if c.Judge != "vision" {
			continue
		}
		if c.Detail == "" {
			t.Errorf("%s: the model's reason is not in the report", id)
		}
		if !slices.ContainsFunc(c.EvidenceRefs, func(ref string) bool { return types[ref] == "vision_review" }) {
			t.Errorf("%s: the review is not in the evidence: %v", id, c.EvidenceRefs)
		}
	}
	reviews := 0
	for _, q := range srv.Requests() {
		if q.Kind == "completion_review" {
			reviews++
		}
	}
	if reviews != 3 {
		t.Errorf("the vision judge was asked %d times, want 3", reviews)
	}
}

package verify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/fault"
)

// fakeVision reads the Counter value the fake phone wrote into its
// screenshot and judges "the counter shows N".
type fakeVision struct{ asked int }

func (f *fakeVision) Review(ctx context.Context, req VisionRequest) (VisionVerdict, error) {
	f.asked++
	b, err := os.ReadFile(req.Screenshot)
	if err != nil {
		return VisionVerdict{}, err
	}
	want := strings.TrimPrefix(req.Assertion, "the counter shows ")
	if want == req.Assertion {
		return VisionVerdict{Status: NotTested, Reason: "cannot tell from this screen"}, nil
	}
	if strings.HasSuffix(string(b), "value="+want) {
		return VisionVerdict{Status: Passed, Reason: "the counter reads " + want}, nil
	}
	return VisionVerdict{Status: Failed, Reason: "the counter reads something else: " + string(b)}, nil
}

const visionRequirement = `{"id":"vision-demo","title":"t","targetAppPackage":"com.example.counter","acceptanceCriteria":["a"],
 "scenarios":[{"id":"s","acceptanceCriteria":["AC-001"],
  "steps":[
   {"id":"reset","action":{"type":"click","selector":{"resourceId":"com.example.counter:id/reset_button"}}},
   {"id":"inc","action":{"type":"click","selector":{"resourceId":"com.example.counter:id/increment_button"}}},
   {"id":"inc2","action":{"type":"click","selector":{"resourceId":"com.example.counter:id/increment_button"}}}],
  "checkpoints":[
   {"id":"ui-one","afterStep":"inc","oracle":{"type":"ui","selector":{"resourceId":"com.example.counter:id/counter_value"},"expected":"1"}},
   {"id":"looks-one","afterStep":"inc","oracle":{"type":"vision","assertion":"the counter shows 1"}},
   {"id":"looks-two","afterStep":"inc2","oracle":{"type":"vision","assertion":"the counter shows 3"}},
   {"id":"unsure","afterStep":"inc2","oracle":{"type":"vision","assertion":"the screen looks calm"}}]}]}`

func TestVisionOracle(t *testing.T) {
	p, err := Compile(NewDocument(decodeJSON(t, visionRequirement)))
	if err != nil {
		t.Fatal(err)
	}
	sc := p.Scenarios[0]
	// A vision checkpoint ends its compiled case: the replay's final
	// screenshot is the screen after its step.
	if len(sc.Segments) != 2 || len(sc.Segments[0].Case.Steps) != 3 || sc.Segments[0].Case.Steps[2].StepID != "oracle-ui-one" {
		t.Fatalf("segments = %+v", sc.Segments)
	}
	if cp := sc.Checkpoint("looks-one"); cp.OracleStepID != "" || cp.SegmentID != sc.Segments[0].ID {
		t.Errorf("vision checkpoint = %+v", cp)
	}
	if _, err := ValidateTree(p.Tree()); err != nil {
		t.Fatalf("a plan with vision oracles validates: %v", err)
	}
	rememberCases(p)
	phone, vision := &counterPhone{}, &fakeVision{}
	out, err := (&Engine{Runner: phone, Agent: phone, Vision: vision}).Run(context.Background(), p, filepath.Join(t.TempDir(), "run"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]CheckpointResult{}
	for _, c := range out.Report.Scenarios[0].Checkpoints {
		got[c.CheckpointID] = c
	}
	for id, want := range map[string][3]string{
		"ui-one":    {Passed, ReasonCompiledOraclePassed, ""},
		"looks-one": {Passed, ReasonMatched, "vision"},
		"looks-two": {Failed, ReasonOracleMismatch, "vision"},
		"unsure":    {NotTested, ReasonVisionUncertain, "vision"},
	} {
		c := got[id]
		if c.Status != want[0] || c.Reason != want[1] || c.Judge != want[2] {
			t.Errorf("%s = %s/%s judge %q, want %v", id, c.Status, c.Reason, c.Judge, want)
		}
		if c.Judge == "vision" && c.Detail == "" {
			t.Errorf("%s: the model's reason is not in the report", id)
		}
	}
	if vision.asked != 3 {
		t.Errorf("the vision judge was asked %d times, want 3", vision.asked)
	}
}

func TestVisionOracleOnlyOnCheckpoints(t *testing.T) {
	req := strings.Replace(visionRequirement, `"steps":[`, `"preconditions":[{"id":"p","oracle":{"type":"vision","assertion":"x"}}],"steps":[`, 1)
	if _, err := Compile(NewDocument(decodeJSON(t, req))); fault.CodeOf(err) != CodeUnsupportedOracle {
		t.Errorf("a vision precondition = %v, want %s", err, CodeUnsupportedOracle)
	}
}

func TestUnanchoredMatchesWarning(t *testing.T) {
	req := strings.Replace(visionRequirement, `"expected":"1"}`, `"operator":"matches","expected":"1"}`, 1)
	p, err := Compile(NewDocument(decodeJSON(t, req)))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) != 1 || p.Warnings[0].Code != CodeUnanchoredMatches || p.Warnings[0].Semantics != "full_match" {
		t.Errorf("warnings = %+v", p.Warnings)
	}
	req = strings.Replace(visionRequirement, `"expected":"1"}`, `"operator":"matches","expected":"^1$"}`, 1)
	if p, _ := Compile(NewDocument(decodeJSON(t, req))); len(p.Warnings) != 0 {
		t.Errorf("an anchored pattern warns: %+v", p.Warnings)
	}
}

package verify

import (
	"os"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/fault"
)

// visionRequirement has UI and vision checkpoints on the Counter app.
var visionRequirement = func() string {
	b, err := os.ReadFile("testdata/vision-requirement.json")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

func TestVisionCheckpointEndsItsCompiledCase(t *testing.T) {
	t.Parallel()
	p, err := Compile(newDocument(decodeJSON(t, visionRequirement)))
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
	if _, err := validateTree(p.Tree()); err != nil {
		t.Fatalf("a plan with vision oracles validates: %v", err)
	}
}

func TestVisionOracleOnlyOnCheckpoints(t *testing.T) {
	t.Parallel()
	req := strings.Replace(visionRequirement, `"steps":[`, `"preconditions":[{"id":"p","oracle":{"type":"vision","assertion":"x"}}],"steps":[`, 1)
	if _, err := Compile(newDocument(decodeJSON(t, req))); fault.CodeOf(err) != fault.CodeUnsupportedOracle {
		t.Errorf("a vision precondition = %v, want %s", err, fault.CodeUnsupportedOracle)
	}
}

func TestUnanchoredMatchesWarning(t *testing.T) {
	t.Parallel()
	req := strings.Replace(visionRequirement, `"expected":"1"}`, `"operator":"matches","expected":"1"}`, 1)
	p, err := Compile(newDocument(decodeJSON(t, req)))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) != 1 || p.Warnings[0].Code != fault.CodeUnanchoredMatches || p.Warnings[0].Semantics != "full_match" {
		t.Errorf("warnings = %+v", p.Warnings)
	}
	req = strings.Replace(visionRequirement, `"expected":"1"}`, `"operator":"matches","expected":"^1$"}`, 1)
	if p, _ := Compile(newDocument(decodeJSON(t, req))); len(p.Warnings) != 0 {
		t.Errorf("an anchored pattern warns: %+v", p.Warnings)
	}
}

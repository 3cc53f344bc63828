package execution

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/schemas"
	"github.com/solopi-dev/solopi/verify"
)

// fakeVision reads the Counter value the fake phone wrote into its
// screenshot and judges "the counter shows N".
type fakeVision struct{ asked int }

func (f *fakeVision) Review(ctx context.Context, req VisionRequest) (verify.VisionVerdict, error) {
	f.asked++
	b, err := os.ReadFile(req.Screenshot)
	if err != nil {
		return verify.VisionVerdict{}, err
	}
	want := strings.TrimPrefix(req.Assertion, "the counter shows ")
	if want == req.Assertion {
		return verify.VisionVerdict{Status: verify.NotTested, Reason: "cannot tell from this screen"}, nil
	}
	if strings.HasSuffix(string(b), "value="+want) {
		return verify.VisionVerdict{Status: verify.Passed, Reason: "the counter reads " + want}, nil
	}
	return verify.VisionVerdict{Status: verify.Failed, Reason: "the counter reads something else: " + string(b)}, nil
}

func TestVisionOracle(t *testing.T) {
	b, err := os.ReadFile("../testdata/vision-requirement.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := verify.ParseRequirement(b)
	if err != nil {
		t.Fatal(err)
	}
	p, err := verify.Compile(doc)
	if err != nil {
		t.Fatal(err)
	}
	rememberCases(p)
	phone, vision := &counterPhone{}, &fakeVision{}
	out, err := (&Engine{Runner: phone, Agent: phone, Vision: vision}).Run(context.Background(), p, filepath.Join(t.TempDir(), "run"))
	if err != nil {
		t.Fatal(err)
	}
	rb, err := os.ReadFile(out.ReportPath)
	if err != nil {
		t.Fatal(err)
	}
	schemas.Validate(t, "verification-report", rb)
	got := map[string]verify.CheckpointResult{}
	for _, c := range out.Report.Scenarios[0].Checkpoints {
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
		if c.Judge == "vision" && c.Detail == "" {
			t.Errorf("%s: the model's reason is not in the report", id)
		}
	}
	if vision.asked != 3 {
		t.Errorf("the vision judge was asked %d times, want 3", vision.asked)
	}
}

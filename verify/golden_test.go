package verify

import (
	"os"
	"path/filepath"
	"testing"
)

// Golden values computed by solopi-ai (SoloPi's own host CLI) from the same
// fixtures: a requirement must compile to the same plan fingerprint, case
// names and segment IDs here and there.

type goldenSegment struct{ scenario, segment, caseName string }

var goldens = []struct {
	file, plan, source string
	order              []string
	segments           []goldenSegment
	summary            Summary
	caseCount          int
}{
	{
		file: "counter-success",
		plan: "cb5940007b56c7ce96a30c14d0a7ae8e0193bfbcf60f7f1d4961538045b55597", source: "b9ef20deba65e49833db45070c6039927e1952b43a9a8ccbf11fc0d305b018e3",
		order: []string{"deterministic-success"},
		segments: []goldenSegment{
			{"deterministic-success", "segment-deterministic-success-test-01-ec1274778c5b", "verify-demo-counter-repeatable-success-deterministic-success-test-01-d6bd45e30a76"},
			{"deterministic-success", "segment-deterministic-success-cleanup-01-2697e9195ad2", "verify-demo-counter-repeatable-success-deterministic-success-cleanup-01-ee5d6a7f6776"},
		},
		summary:   Summary{Valid: true, PlanFingerprint: "cb5940007b56c7ce96a30c14d0a7ae8e0193bfbcf60f7f1d4961538045b55597", ScenarioCount: 1, SegmentCount: 2, CheckpointCount: 2},
		caseCount: 2,
	},
	{
		file: "counter-outcome-matrix",
		plan: "4e3ba3566d14c24313ba28ba61a797540919a9544c36eed07eaf7de4b7fc353f", source: "9b9bdd70b6600f67a6e893d7e18f7363cf1b2f3a8cefb30cef086923dafc40f5",
		order: []string{"hybrid-success", "product-failure", "agent-false-done", "uncovered-checkpoint", "cleanup-failure"},
		segments: []goldenSegment{
			{"hybrid-success", "segment-hybrid-success-test-01-b5d99f6cbe27", "verify-demo-counter-outcome-matrix-hybrid-success-test-01-41c435272680"},
			{"hybrid-success", "segment-hybrid-success-test-02-f940cc4ff330", ""},
			{"hybrid-success", "segment-hybrid-success-cleanup-01-81bedad3e0a8", "verify-demo-counter-outcome-matrix-hybrid-success-cleanup-01-f0c5aa965bbd"},
			{"product-failure", "segment-product-failure-test-01-3d07352518fd", "verify-demo-counter-outcome-matrix-product-failure-test-01-5751da3301ba"},
			{"product-failure", "segment-product-failure-cleanup-01-b8b06a5093ce", "verify-demo-counter-outcome-matrix-product-failure-cleanup-01-9d7ec8fb39bf"},
			{"agent-false-done", "segment-agent-false-done-precondition-01-acf9fce3b730", "verify-demo-counter-outcome-matrix-agent-false-done-precondition-01-8e9ab489016f"},
			{"agent-false-done", "segment-agent-false-done-test-01-0284177e0766", ""},
			{"agent-false-done", "segment-agent-false-done-cleanup-01-0a3970278655", "verify-demo-counter-outcome-matrix-agent-false-done-cleanup-01-69c53e756c50"},
			{"uncovered-checkpoint", "segment-uncovered-checkpoint-test-01-8e14aff6cec7", ""},
			{"uncovered-checkpoint", "segment-uncovered-checkpoint-cleanup-01-6d5335bc7143", "verify-demo-counter-outcome-matrix-uncovered-checkpoint-cleanup-01-1638b18d53c5"},
			{"cleanup-failure", "segment-cleanup-failure-test-01-1be6a36767fa", "verify-demo-counter-outcome-matrix-cleanup-failure-test-01-37f40823dbd8"},
			{"cleanup-failure", "segment-cleanup-failure-cleanup-01-c48c5793d486", "verify-demo-counter-outcome-matrix-cleanup-failure-cleanup-01-c8ebd628d3be"},
		},
		summary:   Summary{Valid: true, PlanFingerprint: "4e3ba3566d14c24313ba28ba61a797540919a9544c36eed07eaf7de4b7fc353f", ScenarioCount: 5, SegmentCount: 12, CheckpointCount: 5},
		caseCount: 9,
	},
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "solopi-ai", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func compileFixture(t testing.TB, name string) *Plan {
	t.Helper()
	doc, err := ParseRequirement(readFixture(t, name))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(doc)
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	return p
}

func TestGoldenFingerprintsNamesAndIDs(t *testing.T) {
	t.Parallel()
	for _, g := range goldens {
		t.Run(g.file, func(t *testing.T) {
			t.Parallel()
			p := compileFixture(t, g.file)
			if p.Fingerprint != g.plan {
				t.Errorf("planFingerprint = %s, want %s", p.Fingerprint, g.plan)
			}
			if p.SourceFingerprint != g.source {
				t.Errorf("sourceFingerprint = %s, want %s", p.SourceFingerprint, g.source)
			}
			if got := p.ExecutionOrder; !equalStrings(got, g.order) {
				t.Errorf("executionOrder = %v, want %v", got, g.order)
			}
			var got []goldenSegment
			for _, sc := range p.Scenarios {
				for _, seg := range sc.Segments {
					name := ""
					if seg.Case != nil {
						name = seg.Case.Name
					}
					got = append(got, goldenSegment{sc.ID, seg.ID, name})
				}
			}
			if len(got) != len(g.segments) {
				t.Fatalf("segments = %v, want %v", got, g.segments)
			}
			for i := range got {
				if got[i] != g.segments[i] {
					t.Errorf("segment %d = %+v, want %+v", i, got[i], g.segments[i])
				}
			}
			if p.CaseCount() != g.caseCount {
				t.Errorf("caseCount = %d, want %d", p.CaseCount(), g.caseCount)
			}
			// The written plan validates, and reading it back gives the
			// same plan.
			b, err := MarshalPlan(p)
			if err != nil {
				t.Fatal(err)
			}
			back, sum, err := LoadPlan(b)
			if err != nil {
				t.Fatalf("validate: %v", err)
			}
			if *sum != g.summary {
				t.Errorf("summary = %+v, want %+v", *sum, g.summary)
			}
			if !sameJSON(back.Tree(), p.Tree()) {
				t.Error("a plan read back differs from the compiled one")
			}
		})
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

package execution

import (
	"os"
	"testing"

	"github.com/solopi-dev/solopi/fault"
)

func FuzzParseDecisions(f *testing.F) {
	plan := compileFixture(f, "counter-outcome-matrix")
	b, err := os.ReadFile("../testdata/solopi-ai/counter-agent-decisions.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"hybrid-success":{"explore-increment":{"type":"done"}}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDecisions(data, plan)
		if err != nil {
			assertTyped(t, err)
			return
		}
		for _, steps := range d {
			for _, list := range steps {
				for _, dec := range list {
					// Checking a decision never panics either.
					if a, ok := dec["action"].(map[string]any); ok {
						_, _ = targetNode(a, counterPage("1"))
						_, _ = actRequest(a, "n1")
					}
				}
			}
		}
	})
}

func assertTyped(t *testing.T, err error) {
	t.Helper()
	if k := fault.KindOf(err); k != fault.Invalid {
		t.Fatalf("error of kind %v (want invalid, exit 3): %v", k, err)
	}
	if fault.CodeOf(err) == "" {
		t.Fatalf("error without a code: %v", err)
	}
}

package verify

import (
	"os"
	"testing"

	"github.com/solopi-dev/solopi/fault"
)

// The parsers of outside input (requirements, plans, decisions files) must
// turn any bytes into a plan or a typed error: never a panic, never an
// untyped error, and a compiled plan must validate.

func FuzzCompileRequirement(f *testing.F) {
	for _, name := range []string{"counter-success", "counter-outcome-matrix"} {
		b, err := os.ReadFile("testdata/solopi-ai/" + name + ".json")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(visionRequirement))
	f.Add([]byte(`{"id":"r","title":"t","acceptanceCriteria":["a"],"parameters":{"x":"${y}","y":"${x}"},"scenarios":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := ParseRequirement(data)
		if err != nil {
			assertTyped(t, err)
			return
		}
		p, err := Compile(doc)
		if err != nil {
			assertTyped(t, err)
			return
		}
		b, err := MarshalPlan(p)
		if err != nil {
			t.Fatalf("a compiled plan cannot be written: %v", err)
		}
		if _, _, err := LoadPlan(b); err != nil {
			t.Fatalf("a compiled plan does not validate: %v", err)
		}
	})
}

func FuzzLoadPlan(f *testing.F) {
	for _, name := range []string{"counter-success", "counter-outcome-matrix"} {
		b, err := MarshalPlan(compileFixture(f, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, _, err := LoadPlan(data); err != nil {
			assertTyped(t, err)
		}
	})
}

func FuzzParseDecisions(f *testing.F) {
	plan := compileFixture(f, "counter-outcome-matrix")
	b, err := os.ReadFile("testdata/solopi-ai/counter-agent-decisions.json")
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
						_, _ = targetNode(a, counterPage("1", false))
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

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

func assertTyped(t *testing.T, err error) {
	t.Helper()
	if k := fault.KindOf(err); k != fault.Invalid {
		t.Fatalf("error of kind %v (want invalid, exit 3): %v", k, err)
	}
	if fault.CodeOf(err) == "" {
		t.Fatalf("error without a code: %v", err)
	}
}

package execution

import (
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
)

// A decisions file goes through what verify-run does with it: Prepare's
// shape check against the plan, then, for every decision of every explore
// step, the engine's checks before anything is sent (checkDecision, on an
// observation of the Counter app). Any bytes give a typed refusal, a
// refused decision or a request the Agent client can send: never a panic.
// (The target used to call the request builder on decisions the engine
// would have refused first, and crashed on {"action":{}}.)
func FuzzParseDecisions(f *testing.F) {
	plan := compileFixture(f, "counter-outcome-matrix")
	obs := (&counterPhone{}).observation()
	fixture, err := os.ReadFile("../testdata/solopi-ai/counter-agent-decisions.json")
	if err != nil {
		f.Fatal(err)
	}
	bases := [][]byte{compact(f, fixture), []byte(`{"hybrid-success":{"explore-increment":[` +
		`{"type":"act","stepId":"a","action":{"type":"scroll","direction":"up","distance":5,"selector":{"resourceId":"com.example.counter:id/counter_value"}}},` +
		`{"type":"act","action":{"type":"click","nodeId":"n4"}},{"type":"act","action":{"type":"wait","durationMs":100}},{"type":"done","reason":"r"}]}}`)}
	f.Add(uint8(0), uint16(0), uint8(0), []byte{})
	f.Add(uint8(1), uint16(0), uint8(0), []byte{})
	for _, raw := range []string{`{"hybrid-success":{"explore-increment":{"type":"done"}}}`, `{"hybrid-success":{"explore-increment":[{"action":{}}]}}`, `[]`} {
		f.Add(uint8(len(bases)), uint16(0), uint8(0), []byte(raw))
	}
	f.Fuzz(func(t *testing.T, base uint8, off uint16, cut uint8, with []byte) {
		data := patch(bases, base, off, cut, with)
		d, err := parseDecisions(data, plan)
		if err != nil {
			assertTyped(t, err)
			return
		}
		for _, sc := range plan.Scenarios {
			for _, seg := range sc.Segments {
				step := seg.DynamicStep
				if step == nil {
					continue
				}
				for i, dec := range d[sc.ID][step.ID] {
					chk, err := checkDecision(step, i, dec, obs)
					switch {
					case errors.Is(err, errDecision):
					case err != nil:
						t.Fatalf("decision %d: an error that is not a refused decision: %v", i, err)
					case chk.kind == decisionAct && (!slices.Contains(step.AllowedActions, chk.act.Action) || chk.act.StepID == "" || chk.act.ObservationID == ""):
						t.Fatalf("decision %d accepted as %+v", i, chk.act)
					}
				}
			}
		}
	})
}

// patch is the fuzzer's input: base selects one of bases (or none: the
// input is with alone), whose bytes [off, off+cut) are replaced by with.
// Small edits of valid files reach the checks inside them, and keep every
// input small for the fuzzer to minimize.
func patch(bases [][]byte, base uint8, off uint16, cut uint8, with []byte) []byte {
	i := int(base) % (len(bases) + 1)
	if i == len(bases) {
		return with
	}
	b := bases[i]
	start := min(int(off), len(b))
	end := min(start+int(cut), len(b))
	return append(append(append(make([]byte, 0, len(b)+len(with)), b[:start]...), with...), b[end:]...)
}

func compact(t testing.TB, b []byte) []byte {
	t.Helper()
	tree, err := canonjson.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	out, err := canonjson.Marshal(tree)
	if err != nil {
		t.Fatal(err)
	}
	return out
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

package verify

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// pythonStrip is testdata/python-strip.json, written once by CPython 3.11.7:
// the code points str.isspace() accepts and str.strip() of 512 texts.
type pythonStrip struct {
	Whitespace []rune
	Cases      []struct{ In, Strip string }
}

func readPythonStrip(t *testing.T) pythonStrip {
	t.Helper()
	b, err := os.ReadFile("testdata/python-strip.json")
	if err != nil {
		t.Fatal(err)
	}
	var p pythonStrip
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Whitespace) != 29 || len(p.Cases) < 500 {
		t.Fatalf("python-strip.json holds %d whitespace, %d cases", len(p.Whitespace), len(p.Cases))
	}
	return p
}

func TestStripIsPythons(t *testing.T) {
	t.Parallel()
	p := readPythonStrip(t)
	for r := rune(0); r <= 0x10FFFF; r++ {
		if got, want := pySpace(r), slices.Contains(p.Whitespace, r); got != want {
			t.Errorf("U+%04X: space %v, Python says %v", r, got, want)
		}
	}
	for _, c := range p.Cases {
		if got := pyStrip(c.In); got != c.Strip {
			t.Errorf("strip(%q) = %q, Python gives %q", c.In, got, c.Strip)
		}
	}
}

// Every field solopi-ai strips compiles the same with Python's whitespace
// around it (before, an ID "\x1cr" was invalid_id and a title "\x1ft"
// another fingerprint).
func TestEveryStrippedFieldStripsPythonsWhitespace(t *testing.T) {
	t.Parallel()
	const pad = "\x1c\u3000\x1f\u0085\u2028 "
	requirement := func(field string) []byte {
		v := func(name, s string) string {
			if name == field {
				return pad + s + pad
			}
			return s
		}
		sel := map[string]any{"resourceId": "com.example.counter:id/reset_button"}
		tree := map[string]any{
			"id": v("requirement id", "r"), "title": v("title", "t"),
			"targetAppPackage":   v("package", "com.example.counter"),
			"acceptanceCriteria": []any{v("AC text", "a"), map[string]any{"id": v("AC id", "AC-B"), "text": v("AC object text", "b")}},
			"reusableFlows": []any{map[string]any{"id": v("flow id", "f"), "steps": []any{
				map[string]any{"id": v("flow step id", "fs"), "action": map[string]any{"type": "click", "selector": sel}}}}},
			"scenarios": []any{map[string]any{
				"id": v("scenario id", "s"), "title": v("scenario title", "st"), "acceptanceCriteria": []any{v("scenario AC", "AC-001"), "AC-B"},
				"preconditions": []any{map[string]any{"id": v("precondition id", "p"), "oracle": map[string]any{"type": "ui", "selector": sel, "expected": "Reset"}}},
				"steps": []any{
					map[string]any{"use": v("flow use", "f")},
					map[string]any{"id": v("step id", "in"), "action": map[string]any{"type": "input", "selector": sel, "text": v("input text", "hello")}},
					map[string]any{"id": "x", "type": "explore", "goal": v("goal", "count"), "allowedActions": []any{v("allowed action", "click"), "wait"}},
				},
				"checkpoints": []any{map[string]any{"id": v("checkpoint id", "c"), "afterStep": v("afterStep", "in"),
					"oracle": map[string]any{"type": "ui", "selector": sel, "expected": "Reset"}},
					map[string]any{"id": "c2", "afterStep": "x", "oracle": map[string]any{"type": "ui", "selector": sel, "expected": "Reset"}}},
				"cleanup": []any{map[string]any{"id": v("cleanup id", "cl"), "action": map[string]any{"type": "back"}}},
			}},
		}
		b, err := json.Marshal(tree)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	compile := func(field string) (compiled, full string) {
		doc, err := ParseRequirement(requirement(field))
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compile(doc)
		if err != nil {
			t.Fatalf("%s: %v", field, err)
		}
		// The normalized requirement keeps steps, checkpoints, cleanup
		// and packages as written (solopi-ai's too), so sourceFingerprint,
		// and with it planFingerprint, hashes the padding; everything
		// compiled from them must not.
		tree := p.Tree()
		delete(tree, "sourceFingerprint")
		delete(tree, "planFingerprint")
		return fingerprint(tree), p.Fingerprint
	}
	want, wantFull := compile("")
	for _, field := range []string{"requirement id", "title", "package", "AC text", "AC id", "AC object text", "flow id", "flow step id",
		"scenario id", "scenario title", "scenario AC", "precondition id", "flow use", "step id", "input text", "goal",
		"allowed action", "checkpoint id", "afterStep", "cleanup id"} {
		got, full := compile(field)
		if got != want {
			t.Errorf("%s padded with Python's whitespace compiles to another plan", field)
		}
		// What normalization strips is not in the normalized requirement
		// either: the whole plan is the same.
		normalized := slices.Contains([]string{"requirement id", "title", "AC text", "AC id", "AC object text", "flow id", "scenario id", "scenario title", "scenario AC"}, field)
		if normalized && full != wantFull {
			t.Errorf("%s padded with Python's whitespace changes the plan fingerprint", field)
		}
	}
}

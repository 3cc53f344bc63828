package verify

import (
	"testing"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
)

// planTree compiles a fixture and returns its plan as a decoded tree.
func planTree(t *testing.T, fixture string) map[string]any {
	t.Helper()
	b, err := MarshalPlan(compileFixture(t, fixture))
	if err != nil {
		t.Fatal(err)
	}
	v, err := canonjson.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)
}

// resign recomputes the plan fingerprint after an edit, as anyone who
// edits a plan can.
func resign(tree map[string]any) {
	delete(tree, "planFingerprint")
	tree["planFingerprint"] = fingerprint(tree)
}

func scenarioTree(tree map[string]any, i int) map[string]any {
	return tree["intent"].(map[string]any)["scenarios"].([]any)[i].(map[string]any)
}

func segmentTree(tree map[string]any, sc, seg int) map[string]any {
	return scenarioTree(tree, sc)["segments"].([]any)[seg].(map[string]any)
}

// Plans solopi-ai accepts once re-fingerprinted, and we refuse.
func TestStrictValidation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		edit func(tree map[string]any)
		code string
	}{
		{"dynamic cleanup segment", func(tree map[string]any) {
			seg := segmentTree(tree, 0, 2) // hybrid-success cleanup
			dyn := segmentTree(tree, 0, 1)
			seg["route"], seg["dynamicStep"] = "dynamic", dyn["dynamicStep"]
			delete(seg, "case")
		}, fault.CodeDynamicSegmentOutsideTest},
		{"allowed action outside the seven", func(tree map[string]any) {
			step := segmentTree(tree, 0, 1)["dynamicStep"].(map[string]any)
			step["allowedActions"] = []any{"click", "shell"}
		}, fault.CodeUnsupportedAction},
		{"budget out of range", func(tree map[string]any) {
			step := segmentTree(tree, 0, 1)["dynamicStep"].(map[string]any)
			step["budget"].(map[string]any)["maxSteps"] = 5000
		}, fault.CodeInvalidBudget},
		{"node step without selector", func(tree map[string]any) {
			steps := segmentTree(tree, 1, 0)["case"].(map[string]any)["operationLog"].(map[string]any)["steps"].([]any)
			steps[0].(map[string]any)["operationNode"] = nil
		}, fault.CodeMissingSelector},
		{"goal tree disagrees with the intent", func(tree map[string]any) {
			acs := tree["goalTree"].(map[string]any)["children"].([]any)
			acs[0].(map[string]any)["children"] = []any{}
		}, fault.CodeGoalTreeMismatch},
		{"case content no longer matches its name", func(tree map[string]any) {
			steps := segmentTree(tree, 1, 0)["case"].(map[string]any)["operationLog"].(map[string]any)["steps"].([]any)
			steps[2].(map[string]any)["operationMethod"].(map[string]any)["operationParam"].(map[string]any)["assertInputContent"] = "1"
		}, fault.CodeCaseNameMismatch},
		{"unknown field", func(tree map[string]any) {
			segmentTree(tree, 1, 0)["note"] = "hello"
		}, fault.CodeInvalidPlan},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tree := planTree(t, "counter-outcome-matrix")
			c.edit(tree)
			resign(tree)
			// solopi-ai's own checks pass...
			if _, err := checkCompatible(tree); err != nil {
				t.Fatalf("solopi-ai's checks already refuse this edit: %v", err)
			}
			// ...ours do not.
			_, err := validateTree(tree)
			if fault.CodeOf(err) != c.code || fault.KindOf(err) != fault.Invalid {
				t.Errorf("ValidateTree = %v, want %s", err, c.code)
			}
		})
	}
}

func TestSelectorScrollCompilesToAnImportableStep(t *testing.T) {
	t.Parallel()
	doc := newDocument(decodeJSON(t, `{"id":"r","title":"t","targetAppPackage":"p","acceptanceCriteria":["a"],
		"scenarios":[{"id":"s","acceptanceCriteria":["AC-001"],
		"steps":[{"id":"sc","action":{"type":"scroll","direction":"down","distance":30,"selector":{"resourceId":"p:id/list"}}},
		         {"id":"gs","action":{"type":"scroll","direction":"up"}}],
		"checkpoints":[{"id":"c","afterStep":"gs","oracle":{"type":"ui","selector":{"text":"x"},"expected":"x"}}]}]}`))
	p, err := Compile(doc)
	if err != nil {
		t.Fatal(err)
	}
	steps := p.Scenarios[0].Segments[0].Case.Steps
	if steps[0].ActionEnum != "SCROLL_TO_BOTTOM" || steps[0].Params["text"] != "30" || steps[0].Params["distance"] != "30" {
		t.Errorf("selector scroll = %s %v; SoloPi's import needs a text parameter", steps[0].ActionEnum, steps[0].Params)
	}
	if steps[1].ActionEnum != "GLOBAL_SCROLL_TO_TOP" || steps[1].Params["text"] != nil {
		t.Errorf("global scroll = %s %v", steps[1].ActionEnum, steps[1].Params)
	}
}

func TestUngroundedSelectorIsRefusedAtCompile(t *testing.T) {
	t.Parallel()
	doc := newDocument(decodeJSON(t, `{"id":"r","title":"t","targetAppPackage":"p","acceptanceCriteria":["a"],
		"scenarios":[{"id":"s","acceptanceCriteria":["AC-001"],
		"steps":[{"id":"c1","action":{"type":"click","selector":{"className":"android.widget.Button"}}}],
		"checkpoints":[{"id":"c","afterStep":"c1","oracle":{"type":"ui","selector":{"text":"x"},"expected":"x"}}]}]}`))
	if _, err := Compile(doc); fault.CodeOf(err) != fault.CodeMissingSelector {
		t.Errorf("Compile = %v, want %s", err, fault.CodeMissingSelector)
	}
}

func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	v, err := canonjson.Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

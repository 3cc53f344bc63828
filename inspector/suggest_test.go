package inspector

import (
	"encoding/json"
	"testing"

	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/verify"
)

// counterNodes is the counter's screen as the simulator's SoloPi reads it
// (two status labels share a resource id; one is on screen at a time).
func counterNodes() []Node {
	b := func(l, t, r, bt int) *[4]int { return &[4]int{l, t, r, bt} }
	return flattenFor([]Node{
		{ClassName: "android.widget.FrameLayout", Bounds: b(0, 0, 1080, 2340)},
		{ClassName: "android.widget.TextView", Text: "Counter", Bounds: b(0, 63, 1080, 231)},
		{ClassName: "android.widget.TextView", ResourceID: counterPkg + ":id/counter_value", Text: "0", Bounds: b(340, 640, 740, 880)},
		{ClassName: "android.widget.Button", ResourceID: counterPkg + ":id/ok", Text: "OK", Bounds: b(0, 0, 1, 1)},
		{ClassName: "android.widget.Button", ResourceID: counterPkg + ":id/ok", Text: "Cancel", Bounds: b(0, 0, 1, 1)},
		{ClassName: "android.widget.Button", Text: "Same", Bounds: b(0, 0, 1, 1)},
		{ClassName: "android.widget.Button", Text: "Same", Bounds: b(0, 0, 1, 1)},
	})
}

func flattenFor(ns []Node) []Node {
	for i := range ns {
		ns[i].Index, ns[i].Parent, ns[i].PackageName, ns[i].SourceID = i, 0, counterPkg, itoa(1000+i)
	}
	ns[0].Parent = -1
	return ns
}

// The selector is the shortest one that picks the node alone: resourceId
// alone when it is unique, with the text when it is shared, the device's
// node id when nothing else tells the node apart.
func TestSelectorFor(t *testing.T) {
	t.Parallel()
	nodes := counterNodes()
	cases := []struct {
		i      int
		want   string
		unique bool
	}{
		{1, `{"text":"Counter"}`, true},
		{2, `{"resourceId":"com.example.counter:id/counter_value"}`, true},
		{3, `{"text":"OK"}`, true},
		{5, `{"id":"1005"}`, false},
	}
	for _, c := range cases {
		sel, unique := selectorFor(nodes, c.i)
		got, _ := json.Marshal(sel)
		if string(got) != c.want || unique != c.unique {
			t.Errorf("node %d: %s %v, want %s %v", c.i, got, unique, c.want, c.unique)
		}
	}
	nodes[3].Text = "Cancel" // both buttons are now alike but for nothing
	if sel, unique := selectorFor(nodes, 3); unique || sel.ID != "1003" {
		t.Errorf("twin nodes: %+v %v", sel, unique)
	}
}

// The suggested requirement step and checkpoint make a requirement that
// the schema accepts and verify-compile compiles.
func TestSuggestedCheckpointCompiles(t *testing.T) {
	t.Parallel()
	sg, err := suggest(counterNodes(), 2, "")
	if err != nil {
		t.Fatal(err)
	}
	var step, cp map[string]any
	if json.Unmarshal(sg.RequirementStep, &step) != nil || json.Unmarshal(sg.Checkpoint, &cp) != nil {
		t.Fatalf("%s %s", sg.RequirementStep, sg.Checkpoint)
	}
	if cp["afterStep"] != step["id"] || cp["oracle"].(map[string]any)["expected"] != "0" {
		t.Fatalf("checkpoint %s after step %s", sg.Checkpoint, sg.RequirementStep)
	}
	req, _ := json.Marshal(map[string]any{
		"schemaVersion": "solopi.ai.requirement/v1", "id": "inspected", "title": "from the inspector", "targetAppPackage": counterPkg,
		"acceptanceCriteria": []any{map[string]any{"id": "AC-001", "text": "The counter shows 0."}},
		"scenarios": []any{map[string]any{"id": "inspected", "acceptanceCriteria": []string{"AC-001"},
			"steps": []any{step}, "checkpoints": []any{cp}}},
	})
	schematest.Validate(t, "requirement", req)
	doc, err := verify.ParseRequirement(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verify.Compile(doc); err != nil {
		t.Fatalf("the suggested checkpoint does not compile: %v\n%s", err, req)
	}
	if _, err := suggest(counterNodes(), 99, ""); err == nil {
		t.Fatal("a node that is not there was suggested")
	}
}

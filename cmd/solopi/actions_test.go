package main

import (
	"encoding/json"
	"testing"

	"github.com/solopi-dev/solopi/schemas/schematest"
)

// `actions` is a superset of solopi-ai's: its top-level keys and counts,
// every descriptor key (casefile's golden test checks the values), then the
// typed Agent actions. The schema pins the shape, so it must refuse an
// output that lost one of solopi-ai's keys.
func TestActionsIsSolopiAICatalogPlusAgentActions(t *testing.T) {
	t.Parallel()
	r := inProc(t, "actions")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	schematest.Validate(t, "actions", r.stdout)
	var out map[string]any
	if err := json.Unmarshal(r.stdout, &out); err != nil {
		t.Fatal(err)
	}
	counts := out["counts"].(map[string]any)
	for k, want := range map[string]float64{"enumActions": 66, "providerActions": 6, "totalDescriptors": 72, "agentActions": 7} {
		if counts[k] != want {
			t.Errorf("counts.%s = %v, want %v", k, counts[k], want)
		}
	}
	set := schematest.NewSet()
	for name, mutate := range map[string]func(m map[string]any){
		"no requiresNode": func(m map[string]any) {
			delete(m["enumActions"].([]any)[1].(map[string]any), "requiresNode")
		},
		"no runtimeAvailabilityUnknown": func(m map[string]any) {
			delete(m["providerActions"].([]any)[0].(map[string]any), "runtimeAvailabilityUnknown")
		},
		"unreasoned high risk": func(m map[string]any) {
			m["enumActions"].([]any)[1].(map[string]any)["highRisk"] = true
		},
		"agent actions in the total": func(m map[string]any) { m["counts"].(map[string]any)["totalDescriptors"] = 79 },
		"no providerActions":         func(m map[string]any) { delete(m, "providerActions") },
	} {
		var m map[string]any
		_ = json.Unmarshal(r.stdout, &m)
		mutate(m)
		b, _ := json.Marshal(m)
		if err := set.ValidateBytes("actions", b); err == nil {
			t.Errorf("%s: the schema accepted it", name)
		}
	}
}

package canonjson

import (
	"encoding/json"
	"testing"
)

func TestOverlayPrintsWhatTheMergedMapDid(t *testing.T) {
	t.Parallel()
	type host struct {
		Success  bool           `json:"success"`
		RunID    string         `json:"runId,omitempty"`
		Artifact map[string]any `json:"artifacts,omitempty"`
		Note     string         `json:"note"`
	}
	base := map[string]any{"state": "passed", "runId": "device-run", "z": json.Number("12"), "html": "<a&b>"}
	h := host{Success: true, RunID: "r-1", Note: "<ok>"}
	got, err := encodeRaw(Overlay{Base: base, Fields: h})
	if err != nil {
		t.Fatal(err)
	}
	// The map the code used to build by hand, printed the way a command
	// prints (no HTML escaping).
	want, err := encodeRaw(map[string]any{"state": "passed", "runId": "r-1", "z": json.Number("12"), "html": "<a&b>", "success": true, "note": "<ok>"})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("overlay\n got %s\nwant %s", got, want)
	}
	if _, ok := base["success"]; ok {
		t.Fatal("the overlay changed the device's object")
	}
}

func TestOverlayRefusesNonObjectFields(t *testing.T) {
	t.Parallel()
	if _, err := json.Marshal(Overlay{Base: map[string]any{}, Fields: []int{1}}); err == nil {
		t.Fatal("an array of host fields encoded")
	}
	b, err := json.Marshal(Overlay{Base: map[string]any{"a": 1}})
	if err != nil || string(b) != `{"a":1}` {
		t.Fatalf("nil host fields: %s, %v", b, err)
	}
}

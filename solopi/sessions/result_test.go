package sessions

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The structs printed as they are (not through canonjson.Overlay, which
// sorts) declare their fields in the order of their JSON names: the order
// the maps they replaced printed, which the output keeps.
func TestPrintedStructsKeepTheMapKeyOrder(t *testing.T) {
	t.Parallel()
	for _, v := range []any{perfArtifacts{}, perfDirectory{}, pulledFile{}, screenArtifacts{}, screenFile{},
		sessionCleanup{}, pluginCleanup{}, PluginInstallResult{}, PluginRemoveResult{}, PerfHistoryDeleteResult{}} {
		typ := reflect.TypeOf(v)
		var names []string
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			names = append(names, name)
		}
		if !slices.IsSorted(names) {
			t.Errorf("%s declares its JSON keys as %v, not sorted", typ.Name(), names)
		}
	}
}

// A result is the snapshot with the host's fields laid over it: one flat
// object, keys sorted, the host's value winning, unset optional fields
// absent.
func TestStopResultLaysTheHostFieldsOverTheSnapshot(t *testing.T) {
	t.Parallel()
	retries := 0
	res := StopResult{Snapshot: map[string]any{"state": "stopped", "success": "device", "zeta": 1},
		stopFields: stopFields{StopRequests: 1, StopRetries: &retries, Success: true}}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"state":"stopped","stopRequests":1,"stopRetries":0,"success":true,"zeta":1}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}

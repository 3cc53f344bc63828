package schemas

import (
	"encoding/json"
	"slices"
	"testing"
)

// Every embedded schema is listed, in order, and is one JSON object; an
// unknown name is an error naming it.
func TestNamesAndRaw(t *testing.T) {
	t.Parallel()
	names := Names()
	if len(names) < 50 || !slices.IsSorted(names) || !slices.Contains(names, "run") || !slices.Contains(names, "case") {
		t.Fatalf("names: %d, sorted %v: %v", len(names), slices.IsSorted(names), names)
	}
	for _, n := range names {
		b, err := Raw(n)
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := json.Unmarshal(b, &obj); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
	}
	if _, err := Raw("no-such-schema"); err == nil {
		t.Fatal("an unknown schema was found")
	}
}

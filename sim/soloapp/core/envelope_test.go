package core

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/dialect.golden from the current writer")

// TestEncodeGolden pins the device's JSON bytes, byte for byte, on trees
// that reach every rule of the writer: ordered and sorted objects, dropped
// nulls, the number forms, string escapes. The golden was written by the
// simulator's own writer before it moved to protocol.
func TestEncodeGolden(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i, v := range deviceTrees() {
		for _, sorted := range []bool{false, true} {
			fmt.Fprintf(&b, "%d sorted=%v: %s\n", i, sorted, Encode(v, sorted))
		}
	}
	const path = "testdata/dialect.golden"
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, []byte(b.String())) {
		gl, wl := strings.Split(b.String(), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("line %d:\n got %q\nwant %q", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("got %d lines, want %d", len(gl), len(wl))
	}
}

func deviceTrees() []any {
	s, n := "ptr", int64(42)
	var nilStr *string
	var nilInt *int64
	return []any{
		nil, "", true, 0, int64(-7), &s, nilStr, &n, nilInt,
		1.0, 0.2, -3.0, 1e15, 1e21, 123456.789, math.MaxFloat64, 5e-324, -0.0,
		"quote\" backslash\\ slash/ <tag> & amp",
		"\b\t\n\f\r \x00\x01\x1f \x7f \u0080\u009f\u00a0 \u2028\u2029 中文 😀",
		"invalid \xff utf8",
		json.RawMessage("12"), json.RawMessage("-1.5e3"),
		[]string{}, []string{"a", "<b>"}, []any{}, []any{nil, 1, "x", Obj{}},
		[]Obj{}, []Obj{{{K: "b", V: 1}, {K: "a", V: 2}}, nil},
		Obj{}, Obj(nil),
		NewObj("z", 1, "a", nil, "m", nilStr, "k", nilInt, "o", Obj(nil), "r", json.RawMessage(nil), "y", "kept"),
		NewObj("b", NewObj("d", 1, "c", 2), "a", []any{NewObj("y", true, "x", false)}, "B", map[string]any{"q": 1, "p": nil}),
		OK("list", []Obj{NewObj("name", "n", "id", 3)}, "count", 1),
		E1("bad_request", "Bad <request> & \"quotes\""),
		E3("no"),
		map[string]string{"b": "2", "a": "1", "": "e"},
		map[string]any{"b": NewObj("y", 1, "x", 2), "a": nil, "c": map[string]any{"z": nilStr}},
		struct{}{},
		[]int{1},
	}
}

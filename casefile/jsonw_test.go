package casefile

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/dialect/*.golden from the current writer")

// TestDialectGolden pins, byte for byte, every form the case writer
// produces (import file, authoring file, read-back view, the snapshot
// operationLog hashed into caseFingerprint) for every case fixture of this
// package, plus the writer itself on trees that reach each of its rules.
// The goldens were written by casefile's own writer before the dialect
// moved to protocol.EncodeJSON; the only lines that changed then are the
// float64 and []string trees, which the old writer refused and the shared
// one writes (no case tree holds either). Any change of the dialect shows
// here first.
func TestDialectGolden(t *testing.T) {
	t.Parallel()
	inputs, err := dialectFixtures()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, in := range inputs {
		fmt.Fprintf(&b, "=== %s\n", in.name)
		writeCaseForms(&b, in.data)
	}
	compareGolden(t, "testdata/dialect/cases.golden", b.String())

	b.Reset()
	for i, v := range dialectTrees() {
		for _, omit := range []bool{false, true} {
			s, err := encodeJSON(v, omit)
			fmt.Fprintf(&b, "%d omitNull=%v: %s err=%v\n", i, omit, s, err != nil)
		}
	}
	compareGolden(t, "testdata/dialect/trees.golden", b.String())
}

type fixture struct {
	name string
	data []byte
}

// dialectFixtures are the case files of testdata and the case-shaped seeds
// of the parser's fuzz corpus (which hold the odd strings: escapes,
// controls, non-ASCII, huge numbers).
func dialectFixtures() ([]fixture, error) {
	var out []fixture
	files, _ := filepath.Glob("testdata/*.json")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, fixture{filepath.Base(f), data})
	}
	seeds, _ := filepath.Glob("testdata/fuzz/FuzzParse/*")
	for _, f := range seeds {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		// A corpus file is a header line and one []byte("...") literal.
		_, lit, _ := strings.Cut(strings.TrimSpace(string(data)), "\n")
		lit = strings.TrimSuffix(strings.TrimPrefix(lit, "[]byte("), ")")
		s, err := strconv.Unquote(lit)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, fixture{"fuzz/" + filepath.Base(f), []byte(s)})
	}
	return out, nil
}

// writeCaseForms renders every writer output of one case, or the parse
// errors when neither parser takes it.
func writeCaseForms(b *strings.Builder, data []byte) {
	c, err := Parse(data)
	if err != nil {
		fmt.Fprintf(b, "Parse: error\n")
		if c, err = ParseAsDevice(data); err != nil {
			fmt.Fprintf(b, "ParseAsDevice: error\n")
			return
		}
	}
	form := func(name string, out []byte, err error) {
		fmt.Fprintf(b, "--- %s (err=%v)\n%s\n", name, err != nil, out)
	}
	out, err := marshal(c)
	form("Marshal", out, err)
	out, err = MarshalImportFile(c)
	form("MarshalImportFile", out, err)
	out, err = MarshalAuthoring(c)
	form("MarshalAuthoring", out, err)
	out, err = json.Marshal(c)
	form("MarshalJSON", out, err)
	opLog, err := SnapshotOperationLog(c.Steps, "golden-seed")
	form("SnapshotOperationLog", []byte(opLog), err)
	id := int64(7)
	c.ID = &id
	snap, err := Snapshot(c, "golden-seed")
	form("Snapshot.CaseFingerprint", []byte(snap.CaseFingerprint), err)
}

// dialectTrees reach every rule of the writer: each value type, null
// members (kept or dropped), key order, string escapes, embedded raw JSON.
func dialectTrees() []any {
	s := "ptr"
	var nilStr *string
	return []any{
		nil, "", true, false, 0, -1, int64(1) << 62, json.Number("35"), json.Number("1.50"), json.Number("-0e+10"),
		"quote\" backslash\\ slash/ <tag> & amp",
		"\b\t\n\f\r \x00\x01\x1f \x7f \u0080\u009f\u00a0 \u2028\u2029 中文 😀",
		"invalid \xff utf8",
		&s, nilStr,
		[]any{}, map[string]any{},
		[]any{nil, nilStr, "a", 1, []any{map[string]any{}}},
		map[string]any{"b": 1, "a": nil, "c": nilStr, "B": "x", "é": true, "": "empty", "10": 1, "9": 2},
		map[string]any{"raw": json.RawMessage(`{"z":1,"a":[1.0,"<>",null],"m":{"y":null,"x":2}}`), "null": json.RawMessage("null"), "nilraw": json.RawMessage(nil)},
		map[string]any{"nested": map[string]any{"k": []any{map[string]any{"z": nil, "y": "v"}}}},
		json.RawMessage(` [ 1 , 2 ] `),
		json.RawMessage(`{bad`),
		map[string]any{"bad": struct{}{}},
		float64(1.5),
		[]string{"x"},
	}
}

func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestDialectGolden -update to create it)", err)
	}
	if !bytes.Equal(want, []byte(got)) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs at line %d:\n got %q\nwant %q", path, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s differs in length: got %d lines, want %d", path, len(gl), len(wl))
	}
}

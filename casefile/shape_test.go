package casefile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// caseSchema is case.schema.json compiled once through the JSON Schema
// library, with content assertions on (operationLog strings are checked).
var caseSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	b, err := os.ReadFile("case.schema.json")
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertContent = true
	c.LoadURL = func(url string) (io.ReadCloser, error) {
		if url == schemaURL {
			return io.NopCloser(bytes.NewReader(b)), nil
		}
		return nil, fmt.Errorf("not embedded: %s", url)
	}
	return c.Compile(schemaURL)
})

// schemaAccepts is the reference: whether case.schema.json accepts doc.
func schemaAccepts(t testing.TB, doc any) bool {
	t.Helper()
	sch, err := caseSchema()
	if err != nil {
		t.Fatal(err)
	}
	return sch.Validate(doc) == nil
}

func decodeDoc(t testing.TB, b []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	return v, true
}

func shapeAgrees(t *testing.T, name string, b []byte) {
	t.Helper()
	doc, ok := decodeDoc(t, b)
	if !ok {
		return
	}
	want := schemaAccepts(t, doc)
	got := CheckShape(doc)
	if want != (len(got) == 0) {
		t.Errorf("%s: schema accepts=%v, CheckShape=%v\n%s", name, want, got, b)
	}
}

// mutations replaces one value at a time with values of every kind, so each
// property's type rule is exercised on both sides.
func mutations(doc any) []any {
	replacements := []any{nil, true, "", " ", "x", json.Number("-1"), json.Number("1"), json.Number("1.5"), json.Number("3"),
		map[string]any{}, []any{}, `{"steps":[]}`, `{"steps":[{"operationMethod":{"actionEnum":"CLICK"}}]}`, "{}", "null"}
	var out []any
	var walk func(v any, set func(any))
	walk = func(v any, set func(any)) {
		for _, r := range replacements {
			set(r)
			out = append(out, deepCopy(root))
		}
		set(v)
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(e, func(n any) { x[k] = n })
			}
			for _, drop := range sortedKeys(x) {
				saved := x[drop]
				delete(x, drop)
				out = append(out, deepCopy(root))
				x[drop] = saved
			}
		case []any:
			for i, e := range x {
				walk(e, func(n any) { x[i] = n })
			}
		}
	}
	root = doc
	walk(doc, func(n any) { root = n })
	return out
}

var root any

func deepCopy(v any) any {
	b, _ := json.Marshal(v)
	c, _ := decodeDoc(nil, b)
	return c
}

func TestCheckShapeAgreesWithSchema(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/*.json")
	if len(files) == 0 {
		t.Fatal("no case files in testdata")
	}
	seeds := [][]byte{
		[]byte(`{"caseName":5,"targetAppPackage":"x","operationLog":{"steps":[]}}`),
		[]byte(`{"caseName":"a","targetAppPackage":"x","operationLog":"{\"steps\":[{\"operationMethod\":{\"actionEnum\":\"CLICK\",\"operationParam\":{\"a\":1}},\"operationNode\":{\"id\":3,\"nodeBound\":{\"left\":1.0}}}]}","advanceSettings":"{\"runningParam\":{\"mode\":\"UNION\",\"paramList\":[{\"k\":\"v\"}]}}","priority":2}`),
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	n := 0
	for i, b := range seeds {
		shapeAgrees(t, fmt.Sprintf("seed %d", i), b)
		doc, ok := decodeDoc(t, b)
		if !ok {
			continue
		}
		for j, m := range mutations(doc) {
			mb, _ := json.Marshal(m)
			shapeAgrees(t, fmt.Sprintf("seed %d mutation %d", i, j), mb)
			n++
		}
	}
	t.Logf("%d mutated documents agree", n)
}

func TestCheckShapeReportsPointers(t *testing.T) {
	t.Parallel()
	doc, _ := decodeDoc(t, []byte(`{"caseName":" ","targetAppPackage":"x","operationLog":{"steps":[{"operationMethod":{"actionEnum":""}}]},"priority":7}`))
	got := CheckShape(doc)
	want := []string{"/caseName", "/operationLog/steps/0/operationMethod/actionEnum", "/priority"}
	if len(got) != len(want) {
		t.Fatalf("violations %v", got)
	}
	for i, v := range got {
		if v.Instance != want[i] || v.Message == "" {
			t.Errorf("violation %d = %+v, want instance %s", i, v, want[i])
		}
	}
}

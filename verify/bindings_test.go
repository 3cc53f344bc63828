package verify

import (
	"encoding/json"
	"testing"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
)

func TestResolveSpellsPythonStr(t *testing.T) {
	t.Parallel()
	s := scope{
		"b": true, "n": nil, "f": json.Number("1.0"), "big": json.Number("1e16"), "small": json.Number("1e-7"),
		"i": json.Number("3"), "neg": json.Number("-0"), "o": map[string]any{"a": json.Number("1")}, "t": "x",
	}
	got, err := resolve("v=${b}/${n}/${f}/${big}/${small}/${i}/${neg}/${t}", s, "loc")
	if err != nil || got != "v=True/None/1.0/1e+16/1e-07/3/0/x" {
		t.Errorf("embedded = %v, %v", got, err)
	}
	// A whole-string placeholder keeps the value's JSON type.
	for name, want := range map[string]string{"b": "true", "n": "null", "f": "1.0", "big": "1e+16", "o": `{"a":1}`} {
		v, err := resolve("${"+name+"}", s, "loc")
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := canonjson.Marshal(v); string(b) != want {
			t.Errorf("${%s} = %s, want %s", name, b, want)
		}
	}
	if _, err := resolve("x${o}", s, "loc"); fault.CodeOf(err) != fault.CodeInvalidBinding {
		t.Errorf("embedding an object = %v", err)
	}
	if _, err := resolve([]any{"${nope}"}, s, "loc"); fault.CodeOf(err) != fault.CodeUnresolvedBinding {
		t.Errorf("undefined = %v", err)
	}
}

// solopi-ai resolves a binding map in passes over its keys in written
// order, each pass seeing only what earlier passes resolved: a key may
// refer to a sibling written after it, not before it. We accept and
// refuse exactly the same maps.
func TestResolveMapFollowsWrittenOrder(t *testing.T) {
	t.Parallel()
	doc, err := ParseRequirement([]byte(`{"later":{"x":"${y}","y":"1"},"earlier":{"y":"1","x":"${y}"},"cycle":{"a":"${b}","b":"${a}"}}`))
	if err != nil {
		t.Fatal(err)
	}
	tree := doc.Tree.(map[string]any)
	m := func(key string) bindingMap { return doc.bindingMap("/"+key, tree[key].(map[string]any)) }
	if got, err := resolveMap(m("later"), scope{}, "t"); err != nil || got["x"] != "1" {
		t.Errorf("later sibling = %v, %v", got, err)
	}
	if _, err := resolveMap(m("earlier"), scope{}, "t"); fault.CodeOf(err) != fault.CodeUnresolvedBinding {
		t.Errorf("earlier sibling = %v, want unresolved_binding as solopi-ai", err)
	}
	if _, err := resolveMap(m("cycle"), scope{}, "t"); fault.CodeOf(err) != fault.CodeUnresolvedBinding {
		t.Errorf("cycle = %v", err)
	}
}

package oracle

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Selector values compare as Python's == does in solopi-ai: numbers and
// booleans by value (1 == 1.0 == True), strings only with strings, None
// only with None (an absent key), containers element by element.
func TestPyEqualIsPythonEquality(t *testing.T) {
	t.Parallel()
	cases := []struct {
		a, b any
		want bool
	}{
		{json.Number("1"), json.Number("1.0"), true},
		{json.Number("1"), true, true},
		{false, json.Number("0"), true},
		{float64(2.5), json.Number("2.5"), true},
		{int(3), int64(3), true},
		{json.Number("0.1"), float64(0.1), true},
		// 0.1 as Python reads it is a double, not the decimal 1/10.
		{json.Number("0.10000000000000000001"), float64(0.1), true},
		{json.Number("1"), "1", false},
		{"1", json.Number("1"), false},
		{"a", "a", true},
		{"a", "b", false},
		{nil, nil, true},
		{nil, "", false},
		{"", nil, false},
		{[]any{json.Number("1"), "x"}, []any{true, "x"}, true},
		{[]any{json.Number("1")}, []any{json.Number("1"), json.Number("2")}, false},
		{[]any{}, map[string]any{}, false},
		{map[string]any{"k": json.Number("1")}, map[string]any{"k": json.Number("1.0")}, true},
		{map[string]any{"k": "v"}, map[string]any{"j": "v"}, false},
		{map[string]any{"k": "v"}, map[string]any{"k": "v", "j": nil}, false},
		{map[string]any{"k": "v"}, []any{"k"}, false},
		{json.Number("not a number"), json.Number("1"), false},
		{struct{}{}, struct{}{}, false},
	}
	for _, c := range cases {
		if got := PyEqual(c.a, c.b); got != c.want {
			t.Errorf("PyEqual(%#v, %#v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// A non-string field is read as Python's str() of it, strings inside a
// container as repr(): the actual value a report shows is solopi-ai's.
func TestReadFieldIsPythonStr(t *testing.T) {
	t.Parallel()
	cases := []struct {
		v    any
		want string
	}{
		{json.Number("3"), "3"},
		{true, "True"},
		{nil, "None"},
		{[]any{"a'b", `a"b`, "it's \"x\"", "tab\there", "nl\nx\r", "\\", "\x01\x7f", "ünï"},
			`["a'b", 'a"b', 'it\'s "x"', 'tab\there', 'nl\nx\r', '\\', '\x01\x7f', 'ünï']`},
		{map[string]any{"b": []any{}, "a": map[string]any{}}, `{'a': {}, 'b': []}`},
	}
	for _, c := range cases {
		if got := readField(map[string]any{"text": c.v}, "text"); got != c.want {
			t.Errorf("str(%#v) = %s, want %s", c.v, got, c.want)
		}
	}
	if got := readField(map[string]any{}, "text"); got != "" {
		t.Errorf("an absent field reads %q, want empty", got)
	}
	// A value canonical JSON does not know is still shown, not dropped.
	if got := pyStr(struct{ X int }{7}); got != "{7}" {
		t.Errorf("pyStr of a foreign value = %q", got)
	}
}

// Evaluate compares the field it reads with Python's str(): a numeric text
// field equals its digits, a selector on a boolean matches 1.
func TestEvaluateNonStringFields(t *testing.T) {
	t.Parallel()
	page := map[string]any{"className": "root", "children": []any{
		map[string]any{"resourceId": "count", "text": json.Number("42"), "checked": true},
		"not a node",
		map[string]any{"resourceId": "flag", "description": false},
	}}
	o, err := NewUI(Selector{"resourceId": "count", "checked": json.Number("1")}, FieldText, OpEquals, "42")
	if err != nil {
		t.Fatal(err)
	}
	if r := o.Evaluate(map[string]any{"page": page}); r.Status != Passed || *r.Actual != "42" {
		t.Fatalf("numeric text: %+v", r)
	}
	o, _ = NewUI(Selector{"resourceId": "flag"}, FieldDescription, OpContains, "Fal")
	if r := o.Evaluate(map[string]any{"page": page}); r.Status != Passed || *r.Actual != "False" {
		t.Fatalf("boolean description: %+v", r)
	}
	o, _ = NewUI(Selector{"resourceId": "flag", "text": nil}, FieldText, OpEquals, "x")
	if r := o.Evaluate(map[string]any{"page": page}); r.Status != failed || r.Reason != reasonMismatch || *r.Actual != "" {
		t.Fatalf("absent text: %+v", r)
	}
}

// NewUI refuses a field or operator the plan schema does not know, and a
// pattern Python would refuse; Tree is the oracle as the plan writes it.
func TestNewUIAndTree(t *testing.T) {
	t.Parallel()
	if _, err := NewUI(Selector{}, "className", OpEquals, "x"); err == nil {
		t.Error("field className accepted")
	}
	if _, err := NewUI(Selector{}, FieldText, "startsWith", "x"); err == nil {
		t.Error("operator startsWith accepted")
	}
	if _, err := NewUI(Selector{}, FieldText, OpMatches, "(unclosed"); err == nil {
		t.Error("an invalid pattern accepted")
	}
	o, err := NewUI(Selector{"resourceId": "r"}, FieldDescription, OpMatches, "^a+$")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"type": "ui", "selector": map[string]any{"resourceId": "r"}, "field": "description",
		"operator": "matches", "expected": "^a+$"}
	if got := o.Tree(); !reflect.DeepEqual(got, want) {
		t.Errorf("Tree() = %v, want %v", got, want)
	}
}

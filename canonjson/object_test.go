package canonjson

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"testing"
)

func TestIntegerIsPythonsInt(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in    any
		n     int64
		ok    bool
		isInt bool
	}{
		{json.Number("42"), 42, true, true},
		{json.Number("-0"), 0, true, true},
		{json.Number("1.0"), 0, false, false},
		{json.Number("1e2"), 0, false, false},
		{json.Number("1E2"), 0, false, false},
		{json.Number("99999999999999999999"), math.MaxInt64, false, true},
		{json.Number("-99999999999999999999"), math.MinInt64, false, true},
		{json.Number("x"), 0, false, false},
		{int(7), 7, true, true},
		{int64(-7), -7, true, true},
		{int32(3), 3, true, true},
		{7.0, 0, false, false},
		{float(7), 0, false, false},
		{true, 0, false, false},
		{"7", 0, false, false},
		{nil, 0, false, false},
	} {
		n, ok := Integer(c.in)
		if n != c.n || ok != c.ok || IsInt(c.in) != c.isInt {
			t.Errorf("Integer(%#v) = %d, %v (IsInt %v); want %d, %v (%v)", c.in, n, ok, IsInt(c.in), c.n, c.ok, c.isInt)
		}
	}
}

func TestNumberIsFinite(t *testing.T) {
	t.Parallel()
	for in, want := range map[any]bool{json.Number("1.5"): true, json.Number("1e400"): false, 2.5: true, math.Inf(1): false,
		math.NaN(): false, float(1): true, int64(3): true, 3: true, "3": false, true: false} {
		if _, ok := Number(in); ok != want {
			t.Errorf("Number(%#v) ok = %v, want %v", in, ok, want)
		}
	}
}

func TestObjectAccessors(t *testing.T) {
	t.Parallel()
	v, err := Decode([]byte(`{"s":"x","n":12,"f":1.5,"b":true,"z":null,"o":{"k":"v"},
		"l":["a",1,{"x":1},null],"ss":["a","b"],"os":[{"a":1},"no",{"b":2}]}`))
	if err != nil {
		t.Fatal(err)
	}
	o := Object(v.(map[string]any))
	if !o.Has("s") || o.Has("z") || o.Has("missing") {
		t.Error("Has: null and absent are absent")
	}
	if o.Str("s") != "x" || o.Str("n") != "" {
		t.Error("Str")
	}
	if s, ok := o.Text("n"); ok || s != "" {
		t.Error("Text of a number")
	}
	if o.Display("s") != "x" || o.Display("n") != "12" || o.Display("b") != "true" || o.Display("o") != "" {
		t.Error("Display")
	}
	if b, ok := o.Flag("b"); !b || !ok {
		t.Error("Flag")
	}
	if b, ok := o.FlagOrFalse("z"); b || !ok {
		t.Error("FlagOrFalse of null")
	}
	if _, ok := o.FlagOrFalse("s"); ok {
		t.Error("FlagOrFalse of a string")
	}
	if n, ok := o.Integer("n"); n != 12 || !ok {
		t.Error("Integer")
	}
	if _, ok := o.Integer("f"); ok {
		t.Error("Integer of a float")
	}
	if f, ok := o.Number("f"); f != 1.5 || !ok {
		t.Error("Number")
	}
	if ss, ok := o.Strings("ss"); !ok || !reflect.DeepEqual(ss, []string{"a", "b"}) {
		t.Error("Strings")
	}
	if _, ok := o.Strings("l"); ok {
		t.Error("Strings of a mixed list")
	}
	if got := o.Texts("l"); !reflect.DeepEqual(got, []string{"a", "1"}) {
		t.Errorf("Texts = %q", got)
	}
	if o.Object("o").Str("k") != "v" || o.Object("s") != nil || o.Object("missing").Str("k") != "" {
		t.Error("Object")
	}
	if os := o.Objects("os"); len(os) != 2 || os[1].Display("b") != "2" || len(o.Objects("s")) != 0 {
		t.Errorf("Objects = %v", os)
	}
	c := o.Clone()
	c["new"] = 1
	if o.Has("new") {
		t.Error("Clone shares the map")
	}
	if Get(o, "z", "def") != nil || Get(o, "missing", "def") != "def" {
		t.Error("Get is dict.get: a present null is kept")
	}
	if u := UnknownKeys(map[string]any{"b": 1, "a": 2, "ok": 3}, "ok"); !reflect.DeepEqual(u, []string{"a", "b"}) {
		t.Errorf("UnknownKeys = %v", u)
	}
}

func TestRefuse(t *testing.T) {
	t.Parallel()
	var got []string
	r := Refuse(func(label, want string) error {
		got = append(got, label+" must be "+want)
		return errors.New("refused")
	})
	m, err := r.Object(map[string]any{"a": 1}, "x")
	// A tree built from what Object returns must still hold plain maps.
	if _, plain := any(m).(map[string]any); err != nil || !plain {
		t.Fatalf("Object = %T, %v", m, err)
	}
	if _, err := r.Object([]any{}, "x"); err == nil {
		t.Error("an array is no object")
	}
	if l, err := r.List([]any{}, "l", true); err != nil || l == nil {
		t.Error("an empty list when allowed")
	}
	if _, err := r.List([]any{}, "l", false); err == nil {
		t.Error("an empty list when not allowed")
	}
	if _, err := r.List(map[string]any{}, "l", true); err == nil {
		t.Error("an object is no list")
	}
	want := []string{"x must be a JSON object", "l must be a non-empty list", "l must be a list"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("refusals %q, want %q", got, want)
	}
}

package canonjson

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
)

// The one way the host reads fields of a decoded tree: typed accessors that
// report a missing or mistyped field (ok=false, or the zero value) instead
// of panicking, with one rule per type. Integers are Python's: a number
// written without '.', 'e' or 'E', never a boolean or a float; numbers are
// finite floats; a JSON null counts as absent for Has.

// Object is a decoded JSON object, as a view for reading: Object(m).Str("k")
// reads a plain map. A value read through it is still a map[string]any:
// trees hold plain maps (a type switch on map[string]any must see them), so
// the functions below that return an object for building trees
// (Refuse.Object) return a plain map.
type Object map[string]any

// Has reports a present, non-null field.
func (o Object) Has(k string) bool { v, ok := o[k]; return ok && v != nil }

// Str reads a string field, "" when it is absent or not a string.
func (o Object) Str(k string) string {
	s, _ := o[k].(string)
	return s
}

// Text reads a string field; ok is false when it is absent or not a string.
func (o Object) Text(k string) (string, bool) {
	s, ok := o[k].(string)
	return s, ok
}

// Display is a scalar field as a reader sees it: a string as it is, a
// number as written, a boolean as true or false, "" for anything else.
// Renderers use it for evidence an older or newer version may have typed
// differently.
func (o Object) Display(k string) string {
	switch v := o[k].(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

// Flag reads a boolean field.
func (o Object) Flag(k string) (bool, bool) {
	b, ok := o[k].(bool)
	return b, ok
}

// FlagOrFalse reads an optional boolean: absent (or null) is false, a
// non-boolean is reported through ok=false.
func (o Object) FlagOrFalse(k string) (bool, bool) {
	if !o.Has(k) {
		return false, true
	}
	return o.Flag(k)
}

// Integer reads an integer field (see Integer).
func (o Object) Integer(k string) (int64, bool) { return Integer(o[k]) }

// Number reads a finite number field.
func (o Object) Number(k string) (float64, bool) { return Number(o[k]) }

// Strings reads an array of strings; ok is false when it is absent, not an
// array, or holds anything but strings.
func (o Object) Strings(k string) ([]string, bool) {
	arr, ok := o[k].([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(arr))
	for _, v := range arr {
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// Texts reads an array field as a renderer does (see Display): its strings,
// and its numbers as written; other elements are skipped.
func (o Object) Texts(k string) []string {
	list, _ := o[k].([]any)
	out := make([]string, 0, len(list))
	for _, v := range list {
		switch s := v.(type) {
		case string:
			out = append(out, s)
		case json.Number:
			out = append(out, s.String())
		}
	}
	return out
}

// Object reads an object field, nil when it is absent or not an object.
func (o Object) Object(k string) Object {
	m, _ := o[k].(map[string]any)
	return m
}

// Objects reads the objects of an array field, skipping other elements;
// empty when the field is absent or not an array.
func (o Object) Objects(k string) []Object {
	list, _ := o[k].([]any)
	out := make([]Object, 0, len(list))
	for _, v := range list {
		if m, ok := v.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// Clone copies the top level so that callers can add fields safely.
func (o Object) Clone() map[string]any {
	m := make(map[string]any, len(o)+4)
	for k, v := range o {
		m[k] = v
	}
	return m
}

// Get is Python's dict.get(k, def): def only when k is absent from m (a
// present null is nil).
func Get(m map[string]any, k string, def any) any {
	if v, ok := m[k]; ok {
		return v
	}
	return def
}

// UnknownKeys lists, sorted, the keys of m outside allowed.
func UnknownKeys(m map[string]any, allowed ...string) []string {
	var out []string
	for k := range m {
		if !slices.Contains(allowed, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Integer reads v as an exact integer: a json.Number Python reads as an
// int, or a Go integer. An integer outside int64 is ok=false with the
// nearest bound as n, as strconv.ParseInt does; IsInt tells it from a
// value that is no integer at all.
func Integer(v any) (n int64, ok bool) {
	switch x := v.(type) {
	case json.Number:
		if !IsInteger(x) {
			return 0, false
		}
		n, err := strconv.ParseInt(string(x), 10, 64)
		return n, err == nil
	case int:
		return int64(x), true
	case int64:
		return x, true
	case int32:
		return int64(x), true
	}
	return 0, false
}

// IsInt reports whether v is an integer of any size (Python's
// isinstance(v, int) minus bool).
func IsInt(v any) bool {
	switch x := v.(type) {
	case json.Number:
		if !IsInteger(x) {
			return false
		}
		_, err := strconv.ParseInt(string(x), 10, 64)
		return err == nil || errors.Is(err, strconv.ErrRange)
	case int, int64, int32:
		return true
	}
	return false
}

// Number reads v as a finite float: a json.Number or a Go number.
func Number(v any) (float64, bool) {
	var f float64
	switch x := v.(type) {
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			return 0, false
		}
	case float64:
		f = x
	case float:
		f = float64(x)
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	default:
		return 0, false
	}
	return f, !math.IsInf(f, 0) && !math.IsNaN(f)
}

// Refuse makes a contract's error for a value at label that is not want
// ("a JSON object", "a list", "a non-empty list"). Validators of different
// contracts (requirements and plans, managed requests) read trees with the
// same rules through it and keep their own error codes and fields.
type Refuse func(label, want string) error

// Object reads v as an object, refusing anything else.
func (r Refuse) Object(v any, label string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, r(label, "a JSON object")
	}
	return m, nil
}

// List reads v as an array, refusing anything else and, unless allowEmpty,
// an empty one.
func (r Refuse) List(v any, label string, allowEmpty bool) ([]any, error) {
	l, ok := v.([]any)
	switch {
	case !ok && allowEmpty:
		return nil, r(label, "a list")
	case !ok || (!allowEmpty && len(l) == 0):
		return nil, r(label, "a non-empty list")
	}
	return l, nil
}

package execution

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/solopi-dev/solopi/canonjson"
)

// Everything the engine writes (receipts, device answers, errors and their
// details, provider outputs, events, the report) passes through
// evidenceTree on its way into a file. The ports and providers may hand
// over whatever they have (typed structs in an error's details, a float a
// model computed, bytes a device sent that are not UTF-8): the engine never
// fails to record an answer because of its form, so a verdict is always
// written.

// maxEvidenceDepth bounds the nesting evidenceTree follows (a value that
// refers to itself would otherwise never end).
const maxEvidenceDepth = 256

// evidenceTree returns v as a JSON tree canonical JSON always writes: maps
// with string keys, lists, valid UTF-8 strings, booleans, null and finite
// numbers. A value of any other type is taken in its encoding/json form
// (struct tags, MarshalJSON, a redact.Secret's marker); what has no JSON
// form (NaN, infinities, a channel, a function, a cycle) is replaced by a
// text saying what it was, never dropped silently and never an error;
// the rest of a typed value that holds one is kept.
func evidenceTree(v any) any { return toEvidence(v, 0) }

func toEvidence(v any, depth int) any {
	if depth > maxEvidenceDepth {
		return "[not encodable: nested more than " + strconv.Itoa(maxEvidenceDepth) + " levels deep]"
	}
	switch x := v.(type) {
	case nil, bool, int, int64:
		return x
	case string:
		return strings.ToValidUTF8(x, "\uFFFD")
	case json.Number:
		if _, err := canonjson.NumberText(x); err != nil {
			return strings.ToValidUTF8(string(x), "\uFFFD")
		}
		return x
	case float64:
		return finite(x)
	case float32:
		return finite(float64(x))
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[strings.ToValidUTF8(k, "\uFFFD")] = toEvidence(e, depth+1)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toEvidence(e, depth+1)
		}
		return out
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if _, custom := v.(json.Marshaler); !custom {
			return json.Number(fmt.Sprint(v))
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		// Somewhere inside is a value without a JSON form: take the
		// value apart so that only that one is replaced.
		return reflectEvidence(rv, v, err, depth)
	}
	t, err := canonjson.Decode(b)
	if err != nil {
		return notEncodable(v, err)
	}
	return toEvidence(t, depth+1)
}

// reflectEvidence is a value encoding/json refused (err), field by field
// and element by element as encoding/json would write it.
func reflectEvidence(rv reflect.Value, v any, err error, depth int) any {
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !rv.IsNil() {
			return toEvidence(rv.Elem().Interface(), depth+1)
		}
		return nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			break
		}
		out := map[string]any{}
		for it := rv.MapRange(); it.Next(); {
			out[strings.ToValidUTF8(it.Key().String(), "\uFFFD")] = toEvidence(it.Value().Interface(), depth+1)
		}
		return out
	case reflect.Slice, reflect.Array:
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = toEvidence(rv.Index(i).Interface(), depth+1)
		}
		return out
	case reflect.Struct:
		out := map[string]any{}
		t := rv.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			out[name] = toEvidence(rv.Field(i).Interface(), depth+1)
		}
		return out
	}
	return notEncodable(v, err)
}

// finite keeps a finite float; NaN and the infinities, which JSON cannot
// carry, become their Python spelling as text.
func finite(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return f
}

func notEncodable(v any, err error) string {
	return strings.ToValidUTF8(fmt.Sprintf("[not encodable: %T: %v]", v, err), "\uFFFD")
}

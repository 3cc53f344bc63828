package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/solopi-dev/solopi/canonjson"
)

// SoloPi's JSON dialect (docs/device-protocol.md#json-on-the-wire). The
// device serializes everything with fastjson 1.2, which encoding/json cannot
// imitate: it escapes <, > and & (fastjson does not), its string escapes
// differ, it drops null members and writes doubles with a fraction. The
// host's case writer (casefile) and the simulated device (sim/soloapp) both
// write through EncodeJSON, so the two sides produce the same bytes by
// construction; the case snapshot is hashed into caseFingerprint byte for
// byte.

// JSONObject is an ordered JSON object: a Java LinkedHashMap, written in
// insertion order unless JSONOptions.SortKeys is set.
type JSONObject []JSONMember

// JSONMember is one member of a JSONObject.
type JSONMember struct {
	K string
	V any
}

// NewJSONObject builds an object from alternating keys and values.
func NewJSONObject(kvs ...any) JSONObject {
	o := make(JSONObject, 0, len(kvs)/2)
	for i := 0; i+1 < len(kvs); i += 2 {
		o.Set(kvs[i].(string), kvs[i+1])
	}
	return o
}

// Set replaces k's value or appends it, keeping the first position (Java
// LinkedHashMap.put semantics).
func (o *JSONObject) Set(k string, v any) *JSONObject {
	for i := range *o {
		if (*o)[i].K == k {
			(*o)[i].V = v
			return o
		}
	}
	*o = append(*o, JSONMember{k, v})
	return o
}

// Get returns k's value or nil.
func (o JSONObject) Get(k string) any {
	for _, e := range o {
		if e.K == k {
			return e.V
		}
	}
	return nil
}

// Del removes k.
func (o *JSONObject) Del(k string) {
	*o = slices.DeleteFunc(*o, func(e JSONMember) bool { return e.K == k })
}

// Clone copies the top level (nested objects are shared).
func (o JSONObject) Clone() JSONObject { return slices.Clone(o) }

// JSONOptions selects between the dialect's uses. The zero value is
// fastjson's default features: objects in insertion order, null members
// dropped.
type JSONOptions struct {
	// SortKeys sorts the members of every JSONObject (fastjson's
	// MapSortField: tree hashes, case snapshots). Maps are always sorted
	// (fastjson's bean property order).
	SortKeys bool
	// KeepNulls writes null members instead of dropping them (the case
	// files' own form). Array elements are never dropped.
	KeepNulls bool
}

// EncodeJSON writes v compactly in the dialect. Values are trees of nil,
// string, *string, bool, int, int64, *int64, float64, json.Number,
// json.RawMessage (an embedded document, re-encoded by these rules with its
// numbers kept verbatim), []any, []string, []JSONObject, JSONObject,
// map[string]any and map[string]string.
//
// A value of any other type is a programming error: the output stays
// complete JSON, with the string "!unsupported <type>" in its place, and the
// first such error is returned.
func EncodeJSON(v any, o JSONOptions) ([]byte, error) {
	w := jsonWriter{JSONOptions: o}
	w.value(v)
	return w.buf.Bytes(), w.err
}

type jsonWriter struct {
	JSONOptions
	buf bytes.Buffer
	err error // the first value that could not be encoded
}

func (w *jsonWriter) value(v any) {
	buf := &w.buf
	switch x := v.(type) {
	case nil:
		buf.WriteString("null")
	case string:
		WriteJSONString(buf, x)
	case *string:
		if x == nil {
			buf.WriteString("null")
		} else {
			WriteJSONString(buf, *x)
		}
	case bool:
		buf.WriteString(strconv.FormatBool(x))
	case int:
		buf.WriteString(strconv.Itoa(x))
	case int64:
		buf.WriteString(strconv.FormatInt(x, 10))
	case *int64:
		if x == nil {
			buf.WriteString("null")
		} else {
			buf.WriteString(strconv.FormatInt(*x, 10))
		}
	case float64:
		// fastjson writes doubles with a decimal point (1.0, 0.2).
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			buf.WriteString(strconv.FormatFloat(x, 'f', 1, 64))
		} else {
			buf.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		}
	case json.Number:
		buf.WriteString(x.String())
	case json.RawMessage:
		g, err := canonjson.Decode(x) // numbers verbatim: 35 stays 35
		if err != nil {
			w.unsupported(v, err)
			return
		}
		w.value(g)
	case []string:
		writeArray(w, x, w.string)
	case []any:
		writeArray(w, x, w.value)
	case []JSONObject:
		writeArray(w, x, w.object)
	case JSONObject:
		w.object(x)
	case map[string]any:
		writeMap(w, x, w.value)
	case map[string]string:
		writeMap(w, x, w.string)
	default:
		w.unsupported(v, nil)
	}
}

func (w *jsonWriter) string(s string) { WriteJSONString(&w.buf, s) }

func writeArray[T any](w *jsonWriter, xs []T, write func(T)) {
	w.buf.WriteByte('[')
	for i, x := range xs {
		if i > 0 {
			w.buf.WriteByte(',')
		}
		write(x)
	}
	w.buf.WriteByte(']')
}

// writeMap writes a map with its keys sorted (fastjson's bean property
// order), leaving out null members unless KeepNulls.
func writeMap[V any](w *jsonWriter, m map[string]V, write func(V)) {
	keys := make([]string, 0, len(m))
	for k, e := range m {
		if w.KeepNulls || !isJSONNull(e) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	w.buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			w.buf.WriteByte(',')
		}
		w.string(k)
		w.buf.WriteByte(':')
		write(m[k])
	}
	w.buf.WriteByte('}')
}

func (w *jsonWriter) object(o JSONObject) {
	if w.SortKeys {
		o = slices.Clone(o)
		slices.SortStableFunc(o, func(a, b JSONMember) int { return strings.Compare(a.K, b.K) })
	}
	w.buf.WriteByte('{')
	first := true
	for _, e := range o {
		if !w.KeepNulls && isJSONNull(e.V) {
			continue
		}
		if !first {
			w.buf.WriteByte(',')
		}
		first = false
		WriteJSONString(&w.buf, e.K)
		w.buf.WriteByte(':')
		w.value(e.V)
	}
	w.buf.WriteByte('}')
}

func (w *jsonWriter) unsupported(v any, cause error) {
	if w.err == nil {
		w.err = fmt.Errorf("protocol: cannot encode %T as SoloPi JSON", v)
		if cause != nil {
			w.err = fmt.Errorf("%w: %w", w.err, cause)
		}
	}
	WriteJSONString(&w.buf, fmt.Sprintf("!unsupported %T", v))
}

// isJSONNull reports whether a member's value is null, which fastjson's
// default features leave out of the object.
func isJSONNull(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case *string:
		return x == nil
	case *int64:
		return x == nil
	case JSONObject:
		return x == nil
	case json.RawMessage:
		return x == nil || string(bytes.TrimSpace(x)) == "null"
	}
	return false
}

// WriteJSONString escapes like fastjson 1.2's SerializeWriter with the
// default features: the short escapes \b \t \n \f \r, \" and \\, other C0
// controls, U+007F..U+009F and U+2028/U+2029 as \uXXXX (uppercase hex);
// everything else, including '/', '<' and non-ASCII text, is written raw.
func WriteJSONString(buf *bytes.Buffer, s string) {
	const digits = "0123456789ABCDEF"
	buf.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			buf.WriteString(`\"`)
		case r == '\\':
			buf.WriteString(`\\`)
		case r == '\b':
			buf.WriteString(`\b`)
		case r == '\t':
			buf.WriteString(`\t`)
		case r == '\n':
			buf.WriteString(`\n`)
		case r == '\f':
			buf.WriteString(`\f`)
		case r == '\r':
			buf.WriteString(`\r`)
		case r < 0x20 || (r >= 0x7F && r < 0xA0) || r == 0x2028 || r == 0x2029:
			buf.WriteString(`\u`)
			buf.WriteByte(digits[(r>>12)&0xF])
			buf.WriteByte(digits[(r>>8)&0xF])
			buf.WriteByte(digits[(r>>4)&0xF])
			buf.WriteByte(digits[r&0xF])
		default:
			buf.WriteRune(r)
		}
	}
	buf.WriteByte('"')
}

package core

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/solopi-dev/solopi/protocol"
)

// Obj is an insertion-ordered JSON object. The device builds every response
// as a Java Map and serializes it with fastjson's default features, which
// drop null members; obj does the same (a nil value is never written), so
// "absent" and "null" are one thing on the wire.
type Obj []KV

// KV is one member of an Obj: the key and its value.
type KV struct {
	K string
	V any
}

// Set replaces k's value or appends it, keeping the first position (Java
// LinkedHashMap.put semantics).
func (o *Obj) Set(k string, v any) *Obj {
	for i := range *o {
		if (*o)[i].K == k {
			(*o)[i].V = v
			return o
		}
	}
	*o = append(*o, KV{k, v})
	return o
}

// Get returns k's value or nil.
func (o Obj) Get(k string) any {
	for _, e := range o {
		if e.K == k {
			return e.V
		}
	}
	return nil
}

// Del removes k.
func (o *Obj) Del(k string) {
	*o = slices.DeleteFunc(*o, func(e KV) bool { return e.K == k })
}

// Clone copies the top level (nested objs are shared; responses treat them
// as immutable once built).
func (o Obj) Clone() Obj { return slices.Clone(o) }

// NewObj builds an obj from alternating keys and values.
func NewObj(kvs ...any) Obj {
	o := make(Obj, 0, len(kvs)/2)
	for i := 0; i+1 < len(kvs); i += 2 {
		o.Set(kvs[i].(string), kvs[i+1])
	}
	return o
}

// Envelope helpers (docs/device-protocol.md#response-envelopes).

// E1 is the typed error: success:false, errorCode, error.
func E1(code, msg string) Obj {
	return NewObj("success", false, "errorCode", code, "error", msg)
}

// E3 is replay's bare error: only "error".
func E3(msg string) Obj { return NewObj("error", msg) }

// ok is a success envelope with payload members appended.
func OK(kvs ...any) Obj { return append(NewObj("success", true), NewObj(kvs...)...) }

// ---- writer ----

// Encode writes v as compact JSON the way fastjson does: no HTML escaping,
// non-ASCII raw, nulls dropped from objects. sorted sorts every object's keys
// (fastjson's MapSortField, used for tree hashes and case snapshots).
func Encode(v any, sorted bool) []byte {
	var buf bytes.Buffer
	writeValue(&buf, v, sorted)
	return buf.Bytes()
}

func isNil(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case *string:
		return x == nil
	case *int64:
		return x == nil
	case Obj:
		return x == nil
	case json.RawMessage:
		return x == nil
	}
	return false
}

// writeArray writes xs as a JSON array, each element with write.
func writeArray[T any](buf *bytes.Buffer, xs []T, write func(T)) {
	buf.WriteByte('[')
	for i, x := range xs {
		if i > 0 {
			buf.WriteByte(',')
		}
		write(x)
	}
	buf.WriteByte(']')
}

func writeValue(buf *bytes.Buffer, v any, sorted bool) {
	if protocol.WriteJSONScalar(buf, v) {
		return
	}
	switch x := v.(type) {
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
	case json.RawMessage:
		buf.Write(x)
	case []string:
		writeArray(buf, x, func(s string) { protocol.WriteJSONString(buf, s) })
	case []any:
		writeArray(buf, x, func(e any) { writeValue(buf, e, sorted) })
	case []Obj:
		writeArray(buf, x, func(e Obj) { writeValue(buf, e, sorted) })
	case Obj:
		entries := x
		if sorted {
			entries = slices.Clone(x)
			slices.SortStableFunc(entries, func(a, b KV) int {
				switch {
				case a.K < b.K:
					return -1
				case a.K > b.K:
					return 1
				}
				return 0
			})
		}
		buf.WriteByte('{')
		first := true
		for _, e := range entries {
			if isNil(e.V) {
				continue
			}
			if !first {
				buf.WriteByte(',')
			}
			first = false
			protocol.WriteJSONString(buf, e.K)
			buf.WriteByte(':')
			writeValue(buf, e.V, sorted)
		}
		buf.WriteByte('}')
	case map[string]string:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			protocol.WriteJSONString(buf, k)
			buf.WriteByte(':')
			protocol.WriteJSONString(buf, x[k])
		}
		buf.WriteByte('}')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k, e := range x {
			if !isNil(e) {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			protocol.WriteJSONString(buf, k)
			buf.WriteByte(':')
			writeValue(buf, x[k], sorted)
		}
		buf.WriteByte('}')
	default:
		// Never reached by the device code; a programming error shows up in
		// the output instead of being silently dropped.
		protocol.WriteJSONString(buf, fmt.Sprintf("!unsupported %T", v))
	}
}

// Params are the decoded query parameters of one request.
type Params map[string]string

func (q Params) Has(k string) bool { _, ok := q[k]; return ok }

package core

import "github.com/solopi-dev/solopi/protocol"

// Obj is an insertion-ordered JSON object. The device builds every response
// as a Java Map and serializes it with fastjson's default features, which
// drop null members; Encode does the same (a nil value is never written), so
// "absent" and "null" are one thing on the wire.
type Obj = protocol.JSONObject

// KV is one member of an Obj: the key and its value.
type KV = protocol.JSONMember

// NewObj builds an obj from alternating keys and values.
func NewObj(kvs ...any) Obj { return protocol.NewJSONObject(kvs...) }

// Envelope helpers (docs/device-protocol.md#response-envelopes).

// E1 is the typed error: success:false, errorCode, error.
func E1(code, msg string) Obj {
	return NewObj("success", false, "errorCode", code, "error", msg)
}

// E3 is replay's bare error: only "error".
func E3(msg string) Obj { return NewObj("error", msg) }

// ok is a success envelope with payload members appended.
func OK(kvs ...any) Obj { return append(NewObj("success", true), NewObj(kvs...)...) }

// Encode writes v as compact JSON the way fastjson does (protocol.EncodeJSON):
// no HTML escaping, non-ASCII raw, nulls dropped from objects. sorted sorts
// every object's keys (fastjson's MapSortField, used for tree hashes and case
// snapshots). The device code only builds values the writer knows, so there
// is no error to return; a programming error shows up in the output as an
// "!unsupported <type>" string instead of being silently dropped.
func Encode(v any, sorted bool) []byte {
	b, _ := protocol.EncodeJSON(v, protocol.JSONOptions{SortKeys: sorted})
	return b
}

// Params are the decoded query parameters of one request.
type Params map[string]string

func (q Params) Has(k string) bool { _, ok := q[k]; return ok }

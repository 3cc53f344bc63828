package device

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/tidwall/gjson"
)

// The fast path walks gjson's view of the object, which rescans each
// value once per enclosing level: linear for the shallow, small objects the
// device answers with, quadratic for a hostile deep one. Larger or deeper
// answers take encoding/json, which is linear; both give the same result.
const (
	fastMaxBytes = 256 << 10
	fastMaxDepth = 64
)

// DecodeObject parses a device JSON object into the WireObject every reader
// uses. Numbers stay json.Number (integers exact), invalid UTF-8 becomes
// U+FFFD byte by byte, a repeated key keeps its last value and nothing may
// follow the object: canonjson.Unmarshal's result. It is the device's own
// reader, not a copy of that one, because every query decodes an answer:
// the common small answer is walked with gjson, several times faster than
// reflection, and only a large or deep one takes canonjson.
func DecodeObject(b []byte) (WireObject, error) {
	if len(b) > fastMaxBytes || nesting(b) > fastMaxDepth {
		return decodeStd(b)
	}
	if !gjson.ValidBytes(b) {
		return nil, errors.New("decode device object: not valid JSON")
	}
	r := gjson.ParseBytes(b)
	if !r.IsObject() {
		return nil, errors.New("decode device object: not an object")
	}
	return WireObject(decodeValue(r).(map[string]any)), nil
}

// decodeStd is DecodeObject through the host's one JSON reader.
func decodeStd(b []byte) (WireObject, error) {
	var m WireObject
	if err := canonjson.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("decode device object: %w", err)
	}
	if m == nil {
		return nil, errors.New("decode device object: null")
	}
	return m, nil
}

// nesting is the deepest bracket nesting of b outside strings, in one pass
// and without checking anything else.
func nesting(b []byte) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			if depth++; depth > deepest {
				deepest = depth
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

func decodeValue(r gjson.Result) any {
	switch r.Type {
	case gjson.Null:
		return nil
	case gjson.False:
		return false
	case gjson.True:
		return true
	case gjson.Number:
		return json.Number(r.Raw)
	case gjson.String:
		return validUTF8(r.Str)
	}
	if r.IsArray() {
		out := []any{}
		r.ForEach(func(_, v gjson.Result) bool {
			out = append(out, decodeValue(v))
			return true
		})
		return out
	}
	out := map[string]any{}
	r.ForEach(func(k, v gjson.Result) bool {
		out[validUTF8(k.Str)] = decodeValue(v)
		return true
	})
	return out
}

// validUTF8 replaces each byte of invalid UTF-8 with U+FFFD, as
// encoding/json does.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

package protocol

import (
	"bytes"
	"strconv"
)

// JSON encoding rules of the wire (docs/device-protocol.md#json-on-the-wire).
// The device serializes everything with fastjson 1.2's default features,
// which encoding/json cannot imitate: it escapes <, > and & (fastjson does
// not) and its string escapes differ. The host's case writer (casefile) and
// the simulated device (sim/soloapp) both build their bytes from these two
// helpers, so the two sides escape alike by construction.

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

// WriteJSONScalar writes v when it is one of the scalars both sides share
// (nil, string, *string, bool, int, int64) and reports whether it did; a nil
// *string is null.
func WriteJSONScalar(buf *bytes.Buffer, v any) bool {
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
	default:
		return false
	}
	return true
}

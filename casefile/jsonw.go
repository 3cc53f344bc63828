package casefile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// A tiny JSON writer. encoding/json cannot be used for SoloPi output: it
// escapes <, > and & (fastjson does not), it does not sort struct fields, and
// the device's snapshot string is hashed byte for byte into caseFingerprint.
// Values are trees of nil, string, bool, int, int64, json.Number,
// json.RawMessage, []any and map[string]any; object keys are always sorted
// (fastjson's bean property order and MapSortField).

type jsonWriter struct {
	buf bytes.Buffer
	// omitNull drops object members whose value is null, as fastjson does
	// without WriteMapNullValue. Array elements are never dropped.
	omitNull bool
}

func (w *jsonWriter) value(v any) error {
	switch x := v.(type) {
	case nil:
		w.buf.WriteString("null")
	case string:
		writeFastjsonString(&w.buf, x)
	case *string:
		if x == nil {
			w.buf.WriteString("null")
		} else {
			writeFastjsonString(&w.buf, *x)
		}
	case bool:
		w.buf.WriteString(strconv.FormatBool(x))
	case int:
		w.buf.WriteString(strconv.Itoa(x))
	case int64:
		w.buf.WriteString(strconv.FormatInt(x, 10))
	case json.Number:
		w.buf.WriteString(x.String())
	case json.RawMessage:
		g, err := decodeGeneric(x)
		if err != nil {
			return err
		}
		return w.value(g)
	case []any:
		w.buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				w.buf.WriteByte(',')
			}
			if err := w.value(e); err != nil {
				return err
			}
		}
		w.buf.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k, e := range x {
			if w.omitNull && isNull(e) {
				continue
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		w.buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				w.buf.WriteByte(',')
			}
			writeFastjsonString(&w.buf, k)
			w.buf.WriteByte(':')
			if err := w.value(x[k]); err != nil {
				return err
			}
		}
		w.buf.WriteByte('}')
	default:
		return fmt.Errorf("casefile: cannot encode %T", v)
	}
	return nil
}

func isNull(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case *string:
		return x == nil
	case json.RawMessage:
		return x == nil || string(bytes.TrimSpace(x)) == "null"
	}
	return false
}

func encodeJSON(v any, omitNull bool) (string, error) {
	w := &jsonWriter{omitNull: omitNull}
	if err := w.value(v); err != nil {
		return "", err
	}
	return w.buf.String(), nil
}

// decodeGeneric decodes keeping numbers verbatim, so re-encoding does not
// turn 35 into 35.0 or lose precision on long ids.
func decodeGeneric(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// writeFastjsonString escapes like fastjson 1.2's SerializeWriter with the
// default features: the short escapes \b \t \n \f \r, \" and \\, other C0
// controls, U+007F..U+009F and U+2028/U+2029 as \uXXXX (uppercase hex);
// everything else, including '/' and non-ASCII text, is written raw.
func writeFastjsonString(buf *bytes.Buffer, s string) {
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

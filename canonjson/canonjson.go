// Package canonjson is the canonical JSON that fingerprints are computed
// over: byte for byte what Python's
//
//	json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
//
// writes, because plan, case, segment, evidence and outcome fingerprints
// must equal the ones SoloPi's own host CLI (solopi-ai, written in Python)
// computes for the same input. Go's encoding/json differs in ways that
// change hashes: it escapes <, >, & and U+2028/U+2029, writes the float 1.0
// as 1, and writes 1e16 as 10000000000000000.
//
// Values are the generic JSON tree: nil, bool, string, json.Number (an
// integer when it has no '.', 'e' or 'E', as Python's json.loads decides),
// Go integers, float64 and Float (always written as a Python float), and
// maps with string keys and slices of these. Decode produces such a tree.
//
// The package is also the host's one reader of JSON documents (decode.go:
// one document, numbers kept as json.Number, nothing after it, a size cap)
// and of the generic tree's fields (object.go: typed access that reports a
// missing or mistyped field instead of panicking).
package canonjson

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// float is a number that is a float in Python even when integral: Marshal
// writes Float(1) as 1.0.
type float float64

// Marshal writes v in the canonical form.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := (&encoder{buf: &buf}).encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// MarshalIndent writes v as Python's json.dumps(v, indent=len(indent),
// sort_keys=True, ensure_ascii=False) does: the canonical form with each
// element on its own line, ", " becoming "," + newline and ":" becoming
// ": ", and empty objects and arrays kept as {} and []. It is how plan and
// report files are written: readable, and stable byte for byte.
func MarshalIndent(v any, indent string) ([]byte, error) {
	var buf bytes.Buffer
	if err := (&encoder{buf: &buf, indent: indent}).encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// encoder writes canonical JSON, compact or indented.
type encoder struct {
	buf    *bytes.Buffer
	indent string
	depth  int
}

// newline starts a line at the current depth (indented output only).
func (e *encoder) newline() {
	if e.indent == "" {
		return
	}
	e.buf.WriteByte('\n')
	for i := 0; i < e.depth; i++ {
		e.buf.WriteString(e.indent)
	}
}

// Fingerprint is the lowercase hex SHA-256 of Marshal(v).
func Fingerprint(v any) (string, error) {
	b, err := Marshal(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

func (e *encoder) encode(v any) error {
	buf := e.buf
	switch x := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		if x {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case string:
		return writeString(buf, x)
	case json.Number:
		s, err := NumberText(x)
		if err != nil {
			return err
		}
		buf.WriteString(s)
	case float64:
		s, err := floatRepr(x)
		if err != nil {
			return err
		}
		buf.WriteString(s)
	case float:
		s, err := floatRepr(float64(x))
		if err != nil {
			return err
		}
		buf.WriteString(s)
	case int:
		buf.WriteString(strconv.Itoa(x))
	case int64:
		buf.WriteString(strconv.FormatInt(x, 10))
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		// Python sorts str keys by code point; UTF-8 byte order is the same.
		slices.Sort(keys)
		buf.WriteByte('{')
		e.depth++
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			e.newline()
			if err := writeString(buf, k); err != nil {
				return err
			}
			buf.WriteByte(':')
			if e.indent != "" {
				buf.WriteByte(' ')
			}
			if err := e.encode(x[k]); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
		e.depth--
		if len(keys) > 0 {
			e.newline()
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		e.depth++
		for i, item := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			e.newline()
			if err := e.encode(item); err != nil {
				return err
			}
		}
		e.depth--
		if len(x) > 0 {
			e.newline()
		}
		buf.WriteByte(']')
	default:
		return e.encodeReflect(v)
	}
	return nil
}

// encodeReflect handles the other integer types, typed slices ([]string,
// []map[string]any) and maps with string keys and typed values.
func (e *encoder) encodeReflect(v any) error {
	buf := e.buf
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		buf.WriteString(strconv.FormatInt(rv.Int(), 10))
		return nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		buf.WriteString(strconv.FormatUint(rv.Uint(), 10))
		return nil
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			buf.WriteString("null")
			return nil
		}
		items := make([]any, rv.Len())
		for i := range items {
			items[i] = rv.Index(i).Interface()
		}
		return e.encode(items)
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return fmt.Errorf("canonical json: map key type %s is not a string", rv.Type().Key())
		}
		if rv.IsNil() {
			buf.WriteString("null")
			return nil
		}
		m := make(map[string]any, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			m[it.Key().String()] = it.Value().Interface()
		}
		return e.encode(m)
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			buf.WriteString("null")
			return nil
		}
		return e.encode(rv.Elem().Interface())
	}
	return fmt.Errorf("canonical json: unsupported value of type %T", v)
}

// writeString escapes only what Python's encoder escapes with
// ensure_ascii=False: the quote, the backslash and U+0000..U+001F
// (\n \r \t \b \f by name, the rest as lowercase \u00XX). Everything else,
// including <, >, &, DEL and U+2028/U+2029, is written as UTF-8.
func writeString(buf *bytes.Buffer, s string) error {
	if !utf8.ValidString(s) {
		return errors.New("canonical json: string is not valid UTF-8")
	}
	buf.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		buf.WriteString(s[start:i])
		start = i + 1
		switch c {
		case '"':
			buf.WriteString(`\"`)
		case '\\':
			buf.WriteString(`\\`)
		case '\n':
			buf.WriteString(`\n`)
		case '\r':
			buf.WriteString(`\r`)
		case '\t':
			buf.WriteString(`\t`)
		case '\b':
			buf.WriteString(`\b`)
		case '\f':
			buf.WriteString(`\f`)
		default:
			fmt.Fprintf(buf, `\u%04x`, c)
		}
	}
	buf.WriteString(s[start:])
	buf.WriteByte('"')
	return nil
}

// NumberText is how Python writes a number json.loads read from n: an
// integer (arbitrary precision, "-0" becomes "0") when the text has no
// '.', 'e' or 'E', otherwise the repr of the float.
func NumberText(n json.Number) (string, error) {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		i, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return "", fmt.Errorf("canonical json: invalid integer %q", s)
		}
		return i.String(), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return "", fmt.Errorf("canonical json: invalid number %q", s)
	}
	return floatRepr(f)
}

// IsInteger reports whether Python's json.loads reads n as an int.
func IsInteger(n json.Number) bool { return !strings.ContainsAny(string(n), ".eE") }

// floatRepr is Python's repr of a float: the shortest digits that read back
// to f, in positional notation when the decimal exponent is in [-4, 16) and
// in scientific notation (two-digit signed exponent) otherwise; a positional
// integral value keeps ".0". NaN and infinities are errors (allow_nan=False).
func floatRepr(f float64) (string, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", fmt.Errorf("canonical json: %v is not allowed", f)
	}
	// 'e' with precision -1 gives the shortest round-trip digits.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	neg := strings.HasPrefix(e, "-")
	e = strings.TrimPrefix(e, "-")
	mant, expText, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expText)
	digits := strings.Replace(mant, ".", "", 1)
	decpt := exp + 1 // value = 0.digits × 10^decpt
	var out string
	if decpt < -3 || decpt > 16 {
		out = digits[:1]
		if len(digits) > 1 {
			out += "." + digits[1:]
		}
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		out += fmt.Sprintf("e%s%02d", sign, exp)
	} else {
		switch {
		case decpt <= 0:
			out = "0." + strings.Repeat("0", -decpt) + digits
		case decpt < len(digits):
			out = digits[:decpt] + "." + digits[decpt:]
		default:
			out = digits + strings.Repeat("0", decpt-len(digits)) + ".0"
		}
	}
	if neg {
		out = "-" + out
	}
	return out, nil
}

// PyStr is Python's str() of a JSON scalar, as used when a binding is
// embedded in a longer string: True/False, None, integers as written,
// floats by repr, strings unchanged. Objects and arrays are errors.
func PyStr(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "None", nil
	case bool:
		if x {
			return "True", nil
		}
		return "False", nil
	case string:
		return x, nil
	case json.Number:
		return NumberText(x)
	case float64:
		return floatRepr(x)
	case float:
		return floatRepr(float64(x))
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	}
	return "", fmt.Errorf("canonical json: %T has no scalar str()", v)
}

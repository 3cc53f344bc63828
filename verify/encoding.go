package verify

import (
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// CodeInvalidUTF8 refuses a requirement or plan that is not UTF-8 or holds
// a \u escape of a lone UTF-16 surrogate, as case files are refused.
const CodeInvalidUTF8 = "invalid_utf8"

// CheckEncoding refuses what a JSON decoder would accept and silently turn
// into U+FFFD: bytes that are not UTF-8 (a file saved in another
// encoding) and \u escapes of lone UTF-16 surrogates ("\ud800", which is
// no character). Both would otherwise compile, fingerprint and run text
// nobody wrote; solopi-ai fails on them with a traceback. The error has
// code (CodeInvalidUTF8, or the caller's own) and the byte offset; what
// names the document in the message. Syntax errors are left to the
// decoder.
func CheckEncoding(data []byte, what, code string) error {
	if off, ok := invalidUTF8(data); ok {
		return invalid(code, fmt.Sprintf("the %s is not UTF-8: invalid byte 0x%02X at offset %d (save it as UTF-8)", what, data[off], off), "offset", off)
	}
	inString := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case !inString:
			inString = c == '"'
		case c == '"':
			inString = false
		case c == '\\' && i+1 < len(data) && data[i+1] == 'u':
			r1, ok := hex4(data[i+2:])
			if !ok || !utf16.IsSurrogate(r1) {
				i++
				continue
			}
			if pairs(data, i, r1) {
				i += 11
				continue
			}
			return invalid(code, fmt.Sprintf("the %s holds the escape \\u%04X at offset %d: a lone UTF-16 surrogate, not a character", what, r1, i), "offset", i)
		case c == '\\':
			i++ // the escaped character, a quote included
		}
	}
	return nil
}

// pairs reports a high surrogate r1, escaped at i, followed by the escape
// of a low one.
func pairs(data []byte, i int, r1 rune) bool {
	if r1 >= 0xDC00 || i+12 > len(data) || data[i+6] != '\\' || data[i+7] != 'u' {
		return false
	}
	r2, ok := hex4(data[i+8:])
	return ok && utf16.DecodeRune(r1, r2) != utf8.RuneError
}

func invalidUTF8(data []byte) (int, bool) {
	if utf8.Valid(data) {
		return 0, false
	}
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i, true
		}
		i += size
	}
	return 0, false
}

// hex4 reads the four hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[:4]), 16, 16)
	return rune(n), err == nil
}

package protocol

import "strings"

// Identifier checks, written out instead of as regular expressions: a
// pattern such as ^[A-Za-z0-9][A-Za-z0-9._-]{0,159}$ compiles into one
// instruction per repetition, so a few dozen of them cost milliseconds at
// process start and make every match slow. Both the host and the simulator
// validate identifiers through these functions.

// IsIDStart reports whether c may start an identifier: an ASCII letter or digit.
func IsIDStart(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// IsIDChar reports whether c may follow the first character of an
// identifier: an ASCII letter or digit, '.', '_' or '-'.
func IsIDChar(c byte) bool { return IsIDStart(c) || c == '.' || c == '_' || c == '-' }

// ValidID reports whether s is 1..maxLen characters, the first an ASCII
// letter or digit and the rest letters, digits, '.', '_' or '-' (the
// identifier grammar of request, session, run and step IDs).
func ValidID(s string, maxLen int) bool {
	if len(s) == 0 || len(s) > maxLen || !IsIDStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !IsIDChar(s[i]) {
			return false
		}
	}
	return true
}

// ValidIDChars reports whether s is 1..maxLen characters of the identifier
// alphabet with no constraint on the first one.
func ValidIDChars(s string, maxLen int) bool {
	if len(s) == 0 || len(s) > maxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !IsIDChar(s[i]) {
			return false
		}
	}
	return true
}

// ValidHex reports whether s is exactly n hex digits; lowercase only unless
// upperOK.
func ValidHex(s string, n int, upperOK bool) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
		case upperOK && c >= 'A' && c <= 'F':
		default:
			return false
		}
	}
	return true
}

// ValidPrefixedHex reports whether s is prefix followed by n lowercase hex
// digits (replay-<64 hex>, plugin-<64 hex>, ...).
func ValidPrefixedHex(s, prefix string, n int) bool {
	return len(s) == len(prefix)+n && s[:len(prefix)] == prefix && ValidHex(s[len(prefix):], n, false)
}

// ValidIDName reports whether s is an identifier of up to maxBase
// characters followed by suffix (a file name such as "<id>.zip").
func ValidIDName(s, suffix string, maxBase int) bool {
	base, ok := strings.CutSuffix(s, suffix)
	return ok && ValidID(base, maxBase)
}

// Package textclip shortens free text for messages, events and history on
// rune boundaries, so a cut never splits a UTF-8 sequence.
package textclip

import "unicode/utf8"

// Runes returns s cut to its first n runes, with "…" appended when
// anything was cut.
func Runes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

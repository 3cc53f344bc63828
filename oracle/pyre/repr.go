package pyre

import (
	"fmt"
	"strings"
)

// pyRepr is Python's repr() of a str: how its error messages quote a
// group or character name.
func pyRepr(s string) string {
	q := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, c := range s {
		switch {
		case c == '\\':
			b.WriteString(`\\`)
		case c == rune(q):
			b.WriteByte('\\')
			b.WriteByte(q)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case printable().contains(c):
			b.WriteRune(c)
		case c < 0x100:
			fmt.Fprintf(&b, `\x%02x`, c)
		case c < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			fmt.Fprintf(&b, `\U%08x`, c)
		}
	}
	b.WriteByte(q)
	return b.String()
}

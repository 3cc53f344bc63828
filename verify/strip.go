package verify

import "strings"

// pyStrip is Python's str.strip() with no argument, which solopi-ai applies
// to every text it trims (IDs, titles, AC texts, input texts, goals,
// packages, allowed actions): it removes the characters str.isspace()
// accepts from both ends. That set is not Go's unicode.IsSpace: it has the
// information separators U+001C..U+001F as well (testdata/python-strip.json
// holds CPython 3.11's set and answers). Every trim of requirement or plan
// text goes through here.
func pyStrip(s string) string { return strings.TrimFunc(s, pySpace) }

// pySpace is CPython 3.11's str.isspace() for one code point: the
// characters of bidirectional class WS, B or S, or of category Zs.
func pySpace(r rune) bool {
	switch {
	case r >= '\t' && r <= '\r', r >= 0x1C && r <= 0x20, r == 0x85, r == 0xA0, r == 0x1680:
		return true
	case r >= 0x2000 && r <= 0x200A, r == 0x2028, r == 0x2029, r == 0x202F, r == 0x205F, r == 0x3000:
		return true
	}
	return false
}

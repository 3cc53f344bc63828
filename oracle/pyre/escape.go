package pyre

import (
	"fmt"
	"strconv"
)

// escapes are sre_parse.ESCAPES (inside a set, \b is among them).
var escapes = map[rune]rune{'a': '\a', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v', '\\': '\\'}

// categories are the set-valued entries of sre_parse.CATEGORIES.
var categories = map[rune]category{
	'd': catDigit, 'D': catNotDigit, 's': catSpace, 'S': catNotSpace, 'w': catWord, 'W': catNotWord,
}

// anchors are the AT entries of sre_parse.CATEGORIES.
var anchors = map[rune]atCode{'A': atBeginningString, 'b': atBoundary, 'B': atNonBoundary, 'Z': atEndString}

func isASCIILetter(c rune) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// parseEscape is _escape: an escape outside a set.
func parseEscape(t *tokenizer, esc token, st *state) *node {
	c := esc.c
	if at, ok := anchors[c]; ok {
		return &node{op: opAt, at: at}
	}
	if cat, ok := categories[c]; ok {
		return &node{op: opIn, set: []setItem{{kind: itemCategory, cat: cat}}}
	}
	if r, ok := escapes[c]; ok {
		return &node{op: opLiteral, c: r}
	}
	if r, ok := codeEscape(t, esc); ok {
		return &node{op: opLiteral, c: r}
	}
	switch {
	case c == '0':
		s := "0" + t.getwhile(2, octDigits)
		v, _ := strconv.ParseInt(s, 8, 32)
		return &node{op: opLiteral, c: rune(v)}
	case c >= '1' && c <= '9':
		s := string(c)
		if t.nextIn(digits) {
			s += string(t.next.c)
			t.advance()
			if runeIn(rune(s[0]), octDigits) && runeIn(rune(s[1]), octDigits) && t.nextIn(octDigits) {
				s += string(t.next.c)
				t.advance()
				v, _ := strconv.ParseInt(s, 8, 32)
				if v > 0o377 {
					panic(t.error(fmt.Sprintf(`octal escape value \%s outside of range 0-0o377`, s), len(s)+1))
				}
				return &node{op: opLiteral, c: rune(v)}
			}
		}
		group, _ := strconv.Atoi(s)
		if group < st.groups() {
			if !st.checkgroup(group) {
				panic(t.error("cannot refer to an open group", len(s)+1))
			}
			st.checklookbehindgroup(group, t)
			return &node{op: opGroupRef, group: group}
		}
		panic(t.error(fmt.Sprintf("invalid group reference %d", group), len(s)))
	case isASCIILetter(c):
		panic(t.error(`bad escape \`+string(c), 2))
	}
	return &node{op: opLiteral, c: c}
}

// classEscape is _class_escape: an escape inside a set.
func classEscape(t *tokenizer, esc token) setItem {
	c := esc.c
	if r, ok := escapes[c]; ok {
		return setItem{kind: itemLiteral, lo: r}
	}
	if cat, ok := categories[c]; ok {
		return setItem{kind: itemCategory, cat: cat}
	}
	if r, ok := codeEscape(t, esc); ok {
		return setItem{kind: itemLiteral, lo: r}
	}
	switch {
	case runeIn(c, octDigits):
		s := string(c) + t.getwhile(2, octDigits)
		v, _ := strconv.ParseInt(s, 8, 32)
		if v > 0o377 {
			panic(t.error(fmt.Sprintf(`octal escape value \%s outside of range 0-0o377`, s), len(s)+1))
		}
		return setItem{kind: itemLiteral, lo: rune(v)}
	case runeIn(c, digits), isASCIILetter(c):
		panic(t.error(`bad escape \`+string(c), 2))
	}
	return setItem{kind: itemLiteral, lo: c}
}

// codeEscape reads the escapes both contexts share: \xhh, \uhhhh,
// \Uhhhhhhhh and \N{name}. ok is false for any other escape.
func codeEscape(t *tokenizer, esc token) (rune, bool) {
	n := 0
	switch esc.c {
	case 'x':
		n = 2
	case 'u':
		n = 4
	case 'U':
		n = 8
	}
	switch {
	case n > 0:
		s := esc.String() + t.getwhile(n, hexDigits)
		if len(s) != n+2 {
			panic(t.error("incomplete escape "+s, len(s)))
		}
		v, _ := strconv.ParseUint(s[2:], 16, 32)
		if v > maxRune {
			// chr() raises ValueError, which _escape turns into this.
			panic(t.error("bad escape "+s, len(s)))
		}
		return rune(v), true
	case esc.c == 'N':
		if !t.match('{') {
			panic(t.error("missing {", 0))
		}
		name := t.getuntil('}', "character name")
		r, ok := lookupName(name)
		if !ok {
			panic(t.error("undefined character name "+pyRepr(name), runeLen(name)+len(`\N{}`)))
		}
		return r, true
	}
	return 0, false
}

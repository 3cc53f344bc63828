package pyre

import (
	"fmt"
	"strings"
)

// flags are sre's flag bits (re.I is 2, re.A is 256, ...).
type flags uint16

const (
	flagTemplate   flags = 1
	flagIgnoreCase flags = 2
	flagLocale     flags = 4
	flagMultiline  flags = 8
	flagDotAll     flags = 16
	flagUnicode    flags = 32
	flagVerbose    flags = 64
	flagASCII      flags = 256

	typeFlags   = flagASCII | flagLocale | flagUnicode
	globalFlags = flagTemplate // and DEBUG, which no inline letter sets
)

// flagLetters are the inline flags sre_parse knows.
var flagLetters = map[rune]flags{
	'i': flagIgnoreCase, 'L': flagLocale, 'm': flagMultiline, 's': flagDotAll,
	'x': flagVerbose, 'a': flagASCII, 't': flagTemplate, 'u': flagUnicode,
}

// token is what sre_parse's Tokenizer hands out: one character, or a
// backslash and the character after it.
type token struct {
	esc bool
	c   rune
}

func (t token) String() string {
	if t.esc {
		return `\` + string(t.c)
	}
	return string(t.c)
}

func (t token) len() int {
	if t.esc {
		return 2
	}
	return 1
}

// tokenizer is sre_parse.Tokenizer over a str pattern, indexed by code
// point as Python indexes it (error positions are code point offsets).
type tokenizer struct {
	src   []rune
	index int
	next  token
	end   bool // next is None
}

func newTokenizer(src []rune) *tokenizer {
	t := &tokenizer{src: src}
	t.advance()
	return t
}

func (t *tokenizer) advance() {
	index := t.index
	if index >= len(t.src) {
		t.end = true
		return
	}
	t.end = false
	c := t.src[index]
	if c == '\\' {
		index++
		if index >= len(t.src) {
			panic(t.errorAt("bad escape (end of pattern)", len(t.src)-1))
		}
		t.next = token{esc: true, c: t.src[index]}
	} else {
		t.next = token{c: c}
	}
	t.index = index + 1
}

// nextIs reports whether the next token is the plain character c.
func (t *tokenizer) nextIs(c rune) bool { return !t.end && !t.next.esc && t.next.c == c }

// nextIn reports whether the next token is a plain character of set.
func (t *tokenizer) nextIn(set string) bool {
	return !t.end && !t.next.esc && strings.ContainsRune(set, t.next.c)
}

func (t *tokenizer) match(c rune) bool {
	if t.nextIs(c) {
		t.advance()
		return true
	}
	return false
}

// get returns the next token; ok is false at the end of the pattern.
func (t *tokenizer) get() (tok token, ok bool) {
	if t.end {
		return token{}, false
	}
	tok = t.next
	t.advance()
	return tok, true
}

func (t *tokenizer) getwhile(n int, set string) string {
	var b strings.Builder
	for range n {
		if !t.nextIn(set) {
			break
		}
		b.WriteRune(t.next.c)
		t.advance()
	}
	return b.String()
}

func (t *tokenizer) getuntil(terminator rune, name string) string {
	var b strings.Builder
	n := 0
	for {
		c, ok := t.get()
		if !ok {
			if n == 0 {
				panic(t.error("missing "+name, 0))
			}
			panic(t.error(fmt.Sprintf("missing %c, unterminated name", terminator), n))
		}
		if !c.esc && c.c == terminator {
			if n == 0 {
				panic(t.error("missing "+name, 1))
			}
			return b.String()
		}
		b.WriteString(c.String())
		n += c.len()
	}
}

func (t *tokenizer) tell() int {
	if t.end {
		return t.index
	}
	return t.index - t.next.len()
}

func (t *tokenizer) seek(index int) {
	t.index = index
	t.advance()
}

func (t *tokenizer) error(msg string, offset int) *Error {
	return t.errorAt(msg, t.tell()-offset)
}

func (t *tokenizer) errorAt(msg string, pos int) *Error {
	return &Error{Kind: KindSyntax, Msg: msg, Pos: pos, pattern: t.src}
}

func (t *tokenizer) checkgroupname(name string, offset int) {
	if !isIdentifier(name) {
		panic(t.error("bad character in group name "+pyRepr(name), len([]rune(name))+offset))
	}
}

// pyRepr is Python's repr() of a str.
func pyRepr(s string) string {
	q := '\''
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		q = '"'
	}
	var b strings.Builder
	b.WriteRune(q)
	for _, c := range s {
		switch {
		case c == q || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < ' ' || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		case c < 0x7f || printable.contains(c):
			b.WriteRune(c)
		case c <= 0xff:
			fmt.Fprintf(&b, `\x%02x`, c)
		case c <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			fmt.Fprintf(&b, `\U%08x`, c)
		}
	}
	b.WriteRune(q)
	return b.String()
}

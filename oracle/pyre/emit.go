package pyre

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
)

// The emitter writes a regexp2 pattern that means what the parse tree
// means to sre, using only regexp2 constructs whose meaning does not
// depend on its Unicode tables or case rules: explicit classes of code
// points, \A and \z, groups, lookarounds, atomic groups, counted loops,
// numbered backreferences and conditionals. Every capturing group is
// written with its Python number, (?<N>…), so a copy of it is the same
// group. On the way it refuses what Python refuses only once the whole
// pattern is parsed: a look-behind without one fixed width, a repeat
// under the template flag.

// maxCode is the widest look-behind sre can encode (a 32-bit code word).
const maxCode = math.MaxUint32

// maxLoop is the largest count regexp2 accepts in {n,m}.
const maxLoop = math.MaxInt32 - 1

type emitter struct {
	b      strings.Builder
	widths *widths
}

func (e *emitter) group(open string, n *node) {
	e.b.WriteString(open)
	e.node(n)
	e.b.WriteByte(')')
}

// node writes n, making the checks sre's compiler makes on the way (in
// its order: an item before what it contains).
func (e *emitter) node(n *node) {
	if n == nil {
		return
	}
	switch n.kind {
	case kChar:
		e.char(n)
	case kAnchor:
		e.anchor(n.anchor, n.fl)
	case kCat:
		for _, s := range n.subs {
			e.node(s)
		}
	case kAlt:
		e.b.WriteString("(?:")
		for i, a := range n.subs {
			if i > 0 {
				e.b.WriteByte('|')
			}
			e.node(a)
		}
		e.b.WriteByte(')')
	case kGroup:
		open := "(?:"
		if n.num > 0 {
			open = fmt.Sprintf("(?<%d>", n.num)
		}
		e.group(open, n.subs[0])
	case kAtomic:
		e.group("(?>", n.subs[0])
	case kRepeat:
		e.repeat(n)
	case kLook:
		open := "(?"
		if n.behind {
			open += "<"
		}
		if n.neg {
			open += "!"
		} else {
			open += "="
		}
		if n.behind {
			w := e.widths.of(n.subs[0])
			if w[0] > maxCode {
				panic(&Error{Kind: kindSyntax, Msg: "looks too much behind", Pos: -1})
			}
			if w[0] != w[1] {
				panic(&Error{Kind: kindSyntax, Msg: "look-behind requires fixed-width pattern", Pos: -1})
			}
		}
		e.group(open, n.subs[0])
	case kRef:
		if on, ascii := ignoreCase(n.fl); on {
			if ascii {
				panic(&Error{Kind: kindUnsupported, Msg: msgASCIIFoldBackref, Pos: -1})
			}
			// regexp2 compares a case-insensitive backreference with
			// unicode.ToLower on both sides, as sre does with its lower
			// case (TestBackrefFoldIsPythons holds them equal).
			fmt.Fprintf(&e.b, `(?i:\k<%d>)`, n.num)
			return
		}
		fmt.Fprintf(&e.b, `\k<%d>`, n.num)
	case kCond:
		fmt.Fprintf(&e.b, "(?(%d)", n.num)
		e.group("(?:", n.subs[0])
		e.b.WriteByte('|')
		if n.subs[1] != nil {
			e.group("(?:", n.subs[1])
		}
		e.b.WriteByte(')')
	}
}

// msgASCIIFoldBackref refuses what regexp2 cannot compare: sre folds a
// backreference under (?ai) by ASCII case only, regexp2's (?i) by Unicode
// lower case (K and İ fold to k and i).
const msgASCIIFoldBackref = "a backreference under both the ASCII and IGNORECASE flags is not supported"

func (e *emitter) repeat(n *node) {
	if n.fl&flagTemplate != 0 {
		name := [...]string{greedy: "MAX_REPEAT", lazy: "MIN_REPEAT", possessive: "POSSESSIVE_REPEAT"}[n.mode]
		panic(&Error{Kind: kindSyntax, Msg: "internal: unsupported template operator " + name, Pos: -1})
	}
	body := n.subs[0]
	lo, hi := n.min, n.max
	if lo > maxLoop {
		// No text a verdict reads has 2^31 characters: only empty
		// iterations could reach the minimum, which regexp2 cannot count.
		if e.widths.of(body)[0] > 0 {
			inner := &emitter{widths: e.widths}
			inner.node(body) // for the compiler's checks inside
			e.b.WriteString("(?!)")
			return
		}
		panic(&Error{Kind: kindUnsupported, Msg: fmt.Sprintf("a repeat of an item that can match empty at least %d times is not supported", lo), Pos: -1})
	}
	if hi > maxLoop {
		hi = unbounded // as good as unbounded for any text shorter than 2^31
	}
	if n.mode == possessive {
		e.b.WriteString("(?>")
	}
	if lo >= 1 && hi > lo && e.widths.of(body)[0] == 0 {
		// After its last mandatory iteration sre tries one more even if
		// that one matched empty; regexp2 stops there. Spelled as the
		// mandatory iterations and then an optional loop, both engines
		// try it (the groups inside are numbered, so the copy writes the
		// same groups).
		e.loop(body, lo, lo, greedy)
		lo, hi = 0, hi-lo
		if hi > maxLoop {
			hi = unbounded
		}
	}
	mode := n.mode
	if mode == possessive {
		mode = greedy
	}
	e.loop(body, lo, hi, mode)
	if n.mode == possessive {
		e.b.WriteByte(')')
	}
	if e.b.Len() > maxEmitted {
		panic(&Error{Kind: kindUnsupported, Msg: "the pattern is too large once its repeats are spelled out", Pos: -1})
	}
}

// maxEmitted bounds the translated pattern (nested repeats of items that
// can match empty double it at each level).
const maxEmitted = 1 << 21

// loop writes (?:body){lo,hi}, lazy or greedy.
func (e *emitter) loop(body *node, lo, hi uint32, mode repeatMode) {
	e.group("(?:", body)
	switch {
	case hi == unbounded && lo == 0:
		e.b.WriteByte('*')
	case hi == unbounded && lo == 1:
		e.b.WriteByte('+')
	case hi == unbounded:
		fmt.Fprintf(&e.b, "{%d,}", lo)
	case lo == 0 && hi == 1:
		e.b.WriteByte('?')
	case lo == hi:
		fmt.Fprintf(&e.b, "{%d}", lo)
	default:
		fmt.Fprintf(&e.b, "{%d,%d}", lo, hi)
	}
	if mode == lazy {
		e.b.WriteByte('?')
	}
}

func (e *emitter) anchor(at anchor, f flags) {
	switch at {
	case aStart:
		if f&flagMultiline != 0 {
			e.b.WriteString(`(?:\A|(?<=\n))`)
		} else {
			e.b.WriteString(`\A`)
		}
	case aStartText:
		e.b.WriteString(`\A`)
	case aEnd:
		if f&flagMultiline != 0 {
			e.b.WriteString(`(?=\n|\z)`)
		} else {
			e.b.WriteString(`(?=\n?\z)`)
		}
	case aEndText:
		e.b.WriteString(`\z`)
	case aWord:
		// sre: the word-ness of the characters either side differs (no
		// boundary at all in an empty string). A conditional on the
		// look-behind tests the big class twice instead of four times,
		// which halves what regexp2 has to parse.
		fmt.Fprintf(&e.b, `(?(?<=%s)(?!%[1]s)|(?=%[1]s))`, wordClass(f))
	case aNotWord:
		fmt.Fprintf(&e.b, `(?!\A\z)(?(?<=%s)(?=%[1]s)|(?!%[1]s))`, wordClass(f))
	}
}

var uniWordClass = sync.OnceValue(func() string { return class(uniWord()) })

// wordClass is the class \b tests on either side.
func wordClass(f flags) string {
	if f&flagASCII != 0 {
		return class(asciiWord)
	}
	return uniWordClass()
}

// char writes a one-character item. What a class of categories only
// spells (\w, [\d\s], ...) is kept once computed: there are few such
// classes, and they are the big ones.
func (e *emitter) char(n *node) {
	if n.ch.what == cLiteral && n.fl&flagIgnoreCase == 0 {
		writeRune(&e.b, n.ch.c)
		return
	}
	key, ok := categoryKey(n)
	if !ok {
		e.set(charSet(n))
		return
	}
	if s, ok := spelled.Load(key); ok {
		e.b.WriteString(s.(string))
		return
	}
	start := e.b.Len()
	e.set(charSet(n))
	spelled.Store(key, e.b.String()[start:])
}

var spelled sync.Map // categoryKey → the emitted class

// categoryKey identifies a class made of categories only by what decides
// its set: the categories, negation and the i and a flags.
func categoryKey(n *node) (string, bool) {
	if n.ch.what != cClass {
		return "", false
	}
	key := []byte{byte(n.fl & (flagIgnoreCase | flagASCII)), 0}
	if n.ch.neg {
		key[1] = 1
	}
	for _, it := range n.ch.items {
		if it.cat == catNone {
			return "", false
		}
		key = append(key, byte(it.cat))
	}
	return string(key), len(n.ch.items) <= 8
}

// set writes a one-character match of exactly the code points of s.
func (e *emitter) set(s runeSet) {
	switch {
	case len(s) == 0:
		e.b.WriteString("(?!)")
	case len(s) == 1 && s[0].lo == s[0].hi:
		writeRune(&e.b, s[0].lo)
	default:
		e.b.WriteString(class(s))
	}
}

// class spells s as a regexp2 one-character match. regexp2 sorts a class
// again after every range it parses (quadratic in the ranges; \w has
// about 750), but merges the sets of an alternation into one set with a
// sort per alternative: so a big set is written as an alternation of
// classes of at most classChunk ranges, which compiles to a single set.
func class(s runeSet) string {
	var b strings.Builder
	if len(s) > classChunk {
		b.WriteString("(?:")
	}
	for i := 0; i < len(s); i += classChunk {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteByte('[')
		for _, r := range s[i:min(i+classChunk, len(s))] {
			writeClassRune(&b, r.lo)
			if r.hi != r.lo {
				if r.hi > r.lo+1 {
					b.WriteByte('-')
				}
				writeClassRune(&b, r.hi)
			}
		}
		b.WriteByte(']')
	}
	if len(s) > classChunk {
		b.WriteByte(')')
	}
	return b.String()
}

const classChunk = 32

func writeRune(b *strings.Builder, c rune) {
	if c < 0x80 && (c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		b.WriteRune(c)
		return
	}
	b.WriteString(`\x{`)
	b.WriteString(strconv.FormatInt(int64(c), 16))
	b.WriteByte('}')
}

// writeClassRune writes c inside a class: as itself (regexp2 parses a
// class character by character, and an escape costs more), except the
// class syntax characters and surrogates, which UTF-8 cannot carry.
func writeClassRune(b *strings.Builder, c rune) {
	switch {
	case c == '\\' || c == ']' || c == '[' || c == '-' || c == '^' || c >= 0xD800 && c <= 0xDFFF:
		b.WriteString(`\x{`)
		b.WriteString(strconv.FormatInt(int64(c), 16))
		b.WriteByte('}')
	default:
		b.WriteRune(c)
	}
}

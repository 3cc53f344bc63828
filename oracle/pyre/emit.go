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
// group. It also makes the checks sre's compiler makes (_compile), in
// its order.

// maxCode is sre's MAXCODE (CODESIZE 4).
const maxCode = math.MaxUint32

// maxLoop is the largest count regexp2 accepts in {n,m}.
const maxLoop = math.MaxInt32 - 1

type emitter struct {
	b      strings.Builder
	widths [][2]uint64
}

func (e *emitter) seq(s *seq, f flags) {
	for _, n := range s.items {
		e.node(n, f)
	}
}

func (e *emitter) group(open string, s *seq, f flags) {
	e.b.WriteString(open)
	e.seq(s, f)
	e.b.WriteByte(')')
}

func (e *emitter) node(n *node, f flags) {
	if s, ok := charSet(n, f); ok {
		e.set(s)
		return
	}
	switch n.op {
	case opAt:
		e.anchor(n.at, f)
	case opBranch:
		e.b.WriteString("(?:")
		for i, a := range n.alts {
			if i > 0 {
				e.b.WriteByte('|')
			}
			e.seq(a, f)
		}
		e.b.WriteByte(')')
	case opSubpattern:
		open := "(?:"
		if n.group > 0 {
			open = fmt.Sprintf("(?<%d>", n.group)
		}
		e.group(open, n.alts[0], combineFlags(f, n.add, n.del))
	case opAtomic:
		e.group("(?>", n.alts[0], f)
	case opRepeat:
		e.repeat(n, f)
	case opAssert:
		open := "(?"
		if n.behind {
			open += "<"
		}
		if n.negate {
			open += "!"
		} else {
			open += "="
		}
		if n.behind {
			w := n.alts[0].getwidth(e.widths)
			if w[0] > maxCode {
				panic(&Error{Kind: KindSyntax, Msg: "looks too much behind", Pos: -1})
			}
			if w[0] != w[1] {
				panic(&Error{Kind: KindSyntax, Msg: "look-behind requires fixed-width pattern", Pos: -1})
			}
		}
		e.group(open, n.alts[0], f)
	case opGroupRef:
		if on, ascii := ignoreCase(f); on {
			if ascii {
				panic(&Error{Kind: KindUnsupported, Msg: msgASCIIFoldBackref, Pos: -1})
			}
			// regexp2 compares a case-insensitive backreference with
			// unicode.ToLower on both sides, as sre does with
			// unicode_tolower (TestBackrefFoldIsPythons holds them equal).
			fmt.Fprintf(&e.b, `(?i:\k<%d>)`, n.group)
			return
		}
		fmt.Fprintf(&e.b, `\k<%d>`, n.group)
	case opGroupRefExists:
		fmt.Fprintf(&e.b, "(?(%d)", n.group)
		e.group("(?:", n.alts[0], f)
		e.b.WriteByte('|')
		if n.alts[1] != nil {
			e.group("(?:", n.alts[1], f)
		}
		e.b.WriteByte(')')
	}
}

// charSet is what a one-character node accepts under f (ok false for any
// other node).
func charSet(n *node, f flags) (runeSet, bool) {
	switch n.op {
	case opLiteral, opNotLiteral:
		return literalSet(n.c, n.op == opNotLiteral, f), true
	case opIn:
		return classSet(n.set, f), true
	case opAny:
		return anySet(f), true
	}
	return nil, false
}

// msgASCIIFoldBackref refuses what regexp2 cannot compare: sre folds a
// backreference under (?ai) by ASCII case only, regexp2's (?i) by Unicode
// lower case (K and İ fold to k and i).
const msgASCIIFoldBackref = "a backreference under both the ASCII and IGNORECASE flags is not supported"

// combineFlags is _compile's _combine_flags.
func combineFlags(f, add, del flags) flags {
	if add&typeFlags != 0 {
		f &^= typeFlags
	}
	return (f | add) &^ del
}

func (e *emitter) repeat(n *node, f flags) {
	if f&flagTemplate != 0 {
		name := [...]string{greedy: "MAX_REPEAT", lazy: "MIN_REPEAT", possessive: "POSSESSIVE_REPEAT"}[n.kind]
		panic(&Error{Kind: KindSyntax, Msg: "internal: unsupported template operator " + name, Pos: -1})
	}
	lo, hi := n.min, n.max
	if lo > maxLoop {
		// No text a verdict reads has 2^31 characters: only empty
		// iterations could reach the minimum, which regexp2 cannot count.
		if n.alts[0].getwidth(e.widths)[0] > 0 {
			inner := &emitter{widths: e.widths}
			inner.seq(n.alts[0], f) // for the compiler's checks inside
			e.b.WriteString("(?!)")
			return
		}
		panic(&Error{Kind: KindUnsupported, Msg: fmt.Sprintf("a repeat of an item that can match empty at least %d times is not supported", lo), Pos: -1})
	}
	if hi > maxLoop {
		hi = maxRepeat // as good as unbounded for any text shorter than 2^31
	}
	if n.kind == possessive {
		e.b.WriteString("(?>")
	}
	if lo >= 1 && hi > lo && n.alts[0].getwidth(e.widths)[0] == 0 {
		// After its last mandatory iteration sre tries one more even if
		// that one matched empty; regexp2 stops there. Spelled as the
		// mandatory iterations and then an optional loop, both engines
		// try it (the groups inside are numbered, so the copy writes the
		// same groups).
		e.loop(n.alts[0], f, lo, lo, greedy)
		lo, hi = 0, hi-lo
		if hi > maxLoop {
			hi = maxRepeat
		}
	}
	kind := n.kind
	if kind == possessive {
		kind = greedy
	}
	e.loop(n.alts[0], f, lo, hi, kind)
	if n.kind == possessive {
		e.b.WriteByte(')')
	}
	if e.b.Len() > maxEmitted {
		panic(&Error{Kind: KindUnsupported, Msg: "the pattern is too large once its repeats are spelled out", Pos: -1})
	}
}

// maxEmitted bounds the translated pattern (nested repeats of items that
// can match empty double it at each level).
const maxEmitted = 1 << 21

// loop writes (?:body){lo,hi}, lazy or greedy.
func (e *emitter) loop(body *seq, f flags, lo, hi uint32, kind repeatKind) {
	e.group("(?:", body, f)
	switch {
	case hi == maxRepeat && lo == 0:
		e.b.WriteByte('*')
	case hi == maxRepeat && lo == 1:
		e.b.WriteByte('+')
	case hi == maxRepeat:
		fmt.Fprintf(&e.b, "{%d,}", lo)
	case lo == 0 && hi == 1:
		e.b.WriteByte('?')
	case lo == hi:
		fmt.Fprintf(&e.b, "{%d}", lo)
	default:
		fmt.Fprintf(&e.b, "{%d,%d}", lo, hi)
	}
	if kind == lazy {
		e.b.WriteByte('?')
	}
}

func (e *emitter) anchor(at atCode, f flags) {
	switch at {
	case atBeginning:
		if f&flagMultiline != 0 {
			e.b.WriteString(`(?:\A|(?<=\n))`)
		} else {
			e.b.WriteString(`\A`)
		}
	case atBeginningString:
		e.b.WriteString(`\A`)
	case atEnd:
		if f&flagMultiline != 0 {
			e.b.WriteString(`(?=\n|\z)`)
		} else {
			e.b.WriteString(`(?=\n?\z)`)
		}
	case atEndString:
		e.b.WriteString(`\z`)
	case atBoundary:
		// sre: the word-ness of the characters either side differs (no
		// boundary at all in an empty string). (A conditional on a
		// look-behind would test the class once less, but regexp2 then
		// miscounts the groups after it.)
		fmt.Fprintf(&e.b, `(?:(?<=%s)(?!%[1]s)|(?<!%[1]s)(?=%[1]s))`, wordClass(f))
	case atNonBoundary:
		fmt.Fprintf(&e.b, `(?!\A\z)(?:(?<=%s)(?=%[1]s)|(?<!%[1]s)(?!%[1]s))`, wordClass(f))
	}
}

var uniWordClass = sync.OnceValue(func() string { return class(uniWord) })

// wordClass is the class \b tests on either side.
func wordClass(f flags) string {
	if f&flagUnicode != 0 {
		return uniWordClass()
	}
	return class(asciiWord)
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

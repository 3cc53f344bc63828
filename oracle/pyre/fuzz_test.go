package pyre

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// fuzzTexts are short: a catastrophic pattern on a long text spends its
// whole timeout (and regexp2 checks it every 100 ms), starving the fuzzer.
var fuzzTexts = []string{"", "a", "aB1_ -", "x\ny\n", "ıİſ\u212aß", "😀é\u0301", "aaaaaaaab"}

// FuzzPattern drives Compile and Search with any pattern: no panic, no
// hang (Search is bounded by its timeout), every refusal an *Error that
// is not an emitter bug, and every accepted pattern round-trips: the
// tree spelled back as a Python pattern parses to a tree that emits the
// same regexp2 program.
func FuzzPattern(f *testing.F) {
	f.Fuzz(func(t *testing.T, pattern string) {
		re, err := Compile(pattern, 20*time.Millisecond)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || strings.HasPrefix(e.Msg, "internal:") && e.Kind == kindUnsupported {
				t.Fatalf("Compile(%q): %v", pattern, err)
			}
			return
		}
		for _, text := range fuzzTexts {
			re.Search(text) // a timeout is an answer too: no verdict
		}
		tr, _ := parseTree(pattern)
		want, _ := tr.emit()
		spelled := tr.unparse()
		tr2, err := parseTree(spelled)
		if err != nil {
			t.Fatalf("%q spelled as %q: %v", pattern, spelled, err)
		}
		got, err := tr2.emit()
		if err != nil || got != want {
			t.Fatalf("%q spelled as %q emits differently (%v)", pattern, spelled, err)
		}
	})
}

// unparse spells a tree as a Python pattern: global flags first, every
// literal escaped, groups named gN so that references work past \99.
func (t *tree) unparse() string {
	var b strings.Builder
	b.WriteString("(?")
	for _, fl := range []struct {
		f flags
		c byte
	}{{flagIgnoreCase, 'i'}, {flagMultiline, 'm'}, {flagDotAll, 's'}, {flagASCII, 'a'}, {flagUnicode, 'u'}, {flagTemplate, 't'}} {
		if t.p.global&fl.f != 0 {
			b.WriteByte(fl.c)
		}
	}
	b.WriteByte(')')
	if b.Len() == 3 {
		b.Reset()
	}
	unparseNode(&b, t.top)
	return b.String()
}

func unparseGroup(b *strings.Builder, open string, n *node) {
	b.WriteString(open)
	unparseNode(b, n)
	b.WriteByte(')')
}

func unparseRune(b *strings.Builder, c rune) {
	if c < 0x80 && (c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		b.WriteRune(c)
		return
	}
	fmt.Fprintf(b, `\U%08x`, c)
}

func flagLettersOf(f flags) string {
	var s string
	for _, fl := range []struct {
		f flags
		c string
	}{{flagIgnoreCase, "i"}, {flagMultiline, "m"}, {flagDotAll, "s"}, {flagVerbose, "x"}, {flagASCII, "a"}, {flagUnicode, "u"}} {
		if f&fl.f != 0 {
			s += fl.c
		}
	}
	return s
}

var categoryEscapes = [...]string{catDigit: `\d`, catNotDigit: `\D`, catSpace: `\s`, catNotSpace: `\S`, catWord: `\w`, catNotWord: `\W`}

func unparseNode(b *strings.Builder, n *node) {
	if n == nil {
		return
	}
	switch n.kind {
	case kChar:
		switch n.ch.what {
		case cLiteral:
			unparseRune(b, n.ch.c)
		case cNotLiteral:
			b.WriteString("[^")
			unparseRune(b, n.ch.c)
			b.WriteByte(']')
		case cAny:
			b.WriteByte('.')
		case cClass:
			if len(n.ch.items) == 1 && n.ch.items[0].cat != catNone && !n.ch.neg {
				b.WriteString(categoryEscapes[n.ch.items[0].cat])
				return
			}
			b.WriteByte('[')
			if n.ch.neg {
				b.WriteByte('^')
			}
			for _, it := range n.ch.items {
				switch {
				case it.cat != catNone:
					b.WriteString(categoryEscapes[it.cat])
				case it.rng:
					unparseRune(b, it.lo)
					b.WriteByte('-')
					unparseRune(b, it.hi)
				default:
					unparseRune(b, it.lo)
				}
			}
			b.WriteByte(']')
		}
	case kAnchor:
		b.WriteString([...]string{aStart: "^", aStartText: `\A`, aWord: `\b`, aNotWord: `\B`, aEnd: "$", aEndText: `\Z`}[n.anchor])
	case kCat:
		for _, s := range n.subs {
			unparseNode(b, s)
		}
	case kAlt:
		b.WriteString("(?:")
		for i, a := range n.subs {
			if i > 0 {
				b.WriteByte('|')
			}
			unparseNode(b, a)
		}
		b.WriteByte(')')
	case kGroup:
		switch {
		case n.num > 0:
			unparseGroup(b, fmt.Sprintf("(?P<g%d>", n.num), n.subs[0])
		case n.off != 0:
			unparseGroup(b, "(?"+flagLettersOf(n.on)+"-"+flagLettersOf(n.off)+":", n.subs[0])
		default:
			unparseGroup(b, "(?"+flagLettersOf(n.on)+":", n.subs[0])
		}
	case kAtomic:
		unparseGroup(b, "(?>", n.subs[0])
	case kRepeat:
		unparseGroup(b, "(?:", n.subs[0])
		if n.max == unbounded {
			fmt.Fprintf(b, "{%d,}", n.min)
		} else {
			fmt.Fprintf(b, "{%d,%d}", n.min, n.max)
		}
		b.WriteString([...]string{greedy: "", lazy: "?", possessive: "+"}[n.mode])
	case kLook:
		open := map[[2]bool]string{{false, false}: "(?=", {false, true}: "(?!", {true, false}: "(?<=", {true, true}: "(?<!"}
		unparseGroup(b, open[[2]bool{n.behind, n.neg}], n.subs[0])
	case kRef:
		fmt.Fprintf(b, "(?P=g%d)", n.num)
	case kCond:
		fmt.Fprintf(b, "(?(%d)", n.num)
		unparseNode(b, n.subs[0])
		if n.subs[1] != nil {
			b.WriteByte('|')
			unparseNode(b, n.subs[1])
		}
		b.WriteByte(')')
	}
}

func TestUnparseRoundTripsTheVectors(t *testing.T) {
	t.Parallel()
	v, err := loadVectors()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	// The backtracking and mixed suites hold the structures; the unicode
	// suite adds sets, which spell back as themselves.
	for _, su := range v.Suites[1:] {
		for _, vec := range su.Vectors {
			tr, err := parseTree(vec.Pattern)
			if err != nil {
				continue
			}
			want, err := tr.emit()
			if err != nil {
				continue
			}
			tr2, err := parseTree(tr.unparse())
			if err != nil {
				t.Fatalf("%q spelled as %q: %v", vec.Pattern, tr.unparse(), err)
			}
			if got, err := tr2.emit(); err != nil || got != want {
				t.Errorf("%q spelled as %q emits differently (%v)", vec.Pattern, tr.unparse(), err)
			}
			n++
		}
	}
	if n < 1000 {
		t.Errorf("only %d patterns round-tripped", n)
	}
}

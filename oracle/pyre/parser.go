package pyre

import (
	"fmt"
	"strconv"
	"strings"
)

// The parser is recursive descent over the code points of the pattern:
// alternation → sequence → item [quantifier], where an item is a
// character, an escape, a class or a parenthesized construct. It reports
// every error Python reports, with Python's message and position, at the
// point where the offending text has been read. What can only be judged
// once the whole pattern is known waits: conditionals naming a later
// group and the ASCII/UNICODE clash at the end of parse, look-behind
// widths and template-flag repeats in the emitter (widths.go), which
// Python checks only after parsing too.

// maxDepth is how deeply groups may nest. CPython's parser is recursive
// and raises RecursionError past a depth that depends on how deep the
// caller's stack already is (measured from a script's top level: 495
// nested groups compile, 496 do not); deeper than this margin below it,
// the pattern is reported as one this package cannot evaluate rather
// than answered where Python might refuse it.
const maxDepth = 400

// maxGroups is the number of capturing groups sre can address.
const maxGroups = 1<<30 - 1

type parser struct {
	src []rune
	pos int

	global  flags // flags set by (?...) at the start
	started bool  // something other than global flags, comments and verbose whitespace has been read
	depth   int

	groups  int            // capturing groups opened so far
	closed  []bool         // by group number: its ')' has been read
	byNum   []*node        // by group number
	names   map[string]int // group names
	behind  int            // inside a look-behind: the number of groups opened before the outermost one; else -1
	condRef []ref          // conditionals by number, checked once every group is known
}

type ref struct{ num, pos int }

func (p *parser) fail(pos int, format string, args ...any) {
	panic(&Error{Kind: kindSyntax, Msg: fmt.Sprintf(format, args...), Pos: pos})
}

func (p *parser) more() bool { return p.pos < len(p.src) }

func (p *parser) peekIs(c rune) bool { return p.pos < len(p.src) && p.src[p.pos] == c }

func (p *parser) eat(c rune) bool {
	if p.peekIs(c) {
		p.pos++
		return true
	}
	return false
}

// parse reads a whole pattern.
func parse(src []rune) (*node, *parser) {
	p := &parser{src: src, closed: []bool{false}, byNum: []*node{nil}, names: map[string]int{}, behind: -1}
	defer p.loneBackslash()
	top, _ := p.alternation(0)
	if p.more() {
		p.fail(p.pos, "unbalanced parenthesis") // the only way a top-level alternation stops early
	}
	for _, r := range p.condRef {
		if r.num > p.groups {
			p.fail(r.pos, "invalid group reference %d", r.num)
		}
	}
	if p.global&typeFlags == typeFlags {
		panic(&Error{Kind: kindValue, Msg: "ASCII and UNICODE flags are incompatible", Pos: -1})
	}
	return top, p
}

// loneBackslash reports a backslash that ends the pattern unpaired as
// soon as the parser has read up to it: Python reads a backslash and the
// character after it as one token and looks one token ahead, so that
// error comes before any other found once the reading reaches it.
func (p *parser) loneBackslash() {
	r := recover()
	if r == nil {
		return
	}
	n := 0
	for i := len(p.src) - 1; i >= 0 && p.src[i] == '\\'; i-- {
		n++
	}
	if _, ok := r.(*Error); ok && n%2 == 1 && p.pos >= len(p.src)-1 {
		r = &Error{Kind: kindSyntax, Msg: "bad escape (end of pattern)", Pos: len(p.src) - 1}
	}
	panic(r)
}

// alternation reads branches up to an unmatched ')' or the end. fl is
// in force at its start; at the top level a global flag group changes it
// for the rest of the pattern, which is why the flags are returned.
func (p *parser) alternation(fl flags) (*node, flags) {
	start := p.pos
	var branches []*node
	for {
		b, f := p.sequence(fl)
		fl = f
		branches = append(branches, b)
		if !p.eat('|') {
			break
		}
		p.started = true
	}
	if len(branches) == 1 {
		return branches[0], fl
	}
	return &node{kind: kAlt, fl: fl, pos: start, subs: branches}, fl
}

func isVerboseSpace(c rune) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// sequence reads items up to '|', ')' or the end.
func (p *parser) sequence(fl flags) (*node, flags) {
	seq := &node{kind: kCat, fl: fl, pos: p.pos}
	for p.more() {
		c := p.src[p.pos]
		if c == '|' || c == ')' {
			break
		}
		if fl&flagVerbose != 0 {
			if isVerboseSpace(c) {
				p.pos++
				continue
			}
			if c == '#' {
				for p.more() && p.src[p.pos] != '\n' {
					if p.pos++; p.src[p.pos-1] == '\\' {
						p.skipEscaped()
					}
				}
				continue
			}
		}
		if p.quantifier(seq, fl) {
			continue
		}
		n, f := p.item(fl)
		fl = f
		if n != nil {
			p.started = true
			seq.subs = append(seq.subs, n)
		}
	}
	return seq, fl
}

// quantifier reads *, +, ?, or {m,n} (a { that does not start one is a
// literal) with its lazy or possessive suffix and applies it to the last
// item of seq.
func (p *parser) quantifier(seq *node, fl flags) bool {
	at := p.pos
	var lo, hi uint32
	switch p.src[at] {
	case '*':
		lo, hi = 0, unbounded
	case '+':
		lo, hi = 1, unbounded
	case '?':
		lo, hi = 0, 1
	case '{':
		var ok bool
		if lo, hi, ok = p.counts(); !ok {
			return false
		}
	default:
		return false
	}
	if at == p.pos {
		p.pos++
	}
	var last *node
	if k := len(seq.subs); k > 0 {
		last = seq.subs[k-1]
	}
	switch {
	case last == nil || last.kind == kAnchor:
		p.fail(at, "nothing to repeat")
	case last.kind == kRepeat:
		p.fail(at, "multiple repeat")
	}
	mode := greedy
	if p.eat('?') {
		mode = lazy
	} else if p.eat('+') {
		mode = possessive
	}
	seq.subs[len(seq.subs)-1] = &node{kind: kRepeat, fl: fl, pos: last.pos, subs: []*node{last}, min: lo, max: hi, mode: mode}
	return true
}

// counts reads {m}, {m,}, {,n} or {m,n} at p.pos; anything else (ok
// false) leaves the { to be read as a literal.
func (p *parser) counts() (lo, hi uint32, ok bool) {
	i := p.pos + 1
	digits := func() string {
		j := i
		for i < len(p.src) && p.src[i] >= '0' && p.src[i] <= '9' {
			i++
		}
		return string(p.src[j:i])
	}
	min := digits()
	max, comma := min, false
	if i < len(p.src) && p.src[i] == ',' {
		i++
		comma = true
		max = digits()
	}
	if i >= len(p.src) || p.src[i] != '}' || min == "" && !comma {
		return 0, 0, false
	}
	start := p.pos
	p.pos = i + 1
	lo = 0
	if min != "" {
		lo = repeatCount(min)
	}
	hi = unbounded
	if max != "" {
		hi = repeatCount(max)
	}
	if hi < lo {
		p.fail(start+1, "min repeat greater than max repeat")
	}
	return lo, hi, true
}

// repeatCount is a count of {m,n}: Python converts it with int(), which
// refuses more than 4300 digits, then refuses any count sre cannot hold.
func repeatCount(digits string) uint32 {
	if len(digits) > 4300 {
		panic(&Error{Kind: kindValue, Pos: -1, Msg: fmt.Sprintf("Exceeds the limit (4300 digits) for integer string conversion: value has %d digits; use sys.set_int_max_str_digits() to increase the limit", len(digits))})
	}
	v, err := strconv.ParseUint(strings.TrimLeft(digits, "0")+"0", 10, 64)
	if err != nil || v/10 >= unbounded {
		panic(&Error{Kind: kindOverflow, Msg: "the repetition number is too large", Pos: -1})
	}
	return uint32(v / 10)
}

// item reads one item; nil for one that matches nothing by itself (a
// comment or a global flag group, which may change fl).
func (p *parser) item(fl flags) (*node, flags) {
	at := p.pos
	c := p.src[at]
	switch c {
	case '(':
		return p.group(fl)
	case '[':
		return p.class(fl), fl
	case '\\':
		return p.escape(fl), fl
	case '.':
		p.pos++
		return &node{kind: kChar, fl: fl, pos: at, ch: &charItem{what: cAny}}, fl
	case '^':
		p.pos++
		return &node{kind: kAnchor, fl: fl, pos: at, anchor: aStart}, fl
	case '$':
		p.pos++
		return &node{kind: kAnchor, fl: fl, pos: at, anchor: aEnd}, fl
	}
	p.pos++
	return literal(c, fl, at), fl
}

func literal(c rune, fl flags, at int) *node {
	return &node{kind: kChar, fl: fl, pos: at, ch: &charItem{what: cLiteral, c: c}}
}

// enter and leave bound the nesting of groups.
func (p *parser) enter() {
	if p.depth++; p.depth > maxDepth {
		panic(&Error{Kind: kindUnsupported, Msg: "groups nested more deeply than Python can parse", Pos: -1})
	}
}

func (p *parser) leave() { p.depth-- }

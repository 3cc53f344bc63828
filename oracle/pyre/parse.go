package pyre

import (
	"fmt"
)

// This file is CPython 3.11's re/_parser.py (_parse_sub, _parse, parse),
// statement for statement where the statement decides what is accepted:
// the same checks in the same order give the same error at the same
// position.

const (
	specialChars = ".\\[{()*+?^$|"
	repeatChars  = "*+?{"
	digits       = "0123456789"
	octDigits    = "01234567"
	hexDigits    = "0123456789abcdefABCDEF"
	whitespace   = " \t\n\r\v\f"

	maxGroups = 1<<30 - 1 // _sre.MAXGROUPS

	// maxNested bounds the parser's recursion (nested grows by 2 for a
	// group, 1 for a conditional) below where CPython's raises
	// RecursionError: near nested 993 with re.compile called from the
	// top of a program, sooner from deeper in a call stack.
	maxNested = 800
)

type state struct {
	flags       flags
	groupdict   map[string]int
	groupWidths [][2]uint64 // of closed groups
	closed      []bool
	lookbehind  int   // lookbehindgroups; -1 is None
	grouprefs   []int // grouprefpos keys, in insertion order
	grouprefPos map[int]int
}

func (s *state) groups() int { return len(s.groupWidths) }

func (s *state) opengroup(t *tokenizer, name string, named bool, offset int) int {
	gid := s.groups()
	s.groupWidths = append(s.groupWidths, [2]uint64{})
	s.closed = append(s.closed, false)
	if s.groups() > maxGroups {
		panic(t.error("too many groups", offset))
	}
	if named {
		if ogid, ok := s.groupdict[name]; ok {
			panic(t.error(fmt.Sprintf("redefinition of group name %s as group %d; was group %d", pyRepr(name), gid, ogid), offset))
		}
		s.groupdict[name] = gid
	}
	return gid
}

func (s *state) checkgroup(gid int) bool { return gid < s.groups() && s.closed[gid] }

func (s *state) closegroup(gid int, p *seq) {
	s.groupWidths[gid] = p.getwidth(s.groupWidths)
	s.closed[gid] = true
}

func (s *state) checklookbehindgroup(gid int, t *tokenizer) {
	if s.lookbehind < 0 {
		return
	}
	if !s.checkgroup(gid) {
		panic(t.error("cannot refer to an open group", 0))
	}
	if gid >= s.lookbehind {
		panic(t.error("cannot refer to group defined in the same lookbehind subpattern", 0))
	}
}

// parse is sre_parse.parse(str, 0).
func parse(src []rune) (*seq, *state) {
	t := newTokenizer(src)
	st := &state{groupdict: map[string]int{}, groupWidths: [][2]uint64{{}}, closed: []bool{true}, lookbehind: -1, grouprefPos: map[int]int{}}
	p := parseSub(t, st, false, 0)
	// fix_flags for a str pattern.
	if st.flags&flagLocale != 0 {
		panic(&Error{Kind: KindValue, Msg: "cannot use LOCALE flag with a str pattern", Pos: -1})
	}
	if st.flags&flagASCII == 0 {
		st.flags |= flagUnicode
	} else if st.flags&flagUnicode != 0 {
		panic(&Error{Kind: KindValue, Msg: "ASCII and UNICODE flags are incompatible", Pos: -1})
	}
	if !t.end {
		panic(t.error("unbalanced parenthesis", 0))
	}
	for _, g := range st.grouprefs {
		if g >= st.groups() {
			panic(t.errorAt(fmt.Sprintf("invalid group reference %d", g), st.grouprefPos[g]))
		}
	}
	return p, st
}

// parseSub is _parse_sub: an alternation a|b|c.
func parseSub(t *tokenizer, st *state, verbose bool, nested int) *seq {
	var items []*seq
	for {
		items = append(items, parseSeq(t, st, verbose, nested+1, nested == 0 && len(items) == 0))
		if !t.match('|') {
			break
		}
		if nested == 0 {
			verbose = st.flags&flagVerbose != 0
		}
	}
	if len(items) == 1 {
		return items[0]
	}
	sub := &seq{}
	// Move a prefix all alternatives share out of the branch.
	for {
		var prefix *node
		shared := true
		for _, item := range items {
			if len(item.items) == 0 {
				shared = false
				break
			}
			if prefix == nil {
				prefix = item.items[0]
			} else if !item.items[0].equal(prefix) {
				shared = false
				break
			}
		}
		if !shared {
			break
		}
		for _, item := range items {
			item.items = item.items[1:]
		}
		sub.items = append(sub.items, prefix)
	}
	// Alternatives of single characters or sets become one set.
	var set []setItem
	for _, item := range items {
		if len(item.items) != 1 {
			return appendBranch(sub, items)
		}
		n := item.items[0]
		switch {
		case n.op == opLiteral:
			set = append(set, setItem{kind: itemLiteral, lo: n.c})
		case n.op == opIn && n.set[0].kind != itemNegate:
			set = append(set, n.set...)
		default:
			return appendBranch(sub, items)
		}
	}
	sub.items = append(sub.items, &node{op: opIn, set: uniq(set)})
	return sub
}

func appendBranch(sub *seq, items []*seq) *seq {
	sub.items = append(sub.items, &node{op: opBranch, alts: items})
	return sub
}

func uniq(set []setItem) []setItem {
	seen := make(map[setItem]bool, len(set))
	var out []setItem
	for _, it := range set {
		if !seen[it] {
			seen[it] = true
			out = append(out, it)
		}
	}
	return out
}

// parseSeq is _parse: a sequence up to | or ).
func parseSeq(t *tokenizer, st *state, verbose bool, nested int, first bool) *seq {
	if nested > maxNested {
		panic(&Error{Kind: KindUnsupported, Msg: "the pattern nests groups too deeply (Python 3.11's parser exhausts its recursion limit near 495 levels, fewer in a deep call stack)", Pos: t.tell(), pattern: t.src})
	}
	sub := &seq{}
	for !t.end && !t.nextIn("|)") {
		this, _ := t.get()
		if verbose && !this.esc {
			if runeIn(this.c, whitespace) {
				continue
			}
			if this.c == '#' {
				for {
					c, ok := t.get()
					if !ok || !c.esc && c.c == '\n' {
						break
					}
				}
				continue
			}
		}
		switch {
		case this.esc:
			sub.items = append(sub.items, parseEscape(t, this, st))
		case !runeIn(this.c, specialChars):
			sub.items = append(sub.items, &node{op: opLiteral, c: this.c})
		case this.c == '[':
			sub.items = append(sub.items, parseSet(t))
		case runeIn(this.c, repeatChars):
			parseRepeat(t, sub, this)
		case this.c == '.':
			sub.items = append(sub.items, &node{op: opAny})
		case this.c == '(':
			n, global := parseGroup(t, st, sub, verbose, nested, first)
			if global {
				verbose = st.flags&flagVerbose != 0
			} else if n != nil {
				sub.items = append(sub.items, n)
			}
		case this.c == '^':
			sub.items = append(sub.items, &node{op: opAt, at: atBeginning})
		case this.c == '$':
			sub.items = append(sub.items, &node{op: opAt, at: atEnd})
		}
	}
	// Unpack non-capturing groups without flags.
	var items []*node
	for _, n := range sub.items {
		if n.op == opSubpattern && n.group == 0 && n.add == 0 && n.del == 0 {
			items = append(items, n.alts[0].items...)
		} else {
			items = append(items, n)
		}
	}
	sub.items = items
	return sub
}

func runeIn(c rune, set string) bool {
	for _, s := range set {
		if s == c {
			return true
		}
	}
	return false
}

// parseSet parses [...] after the opening bracket.
func parseSet(t *tokenizer) *node {
	here := t.tell() - 1
	var set []setItem
	negate := t.match('^')
	for {
		this, ok := t.get()
		if !ok {
			panic(t.error("unterminated character set", t.tell()-here))
		}
		if !this.esc && this.c == ']' && len(set) > 0 {
			break
		}
		code1 := setMember(t, this)
		if !t.match('-') {
			set = append(set, code1)
			continue
		}
		that, ok := t.get()
		if !ok {
			panic(t.error("unterminated character set", t.tell()-here))
		}
		if !that.esc && that.c == ']' {
			set = append(set, code1, setItem{kind: itemLiteral, lo: '-'})
			break
		}
		code2 := setMember(t, that)
		msg := fmt.Sprintf("bad character range %s-%s", this, that)
		if code1.kind != itemLiteral || code2.kind != itemLiteral || code2.lo < code1.lo {
			panic(t.error(msg, this.len()+1+that.len()))
		}
		set = append(set, setItem{kind: itemRange, lo: code1.lo, hi: code2.lo})
	}
	set = uniq(set)
	if len(set) == 1 && set[0].kind == itemLiteral {
		if negate {
			return &node{op: opNotLiteral, c: set[0].lo}
		}
		return &node{op: opLiteral, c: set[0].lo}
	}
	if negate {
		set = append([]setItem{{kind: itemNegate}}, set...)
	}
	return &node{op: opIn, set: set}
}

// setMember reads one member of a set: an escape or a literal.
func setMember(t *tokenizer, tok token) setItem {
	if tok.esc {
		return classEscape(t, tok)
	}
	return setItem{kind: itemLiteral, lo: tok.c}
}

// parseRepeat applies a quantifier to the last item of sub.
func parseRepeat(t *tokenizer, sub *seq, this token) {
	here := t.tell()
	var lo, hi uint32
	switch this.c {
	case '?':
		lo, hi = 0, 1
	case '*':
		lo, hi = 0, maxRepeat
	case '+':
		lo, hi = 1, maxRepeat
	case '{':
		if t.nextIs('}') {
			sub.items = append(sub.items, &node{op: opLiteral, c: '{'})
			return
		}
		lo, hi = 0, maxRepeat
		min := t.getwhile(len(t.src), digits)
		var max string
		if t.match(',') {
			max = t.getwhile(len(t.src), digits)
		} else {
			max = min
		}
		if !t.match('}') {
			sub.items = append(sub.items, &node{op: opLiteral, c: '{'})
			t.seek(here)
			return
		}
		if min != "" {
			lo = repeatCount(min)
		}
		if max != "" {
			hi = repeatCount(max)
			if hi < lo {
				panic(t.error("min repeat greater than max repeat", t.tell()-here))
			}
		}
	}
	var item *node
	if len(sub.items) > 0 {
		item = sub.items[len(sub.items)-1]
	}
	if item == nil || item.op == opAt {
		panic(t.error("nothing to repeat", t.tell()-here+this.len()))
	}
	if item.op == opRepeat {
		panic(t.error("multiple repeat", t.tell()-here+this.len()))
	}
	body := &seq{items: []*node{item}}
	if item.op == opSubpattern && item.group == 0 && item.add == 0 && item.del == 0 {
		body = item.alts[0]
	}
	kind := greedy
	if t.match('?') {
		kind = lazy
	} else if t.match('+') {
		kind = possessive
	}
	sub.items[len(sub.items)-1] = &node{op: opRepeat, min: lo, max: hi, kind: kind, alts: []*seq{body}}
}

// repeatCount is int() of a repeat bound, with sre's limit.
func repeatCount(s string) uint32 {
	if len(s) > maxStrDigits {
		panic(&Error{Kind: KindValue, Msg: fmt.Sprintf("Exceeds the limit (%d digits) for integer string conversion: value has %d digits; use sys.set_int_max_str_digits() to increase the limit", maxStrDigits, len(s)), Pos: -1})
	}
	var v uint64
	for _, c := range s {
		v = v*10 + uint64(c-'0')
		if v >= maxRepeat {
			panic(&Error{Kind: KindOverflow, Msg: "the repetition number is too large", Pos: -1})
		}
	}
	return uint32(v)
}

// maxStrDigits is sys.get_int_max_str_digits() (3.11's default).
const maxStrDigits = 4300

package pyre

// Groups: captures, lookarounds, conditionals and inline flags.

import (
	"strconv"
	"strings"
)

// body reads the alternation of a group opened at open and its ')'.
func (p *parser) body(fl flags, open int) *node {
	n, _ := p.alternation(fl)
	if !p.eat(')') {
		p.fail(open, "missing ), unterminated subpattern")
	}
	return n
}

func (p *parser) group(fl flags) (*node, flags) {
	open := p.pos
	p.pos++
	if !p.eat('?') {
		return p.capture(fl, open, "", 0), fl
	}
	if !p.more() {
		p.fail(p.pos, "unexpected end of pattern")
	}
	c := p.src[p.pos]
	p.pos++
	switch c {
	case 'P':
		if !p.more() {
			p.fail(p.pos, "unexpected end of pattern")
		}
		d := p.src[p.pos]
		p.pos++
		switch d {
		case '<':
			at := p.pos
			name := p.name('>', "missing >, unterminated name")
			if !isIdentifier(name) {
				p.fail(at, "bad character in group name %s", pyRepr(name))
			}
			if was, dup := p.names[name]; dup {
				p.fail(at, "redefinition of group name %s as group %d; was group %d", pyRepr(name), p.groups+1, was)
			}
			return p.capture(fl, open, name, at), fl
		case '=':
			at := p.pos
			name := p.name(')', "missing ), unterminated name")
			if !isIdentifier(name) {
				p.fail(at, "bad character in group name %s", pyRepr(name))
			}
			num, ok := p.names[name]
			if !ok {
				p.fail(at, "unknown group name %s", pyRepr(name))
			}
			if !p.closed[num] {
				p.fail(at, "cannot refer to an open group")
			}
			p.checkBehind(num)
			p.started = true
			return &node{kind: kRef, fl: fl, pos: open, num: num}, fl
		}
		p.fail(open+1, "unknown extension ?P%s", p.token(d))
	case ':':
		// A plain group is its contents: it only delimits them.
		p.started = true
		p.enter()
		defer p.leave()
		return p.body(fl, open), fl
	case '#':
		for {
			if !p.more() {
				p.fail(open, "missing ), unterminated comment")
			}
			c := p.src[p.pos]
			p.pos++
			if c == ')' {
				return nil, fl
			}
			if c == '\\' {
				p.skipEscaped()
			}
		}
	case '=', '!':
		return p.look(fl, open, false, c == '!'), fl
	case '<':
		if !p.more() {
			p.fail(p.pos, "unexpected end of pattern")
		}
		d := p.src[p.pos]
		p.pos++
		if d == '=' || d == '!' {
			return p.look(fl, open, true, d == '!'), fl
		}
		p.fail(open+1, "unknown extension ?<%s", p.token(d))
	case '>':
		p.started = true
		p.enter()
		defer p.leave()
		return &node{kind: kAtomic, fl: fl, pos: open, subs: []*node{p.body(fl, open)}}, fl
	case '(':
		return p.conditional(fl, open), fl
	default:
		if _, ok := flagOf(c); ok || c == '-' {
			p.pos--
			return p.flagGroup(fl, open)
		}
	}
	p.fail(open+1, "unknown extension ?%s", p.token(c))
	return nil, fl
}

// token is c, just read, as Python names it in a message: a backslash
// with the character after it (which it reads too).
func (p *parser) token(c rune) string {
	if c == '\\' && p.more() {
		p.pos++
		return string(c) + string(p.src[p.pos-1])
	}
	return string(c)
}

// skipEscaped passes the character after a backslash inside a name or a
// comment: Python reads the two as one, so "\)" does not close it.
func (p *parser) skipEscaped() {
	if !p.more() {
		p.fail(len(p.src)-1, "bad escape (end of pattern)")
	}
	p.pos++
}

// name reads a group name up to end (consumed).
func (p *parser) name(end rune, unterminated string) string {
	at := p.pos
	for {
		if !p.more() {
			if p.pos == at {
				p.fail(at, "missing group name")
			}
			p.fail(at, "%s", unterminated)
		}
		c := p.src[p.pos]
		if c == end {
			break
		}
		p.pos++
		if c == '\\' {
			p.skipEscaped()
		}
	}
	name := string(p.src[at:p.pos])
	p.pos++
	if name == "" {
		p.fail(at, "missing group name")
	}
	return name
}

func (p *parser) capture(fl flags, open int, name string, at int) *node {
	p.started = true
	p.enter()
	defer p.leave()
	p.groups++
	num := p.groups
	if p.groups > maxGroups {
		p.fail(at, "too many groups")
	}
	if name != "" {
		p.names[name] = num
	}
	g := &node{kind: kGroup, fl: fl, pos: open, num: num}
	p.closed = append(p.closed, false)
	p.byNum = append(p.byNum, g)
	g.subs = []*node{p.body(fl, open)}
	p.closed[num] = true
	return g
}

func (p *parser) look(fl flags, open int, behind, neg bool) *node {
	p.started = true
	p.enter()
	defer p.leave()
	saved := p.behind
	if behind && saved < 0 {
		p.behind = p.groups
	}
	body := p.body(fl, open)
	p.behind = saved
	return &node{kind: kLook, fl: fl, pos: open, subs: []*node{body}, behind: behind, neg: neg}
}

// checkBehind refuses, inside a look-behind, a reference to a group that
// is not closed yet or that the same look-behind opened (its width is not
// known when the look-behind's is needed).
func (p *parser) checkBehind(num int) {
	if p.behind < 0 {
		return
	}
	if num >= len(p.closed) || !p.closed[num] {
		p.fail(p.pos, "cannot refer to an open group")
	}
	if num > p.behind {
		p.fail(p.pos, "cannot refer to group defined in the same lookbehind subpattern")
	}
}

// conditional reads (?(ref)yes|no) after its "(?(".
func (p *parser) conditional(fl flags, open int) *node {
	p.started = true
	at := p.pos
	name := p.name(')', "missing ), unterminated name")
	var num int
	if isIdentifier(name) {
		n, ok := p.names[name]
		if !ok {
			p.fail(at, "unknown group name %s", pyRepr(name))
		}
		num = n
	} else {
		v, ok := pyInt(name)
		switch {
		case !ok:
			p.fail(at, "bad character in group name %s", pyRepr(name))
		case v == "0":
			p.fail(at, "bad group number")
		case len(v) > 10 || mustAtoi(v) >= maxGroups:
			p.fail(at, "invalid group reference %s", v)
		}
		num = mustAtoi(v)
		p.condRef = append(p.condRef, ref{num, at})
	}
	p.checkBehind(num)
	p.enter()
	defer p.leave()
	yes, _ := p.sequence(fl)
	var no *node
	if p.eat('|') {
		no, _ = p.sequence(fl)
		if p.peekIs('|') {
			p.fail(p.pos, "conditional backref with more than two branches")
		}
	}
	if !p.eat(')') {
		p.fail(open, "missing ), unterminated subpattern")
	}
	return &node{kind: kCond, fl: fl, pos: open, num: num, subs: []*node{yes, no}}
}

func mustAtoi(s string) int {
	v, _ := strconv.Atoi(s)
	return v
}

// pyInt is int(s) for a group number written as a conditional's name:
// surrounding white space, a sign, decimal digits of any script, single
// underscores between digits. It returns the value in ASCII decimal
// without leading zeros; ok is false for what int() refuses and for a
// negative number (not a group either).
func pyInt(s string) (v string, ok bool) {
	rs := []rune(s)
	i, j := 0, len(rs)
	for i < j && uniSpace().contains(rs[i]) {
		i++
	}
	for j > i && uniSpace().contains(rs[j-1]) {
		j--
	}
	neg := false
	if i < j && (rs[i] == '+' || rs[i] == '-') {
		neg = rs[i] == '-'
		i++
	}
	var b strings.Builder
	prevDigit := false
	for k := i; k < j; k++ {
		d, isDigit := decimalValue(rs[k])
		switch {
		case isDigit:
			b.WriteByte(byte('0' + d))
			prevDigit = true
		case rs[k] == '_' && prevDigit && k+1 < j:
			prevDigit = false
		default:
			return "", false
		}
	}
	if !prevDigit || b.Len() > 4300 {
		return "", false
	}
	v = strings.TrimLeft(b.String(), "0")
	if v == "" {
		v = "0"
	}
	if neg && v != "0" {
		return "", false
	}
	return v, true
}

// decimalValue is the digit value of a decimal digit of any script.
func decimalValue(c rune) (int, bool) {
	for _, z := range decimalZeros {
		if c >= z && c <= z+9 {
			return int(c - z), true
		}
	}
	return 0, false
}

// flagGroup reads (?flags) or (?on-off:...) from its first letter.
func (p *parser) flagGroup(fl flags, open int) (*node, flags) {
	var on, off flags
	next := func() rune {
		c := p.src[p.pos]
		p.pos++
		return c
	}
	unknown := func(c rune, otherwise string) {
		at := p.pos - 1
		if c == '\\' {
			p.token(c) // read as one with what follows
		} else if alpha().contains(c) {
			otherwise = "unknown flag"
		}
		p.fail(at, "%s", otherwise)
	}
	c := next()
	if c != '-' {
		for {
			f, _ := flagOf(c)
			if c == 'L' {
				p.fail(p.pos, "bad inline flags: cannot use 'L' flag with a str pattern")
			}
			if on |= f; on&typeFlags == typeFlags {
				p.fail(p.pos, "bad inline flags: flags 'a', 'u' and 'L' are incompatible")
			}
			if !p.more() {
				p.fail(p.pos, "missing -, : or )")
			}
			if c = next(); c == ')' || c == '-' || c == ':' {
				break
			}
			if _, ok := flagOf(c); !ok {
				unknown(c, "missing -, : or )")
			}
		}
		if c == ')' {
			if p.started || p.depth > 0 {
				p.fail(open, "global flags not at the start of the expression")
			}
			p.global |= on
			return nil, fl | on
		}
		if on&flagTemplate != 0 {
			p.fail(p.pos-1, "bad inline flags: cannot turn on global flag")
		}
	}
	if c == '-' {
		if !p.more() {
			p.fail(p.pos, "missing flag")
		}
		c = next()
		for {
			f, ok := flagOf(c)
			if !ok {
				unknown(c, "missing flag")
			}
			if c == 'a' || c == 'u' || c == 'L' {
				p.fail(p.pos, "bad inline flags: cannot turn off flags 'a', 'u' and 'L'")
			}
			off |= f
			if !p.more() {
				p.fail(p.pos, "missing :")
			}
			if c = next(); c == ':' {
				break
			}
			if _, ok := flagOf(c); !ok {
				unknown(c, "missing :")
			}
		}
	}
	if off&flagTemplate != 0 {
		p.fail(p.pos-1, "bad inline flags: cannot turn off global flag")
	}
	if on&off != 0 {
		p.fail(p.pos-1, "bad inline flags: flag turned on and off")
	}
	p.started = true
	p.enter()
	defer p.leave()
	inner := scoped(fl, on, off)
	return &node{kind: kGroup, fl: fl, pos: open, on: on, off: off, subs: []*node{p.body(inner, open)}}, fl
}

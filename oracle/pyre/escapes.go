package pyre

// Backslash escapes, outside and inside classes. Both share the
// character escapes (\x, \u, \U, \N{...}, octal, the C controls); they
// differ in what else a letter or digit means.

func isASCIILetter(c rune) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isOctal(c rune) bool { return c >= '0' && c <= '7' }

func isDigit(c rune) bool { return c >= '0' && c <= '9' }

var controls = map[rune]rune{'a': 7, 'f': 12, 'n': 10, 'r': 13, 't': 9, 'v': 11, '\\': '\\'}

var categoryOf = map[rune]category{'d': catDigit, 'D': catNotDigit, 's': catSpace, 'S': catNotSpace, 'w': catWord, 'W': catNotWord}

// escape reads an escape outside a class at p.pos (the backslash).
func (p *parser) escape(fl flags) *node {
	at := p.pos
	p.pos++
	if !p.more() {
		p.fail(at, "bad escape (end of pattern)")
	}
	c := p.src[p.pos]
	p.pos++
	if cat, ok := categoryOf[c]; ok {
		return &node{kind: kChar, fl: fl, pos: at, ch: &charItem{what: cClass, items: []classItem{{cat: cat}}}}
	}
	anchors := map[rune]anchor{'A': aStartText, 'Z': aEndText, 'b': aWord, 'B': aNotWord}
	if a, ok := anchors[c]; ok {
		return &node{kind: kAnchor, fl: fl, pos: at, anchor: a}
	}
	if r, ok := p.charEscape(c, at); ok {
		return literal(r, fl, at)
	}
	switch {
	case c == '0':
		return literal(p.octal(0, 2), fl, at)
	case isDigit(c):
		// \ddd (three octal digits) is a character, otherwise one or two
		// digits are a group number.
		if p.pos+1 < len(p.src) && isOctal(c) && isOctal(p.src[p.pos]) && isOctal(p.src[p.pos+1]) {
			v := (c-'0')*64 + (p.src[p.pos]-'0')*8 + p.src[p.pos+1] - '0'
			p.pos += 2
			if v > 0o377 {
				p.fail(at, "octal escape value %s outside of range 0-0o377", string(p.src[at:p.pos]))
			}
			return literal(v, fl, at)
		}
		num := int(c - '0')
		if p.more() && isDigit(p.src[p.pos]) {
			num = num*10 + int(p.src[p.pos]-'0')
			p.pos++
		}
		if num > p.groups {
			p.fail(at+1, "invalid group reference %d", num)
		}
		if !p.closed[num] {
			p.fail(at, "cannot refer to an open group")
		}
		p.checkBehind(num)
		return &node{kind: kRef, fl: fl, pos: at, num: num}
	case isASCIILetter(c):
		p.fail(at, "bad escape %s", string(p.src[at:p.pos]))
	}
	return literal(c, fl, at)
}

// classEscape reads an escape inside a class at p.pos (the backslash):
// a character or a category.
func (p *parser) classEscape() classItem {
	at := p.pos
	p.pos++
	if !p.more() {
		p.fail(at, "bad escape (end of pattern)")
	}
	c := p.src[p.pos]
	p.pos++
	if cat, ok := categoryOf[c]; ok {
		return classItem{cat: cat}
	}
	if c == 'b' {
		return classItem{lo: 8, hi: 8}
	}
	if r, ok := p.charEscape(c, at); ok {
		return classItem{lo: r, hi: r}
	}
	if isOctal(c) {
		v := p.octal(c-'0', 2)
		if v > 0o377 {
			p.fail(at, "octal escape value %s outside of range 0-0o377", string(p.src[at:p.pos]))
		}
		return classItem{lo: v, hi: v}
	}
	if isDigit(c) || isASCIILetter(c) {
		p.fail(at, "bad escape %s", string(p.src[at:p.pos]))
	}
	return classItem{lo: c, hi: c}
}

// octal continues an octal escape whose first digit was v with up to n
// more octal digits.
func (p *parser) octal(v rune, n int) rune {
	for ; n > 0 && p.more() && isOctal(p.src[p.pos]); n-- {
		v = v*8 + p.src[p.pos] - '0'
		p.pos++
	}
	return v
}

// charEscape reads the escapes that mean one character wherever they
// are: \a \f \n \r \t \v \\, \xhh, \uhhhh, \Uhhhhhhhh and \N{name}. c is
// the character after the backslash at at (already read).
func (p *parser) charEscape(c rune, at int) (rune, bool) {
	if r, ok := controls[c]; ok {
		return r, true
	}
	digits := map[rune]int{'x': 2, 'u': 4, 'U': 8}
	if n, ok := digits[c]; ok {
		var v rune
		for i := 0; i < n; i++ {
			d, ok := hexValue(p.src, p.pos)
			if !ok {
				p.fail(at, "incomplete escape %s", string(p.src[at:p.pos]))
			}
			v = v*16 + d
			p.pos++
		}
		if v > maxRune {
			p.fail(at, "bad escape %s", string(p.src[at:p.pos]))
		}
		return v, true
	}
	if c != 'N' {
		return 0, false
	}
	if !p.eat('{') {
		p.fail(p.pos, "missing {")
	}
	start := p.pos
	for p.more() && p.src[p.pos] != '}' {
		if p.pos++; p.src[p.pos-1] == '\\' {
			p.skipEscaped()
		}
	}
	name := string(p.src[start:p.pos])
	if name == "" {
		p.fail(start, "missing character name")
	}
	if !p.eat('}') {
		p.fail(start, "missing }, unterminated name")
	}
	r, ok := lookupName(name)
	if !ok {
		p.fail(at, "undefined character name %s", pyRepr(name))
	}
	return r, true
}

// tokenLen is how many code points Python reads as one token at i: two
// for a backslash and what follows, else one.
func tokenLen(src []rune, i int) int {
	if src[i] == '\\' && i+1 < len(src) {
		return 2
	}
	return 1
}

func hexValue(src []rune, i int) (rune, bool) {
	if i >= len(src) {
		return 0, false
	}
	switch c := src[i]; {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// class reads [...] at p.pos.
func (p *parser) class(fl flags) *node {
	open := p.pos
	p.pos++
	ci := &charItem{what: cClass, neg: p.eat('^')}
	first := true
	member := func() classItem {
		if p.src[p.pos] == '\\' {
			return p.classEscape()
		}
		c := p.src[p.pos]
		p.pos++
		return classItem{lo: c, hi: c}
	}
	for {
		if !p.more() {
			p.fail(open, "unterminated character set")
		}
		if p.src[p.pos] == ']' && !first {
			p.pos++
			break
		}
		first = false
		at := p.pos
		a := member()
		first := p.src[at : at+tokenLen(p.src, at)]
		if !p.eat('-') {
			ci.items = append(ci.items, a)
			continue
		}
		if !p.more() {
			p.fail(open, "unterminated character set")
		}
		if p.src[p.pos] == ']' {
			ci.items = append(ci.items, a, classItem{lo: '-', hi: '-'})
			continue
		}
		bAt := p.pos
		b := member()
		if a.cat != catNone || b.cat != catNone || a.lo > b.lo {
			// Python names each end by its first token and counts the
			// position back from the end of the range by their lengths.
			second := p.src[bAt : bAt+tokenLen(p.src, bAt)]
			p.fail(p.pos-len(first)-1-len(second), "bad character range %s-%s", string(first), string(second))
		}
		ci.items = append(ci.items, classItem{lo: a.lo, hi: b.lo, rng: true})
	}
	// One character alone is that character (or every other one).
	if len(ci.items) == 1 && ci.items[0].cat == catNone && !ci.items[0].rng {
		c := ci.items[0].lo
		if ci.neg {
			return &node{kind: kChar, fl: fl, pos: open, ch: &charItem{what: cNotLiteral, c: c}}
		}
		return literal(c, fl, open)
	}
	return &node{kind: kChar, fl: fl, pos: open, ch: ci}
}

package pyre

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// parseGroup is the "(" case of _parse. It returns the node to append, or
// nil for a comment; global is true for global flags, which change the
// state instead.
func parseGroup(t *tokenizer, st *state, sub *seq, verbose bool, nested int, first bool) (n *node, global bool) {
	start := t.tell() - 1
	capture, atomic := true, false
	name, named := "", false
	var add, del flags
	if t.match('?') {
		char, ok := t.get()
		if !ok {
			panic(t.error("unexpected end of pattern", 0))
		}
		plain := !char.esc
		switch {
		case plain && char.c == 'P':
			switch {
			case t.match('<'):
				name, named = t.getuntil('>', "group name"), true
				t.checkgroupname(name, 1)
			case t.match('='):
				name = t.getuntil(')', "group name")
				t.checkgroupname(name, 1)
				gid, ok := st.groupdict[name]
				if !ok {
					panic(t.error("unknown group name "+pyRepr(name), runeLen(name)+1))
				}
				if !st.checkgroup(gid) {
					panic(t.error("cannot refer to an open group", runeLen(name)+1))
				}
				st.checklookbehindgroup(gid, t)
				return &node{op: opGroupRef, group: gid}, false
			default:
				char, ok := t.get()
				if !ok {
					panic(t.error("unexpected end of pattern", 0))
				}
				panic(t.error("unknown extension ?P"+char.String(), char.len()+2))
			}
		case plain && char.c == ':':
			capture = false
		case plain && char.c == '#':
			for {
				if t.end {
					panic(t.error("missing ), unterminated comment", t.tell()-start))
				}
				if c, _ := t.get(); !c.esc && c.c == ')' {
					return nil, false
				}
			}
		case plain && runeIn(char.c, "=!<"):
			return parseLookaround(t, st, char, verbose, nested, start), false
		case plain && char.c == '(':
			return parseConditional(t, st, verbose, nested, start), false
		case plain && char.c == '>':
			capture, atomic = false, true
		case plain && (char.c == '-' || flagLetters[char.c] != 0):
			var isGlobal bool
			add, del, isGlobal = parseFlags(t, st, char.c)
			if isGlobal {
				if !first || len(sub.items) > 0 {
					panic(t.error("global flags not at the start of the expression", t.tell()-start))
				}
				return nil, true
			}
			capture = false
		default:
			panic(t.error("unknown extension ?"+char.String(), char.len()+1))
		}
	}
	group := 0
	if capture {
		group = st.opengroup(t, name, named, runeLen(name)+1)
	}
	subVerbose := (verbose || add&flagVerbose != 0) && del&flagVerbose == 0
	p := parseSub(t, st, subVerbose, nested+1)
	if !t.match(')') {
		panic(t.error("missing ), unterminated subpattern", t.tell()-start))
	}
	if group != 0 {
		st.closegroup(group, p)
	}
	if atomic {
		return &node{op: opAtomic, alts: []*seq{p}}, false
	}
	return &node{op: opSubpattern, group: group, add: add, del: del, alts: []*seq{p}}, false
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

func parseLookaround(t *tokenizer, st *state, char token, verbose bool, nested, start int) *node {
	behind := false
	saved := st.lookbehind
	if char.c == '<' {
		c, ok := t.get()
		if !ok {
			panic(t.error("unexpected end of pattern", 0))
		}
		if c.esc || !runeIn(c.c, "=!") {
			panic(t.error("unknown extension ?<"+c.String(), c.len()+2))
		}
		char, behind = c, true
		if saved < 0 {
			st.lookbehind = st.groups()
		}
	}
	p := parseSub(t, st, verbose, nested+1)
	if behind && saved < 0 {
		st.lookbehind = -1
	}
	if !t.match(')') {
		panic(t.error("missing ), unterminated subpattern", t.tell()-start))
	}
	return &node{op: opAssert, behind: behind, negate: char.c == '!', alts: []*seq{p}}
}

func parseConditional(t *tokenizer, st *state, verbose bool, nested, start int) *node {
	condname := t.getuntil(')', "group name")
	offset := runeLen(condname) + 1
	var condgroup int
	if isIdentifier(condname) {
		t.checkgroupname(condname, 1)
		gid, ok := st.groupdict[condname]
		if !ok {
			panic(t.error("unknown group name "+pyRepr(condname), offset))
		}
		condgroup = gid
	} else {
		digits, ok := pyInt(condname)
		if !ok {
			panic(t.error("bad character in group name "+pyRepr(condname), offset))
		}
		if digits == "0" {
			panic(t.error("bad group number", offset))
		}
		v, err := strconv.Atoi(digits)
		if err != nil || len(digits) > 10 || v >= maxGroups {
			panic(t.error("invalid group reference "+digits, offset))
		}
		condgroup = v
		if _, seen := st.grouprefPos[condgroup]; !seen {
			st.grouprefPos[condgroup] = t.tell() - offset
			st.grouprefs = append(st.grouprefs, condgroup)
		}
	}
	st.checklookbehindgroup(condgroup, t)
	yes := parseSeq(t, st, verbose, nested+1, false)
	var no *seq
	if t.match('|') {
		no = parseSeq(t, st, verbose, nested+1, false)
		if t.nextIs('|') {
			panic(t.error("conditional backref with more than two branches", 0))
		}
	}
	if !t.match(')') {
		panic(t.error("missing ), unterminated subpattern", t.tell()-start))
	}
	return &node{op: opGroupRefExists, group: condgroup, alts: []*seq{yes, no}}
}

// pyInt is int(s) for a non-negative result: the value's decimal digits
// (no sign, no leading zeros, no underscores), or ok false where Python
// raises ValueError (or the value is negative).
func pyInt(s string) (string, bool) {
	// _PyUnicode_TransformDecimalAndSpaceToASCII, then PyLong_FromString.
	var b strings.Builder
	for _, c := range s {
		switch {
		case c < 127:
			b.WriteRune(c)
		case uniSpace.contains(c):
			b.WriteByte(' ')
		default:
			d, ok := decimalValue(c)
			if !ok {
				return "", false
			}
			b.WriteByte(byte('0' + d))
		}
	}
	a := strings.Trim(b.String(), " \t\n\v\f\r")
	neg := false
	if a != "" && (a[0] == '+' || a[0] == '-') {
		neg, a = a[0] == '-', a[1:]
	}
	var ds strings.Builder
	for i := 0; i < len(a); i++ {
		switch c := a[i]; {
		case c >= '0' && c <= '9':
			ds.WriteByte(c)
		case c == '_' && i > 0 && i+1 < len(a) && a[i-1] != '_' && a[i+1] >= '0' && a[i+1] <= '9':
		default:
			return "", false
		}
	}
	d := ds.String()
	if d == "" || len(d) > maxStrDigits {
		return "", false
	}
	d = strings.TrimLeft(d, "0")
	if d == "" {
		return "0", true
	}
	return d, !neg
}

// decimalValue is unicodedata.decimal(c).
func decimalValue(c rune) (int, bool) {
	for _, z := range decimalZeros {
		if c >= z && c < z+10 {
			return int(c - z), true
		}
	}
	return 0, false
}

// parseFlags is _parse_flags: (?aiLmsux-imsx:...) or (?aiLmsux).
func parseFlags(t *tokenizer, st *state, char rune) (add, del flags, global bool) {
	if char != '-' {
		for {
			flag := flagLetters[char]
			if char == 'L' {
				panic(t.error("bad inline flags: cannot use 'L' flag with a str pattern", 0))
			}
			add |= flag
			if flag&typeFlags != 0 && add&typeFlags != flag {
				panic(t.error("bad inline flags: flags 'a', 'u' and 'L' are incompatible", 0))
			}
			c, ok := t.get()
			if !ok {
				panic(t.error("missing -, : or )", 0))
			}
			if !c.esc && runeIn(c.c, ")-:") {
				char = c.c
				break
			}
			if c.esc || flagLetters[c.c] == 0 {
				panic(t.error(flagError(c, "missing -, : or )"), c.len()))
			}
			char = c.c
		}
	}
	if char == ')' {
		st.flags |= add
		return 0, 0, true
	}
	if add&globalFlags != 0 {
		panic(t.error("bad inline flags: cannot turn on global flag", 1))
	}
	if char == '-' {
		c, ok := t.get()
		if !ok {
			panic(t.error("missing flag", 0))
		}
		if c.esc || flagLetters[c.c] == 0 {
			panic(t.error(flagError(c, "missing flag"), c.len()))
		}
		for {
			flag := flagLetters[c.c]
			if flag&typeFlags != 0 {
				panic(t.error("bad inline flags: cannot turn off flags 'a', 'u' and 'L'", 0))
			}
			del |= flag
			c, ok = t.get()
			if !ok {
				panic(t.error("missing :", 0))
			}
			if !c.esc && c.c == ':' {
				break
			}
			if c.esc || flagLetters[c.c] == 0 {
				panic(t.error(flagError(c, "missing :"), c.len()))
			}
		}
	}
	if del&globalFlags != 0 {
		panic(t.error("bad inline flags: cannot turn off global flag", 1))
	}
	if add&del != 0 {
		panic(t.error("bad inline flags: flag turned on and off", 1))
	}
	return add, del, false
}

// flagError is "unknown flag" for a letter (str.isalpha), else missing.
func flagError(c token, missing string) string {
	if !c.esc && alpha.contains(c.c) {
		return "unknown flag"
	}
	return missing
}

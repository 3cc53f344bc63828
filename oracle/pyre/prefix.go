package pyre

// re/_compiler.py's _compile_info gives a pattern whose minimum width is
// not 0 and which has no literal prefix a "charset prefix": re.search
// tries only the positions whose character is in it. The set is found
// under the flags of the leading groups but compiled with the pattern's
// global flags, so it can be narrower than what the pattern matches:
// (?a)(?u:\w) never matches "²", since the prefix tests \w as ASCII. To
// answer as Python does, the emitter puts the same test in front.

// iscasedFor is _get_iscased: the case test the prefix finders use (nil
// without IGNORECASE).
func iscasedFor(f flags) func(rune) bool {
	switch {
	case f&flagIgnoreCase == 0:
		return nil
	case f&flagUnicode != 0:
		return uniCased.contains
	}
	return asciiCased
}

// hasLiteralPrefix reports whether _get_literal_prefix finds a non-empty
// prefix; gotAll is its third result.
func hasLiteralPrefix(s *seq, f flags) (found, gotAll bool) {
	iscased := iscasedFor(f)
	for _, n := range s.items {
		switch n.op {
		case opLiteral:
			if iscased != nil && iscased(n.c) {
				return false, false
			}
			return true, false
		case opSubpattern:
			found, all := hasLiteralPrefix(n.alts[0], combineFlags(f, n.add, n.del))
			if found {
				return true, false
			}
			if !all {
				return false, false
			}
		default:
			return false, false
		}
	}
	return false, true
}

// charsetPrefix is _get_charset_prefix (nil when it returns None).
func charsetPrefix(s *seq, f flags) []setItem {
	for {
		if len(s.items) == 0 {
			return nil
		}
		n := s.items[0]
		if n.op != opSubpattern {
			break
		}
		s, f = n.alts[0], combineFlags(f, n.add, n.del)
	}
	iscased := iscasedFor(f)
	cased := func(c rune) bool { return iscased != nil && iscased(c) }
	switch n := s.items[0]; n.op {
	case opLiteral:
		if cased(n.c) {
			return nil
		}
		return []setItem{{kind: itemLiteral, lo: n.c}}
	case opBranch:
		var set []setItem
		for _, a := range n.alts {
			if len(a.items) == 0 || a.items[0].op != opLiteral || cased(a.items[0].c) {
				return nil
			}
			set = append(set, setItem{kind: itemLiteral, lo: a.items[0].c})
		}
		return set
	case opIn:
		if iscased != nil {
			for _, it := range n.set {
				switch {
				case it.kind == itemLiteral && iscased(it.lo):
					return nil
				case it.kind == itemRange && (it.hi > bmpMax || hasCased(it.lo, it.hi, f)):
					return nil
				}
			}
		}
		return n.set
	}
	return nil
}

// hasCased is any(map(iscased, range(lo, hi+1))) under IGNORECASE.
func hasCased(lo, hi rune, f flags) bool {
	cased := uniCased
	if f&flagUnicode == 0 {
		cased = asciiLetters
	}
	return len(intersect(runeSet{{lo, hi}}, cased)) > 0
}

// searchPrefilter is the set a match's first character must be in for
// re.search to try it, or nil when sre tries every position.
func (t *tree) searchPrefilter() runeSet {
	f := t.st.flags
	if t.top.getwidth(t.st.groupWidths)[0] == 0 {
		return nil
	}
	if found, _ := hasLiteralPrefix(t.top, f); found {
		return nil
	}
	set := charsetPrefix(t.top, f)
	if set == nil {
		return nil
	}
	// _compile_charset with the global flags, and no case folding: the
	// search loop tests the text character as it is.
	return classSet(set, f&^flagIgnoreCase)
}

package pyre

// sre decides where a search may start by a set of possible first
// characters that it computes from the start of the pattern with the
// pattern's global flags, even inside a group whose own flags say
// otherwise. So when a pattern starts with a class or category escape
// inside groups that change ASCII/UNICODE, a match must start at a
// character that both readings accept (measured: (?a:\W) never matches
// ², which ASCII \W holds and Unicode \W does not).
//
// The start looked at is the first item of the top-level sequence,
// through capturing and flag groups (not repeats, atomic groups or
// look-arounds), or an alternation of single characters there (Python
// reads one as a class). A class that is cased under IGNORECASE gives no
// such set.

// startFilter is the set a match must start in, or nil.
func (t *tree) startFilter() runeSet {
	items := firstChars(t.top)
	if items == nil {
		return nil
	}
	global := t.p.global &^ flagIgnoreCase
	var own, filter []runeSet
	differs := false
	for _, n := range items {
		on, ascii := ignoreCase(n.fl)
		var f runeSet
		switch n.ch.what {
		case cClass:
			if on && classCased(n.ch, ascii) {
				return nil
			}
			f = classSet(n.ch, global)
		case cLiteral: // an alternative of an alternation read as a class
			if on && (ascii && asciiCased(n.ch.c) || !ascii && uniCased().contains(n.ch.c)) {
				return nil
			}
			f = single(n.ch.c)
		default:
			return nil
		}
		s := charSet(n)
		own, filter = append(own, s), append(filter, f)
		differs = differs || n.fl&flagASCII != global&flagASCII
	}
	if !differs {
		return nil
	}
	o, f := union(own...), union(filter...)
	if len(o) == len(intersect(o, f)) && slicesEqual(o, intersect(o, f)) {
		return nil
	}
	return f
}

// classCased reports whether a class has a member sre counts as cased.
func classCased(ch *charItem, ascii bool) bool {
	for _, it := range ch.items {
		if it.cat == catNone && (it.hi > bmpTop || hasCased(runeSet{{it.lo, it.hi}}, ascii)) {
			return true
		}
	}
	return false
}

func slicesEqual(a, b runeSet) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// firstChars is the one-character items a match starts with, or nil.
func firstChars(n *node) []*node {
	for {
		switch n.kind {
		case kCat:
			if len(n.subs) == 0 {
				return nil
			}
			n = n.subs[0]
			continue
		case kGroup:
			n = n.subs[0]
			continue
		case kChar:
			if n.ch.what != cClass {
				return nil
			}
			return []*node{n}
		case kAlt:
			var out []*node
			for _, b := range n.subs {
				if b.kind != kCat || len(b.subs) != 1 || b.subs[0].kind != kChar || b.subs[0].ch.what > cLiteral && b.subs[0].ch.what != cClass {
					return nil
				}
				out = append(out, b.subs[0])
			}
			return out
		}
		return nil
	}
}

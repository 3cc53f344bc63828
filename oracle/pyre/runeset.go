package pyre

import (
	"slices"
	"unicode/utf8"
)

// maxRune is the largest code point a Python str holds.
const maxRune = utf8.MaxRune

// runeRange is an inclusive range of code points.
type runeRange struct{ lo, hi rune }

// runeSet is a set of code points: sorted, disjoint, non-adjacent ranges.
// Every character predicate of a pattern (a literal under IGNORECASE, a
// class, \w, .) is computed into one before it is emitted.
type runeSet []runeRange

// pairs reads a generated table of lo, hi pairs.
func pairs(t []rune) runeSet {
	s := make(runeSet, 0, len(t)/2)
	for i := 0; i+1 < len(t); i += 2 {
		s = append(s, runeRange{t[i], t[i+1]})
	}
	return s
}

func single(c rune) runeSet { return runeSet{{c, c}} }

func (s runeSet) contains(c rune) bool {
	_, found := slices.BinarySearchFunc(s, c, func(r runeRange, c rune) int {
		switch {
		case r.hi < c:
			return -1
		case r.lo > c:
			return 1
		}
		return 0
	})
	return found
}

// normalize sorts and merges overlapping or adjacent ranges.
func normalize(rs []runeRange) runeSet {
	slices.SortFunc(rs, func(a, b runeRange) int { return int(a.lo - b.lo) })
	out := rs[:0]
	for _, r := range rs {
		if n := len(out); n > 0 && r.lo <= out[n-1].hi+1 {
			if r.hi > out[n-1].hi {
				out[n-1].hi = r.hi
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

func union(sets ...runeSet) runeSet {
	var all []runeRange
	for _, s := range sets {
		all = append(all, s...)
	}
	return normalize(all)
}

// addRunes adds single code points to s.
func (s runeSet) addRunes(cs []rune) runeSet {
	all := slices.Clone([]runeRange(s))
	for _, c := range cs {
		all = append(all, runeRange{c, c})
	}
	return normalize(all)
}

// complement is every code point not in s.
func (s runeSet) complement() runeSet {
	var out runeSet
	next := rune(0)
	for _, r := range s {
		if r.lo > next {
			out = append(out, runeRange{next, r.lo - 1})
		}
		next = r.hi + 1
	}
	if next <= maxRune {
		out = append(out, runeRange{next, maxRune})
	}
	return out
}

func (s runeSet) minus(t runeSet) runeSet { return intersect(s, t.complement()) }

func intersect(a, b runeSet) runeSet {
	var out runeSet
	for i, j := 0, 0; i < len(a) && j < len(b); {
		lo, hi := max(a[i].lo, b[j].lo), min(a[i].hi, b[j].hi)
		if lo <= hi {
			out = append(out, runeRange{lo, hi})
		}
		if a[i].hi < b[j].hi {
			i++
		} else {
			j++
		}
	}
	return out
}

// each calls fn for every code point of s.
func (s runeSet) each(fn func(c rune)) {
	for _, r := range s {
		for c := r.lo; c <= r.hi; c++ {
			fn(c)
		}
	}
}

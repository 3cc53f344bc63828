package pyre

import "sync"

// What a one-character item accepts, as the set of code points, under
// the flags in force where it was written.
//
// Without IGNORECASE that is the plain reading of the item. With it, sre
// compares a folded text character against what the item folds to:
//   - a literal c that is not cased matches only itself; a cased one
//     matches every t with fold(t) == fold(c), or (Unicode) fold(t) one
//     of the extra equivalents of fold(c) (extraCase: ſ and s, ι and the
//     iota subscript, ...);
//   - a class with no cased member matches as without IGNORECASE;
//     otherwise t matches when fold(t) is in the class's folded image:
//     every member of the Basic Multilingual Plane folded (with its
//     extra equivalents), a category as itself, a member beyond the BMP
//     as written (a literal) or, for a range reaching past the BMP,
//     every x with x or upper(x) in the range. A member beyond the BMP
//     counts as cased.
//
// fold is lower() under Unicode and ASCII lowering under the a flag.
// TestCharsetsMatchPython checks all of it on every code point.

const bmpTop = 0xFFFF

func ignoreCase(f flags) (on, ascii bool) {
	return f&flagIgnoreCase != 0, f&flagASCII != 0
}

// charSet is what a kChar node accepts.
func charSet(n *node) runeSet {
	ch, f := n.ch, n.fl
	switch ch.what {
	case cAny:
		if f&flagDotAll != 0 {
			return everything
		}
		return newline.complement()
	case cLiteral:
		return literalSet(ch.c, f)
	case cNotLiteral:
		return literalSet(ch.c, f).complement()
	}
	return classSet(ch, f)
}

func literalSet(c rune, f flags) runeSet {
	on, ascii := ignoreCase(f)
	switch {
	case !on:
		return single(c)
	case ascii:
		if !asciiCased(c) {
			return single(c)
		}
		return foldPreimage(single(asciiLower(c)), true)
	case !uniCased().contains(c):
		return single(c)
	}
	l := lower(c)
	return folding(append([]rune{l}, extraCase()[l]...))
}

// folding is every t whose lower case is one of ks.
func folding(ks []rune) runeSet {
	var out []rune
	for _, k := range ks {
		if !lowerChanged().contains(k) {
			out = append(out, k)
		}
		out = append(out, lowerInverse()[k]...)
	}
	return runeSet(nil).addRunes(out)
}

// lowerInverse maps a lower case to the code points other than itself
// that have it.
var lowerInverse = sync.OnceValue(func() map[rune][]rune {
	m := map[rune][]rune{}
	for c, l := range lowerMap() {
		m[l] = append(m[l], c)
	}
	return m
})

// withExtras adds the extra case equivalents of every member of s.
func withExtras(s runeSet) runeSet {
	var add []rune
	for k, eq := range extraCase() {
		if s.contains(k) {
			add = append(add, eq...)
		}
	}
	if add == nil {
		return s
	}
	return s.addRunes(add)
}

var categorySets = sync.OnceValue(func() map[[2]uint8]runeSet {
	m := map[[2]uint8]runeSet{}
	for _, ascii := range []uint8{0, 1} {
		base := map[category]runeSet{catDigit: uniDigit(), catSpace: uniSpace(), catWord: uniWord()}
		if ascii == 1 {
			base = map[category]runeSet{catDigit: asciiDigit, catSpace: asciiSpace, catWord: asciiWord}
		}
		for c, s := range base {
			m[[2]uint8{ascii, uint8(c)}] = s
			m[[2]uint8{ascii, uint8(c) + 1}] = s.complement() // catNotX follows catX
		}
	}
	return m
})

func categorySet(c category, ascii bool) runeSet {
	a := uint8(0)
	if ascii {
		a = 1
	}
	return categorySets()[[2]uint8{a, uint8(c)}]
}

func classSet(ch *charItem, f flags) runeSet {
	on, ascii := ignoreCase(f)
	var plain []runeRange
	var cats []runeSet
	cased := false
	for _, it := range ch.items {
		if it.cat != catNone {
			cats = append(cats, categorySet(it.cat, ascii))
			continue
		}
		plain = append(plain, runeRange{it.lo, it.hi})
		if on && !cased {
			cased = it.hi > bmpTop || hasCased(runeSet{{it.lo, it.hi}}, ascii)
		}
	}
	var s runeSet
	if !cased {
		s = union(append(cats, normalize(plain))...)
	} else {
		s = foldPreimage(foldedImage(ch.items, cats, ascii), ascii)
	}
	if ch.neg {
		return s.complement()
	}
	return s
}

func hasCased(s runeSet, ascii bool) bool {
	if ascii {
		return len(intersect(s, asciiLetters)) > 0
	}
	return len(intersect(s, uniCased())) > 0
}

// foldedImage is the set a folded text character is looked up in.
func foldedImage(items []classItem, cats []runeSet, ascii bool) runeSet {
	var bmp []runeRange
	var beyond []runeSet
	for _, it := range items {
		switch {
		case it.cat != catNone:
		case it.hi <= bmpTop:
			bmp = append(bmp, runeRange{it.lo, it.hi})
		case !it.rng:
			beyond = append(beyond, single(it.lo))
		default:
			if it.lo <= bmpTop {
				bmp = append(bmp, runeRange{it.lo, bmpTop})
			}
			r := runeSet{{it.lo, it.hi}}
			beyond = append(beyond, r, upperPreimage(r))
		}
	}
	img := foldImage(normalize(bmp), ascii)
	if !ascii {
		img = withExtras(img)
	}
	return union(append(append(cats, img), beyond...)...)
}

// foldImage is {fold(c) : c in s}.
func foldImage(s runeSet, ascii bool) runeSet {
	changed, m := lowerChanged(), lower
	if ascii {
		changed, m = asciiUpper, asciiLower
	}
	var add []rune
	intersect(s, changed).each(func(c rune) { add = append(add, m(c)) })
	return s.minus(changed).addRunes(add)
}

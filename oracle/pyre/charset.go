package pyre

// What one character of a pattern accepts, as the set of code points for
// which sre's opcode succeeds. This follows re/_compiler.py (_compile's
// literal case and _optimize_charset) and the matching side of _sre
// (LITERAL_UNI_IGNORE folds the text character with unicode_tolower, a
// set compiled as IN_UNI_IGNORE folds it before the membership test,
// RANGE_UNI_IGNORE also tries the upper case of the folded character).

const bmpMax = 0xFFFF

func categorySet(c category, f flags) runeSet {
	word, digit, space := uniWord, uniDigit, uniSpace
	if f&flagUnicode == 0 {
		word, digit, space = asciiWord, asciiDigit, asciiSpace
	}
	switch c {
	case catDigit:
		return digit
	case catNotDigit:
		return digit.complement()
	case catSpace:
		return space
	case catNotSpace:
		return space.complement()
	case catWord:
		return word
	}
	return word.complement()
}

func ignoreCase(f flags) (on, ascii bool) {
	return f&flagIgnoreCase != 0, f&flagUnicode == 0
}

// literalSet is what LITERAL c (or NOT_LITERAL c) accepts under f.
func literalSet(c rune, not bool, f flags) runeSet {
	s := single(c)
	if on, ascii := ignoreCase(f); on {
		switch {
		case ascii && asciiCased(c):
			s = foldPreimage(single(asciiLower(c)), true)
		case !ascii && uniCased.contains(c):
			lo := lower(c)
			s = foldPreimage(runeSet(nil).addRunes(append([]rune{lo}, extraCase[lo]...)), false)
		}
	}
	if not {
		return s.complement()
	}
	return s
}

// anySet is what . accepts.
func anySet(f flags) runeSet {
	if f&flagDotAll != 0 {
		return everything
	}
	return newline.complement()
}

// classSet is what IN set accepts under f.
func classSet(set []setItem, f flags) runeSet {
	negate := len(set) > 0 && set[0].kind == itemNegate
	if negate {
		set = set[1:]
	}
	var s runeSet
	if on, ascii := ignoreCase(f); !on {
		s = plainMembers(set, f)
	} else if folded, cased := foldedMembers(set, f, ascii); cased {
		s = foldPreimage(folded, ascii)
	} else {
		// No cased member: _compile emits a plain IN.
		s = plainMembers(set, f)
	}
	if negate {
		return s.complement()
	}
	return s
}

func plainMembers(set []setItem, f flags) runeSet {
	var parts []runeSet
	for _, it := range set {
		switch it.kind {
		case itemLiteral:
			parts = append(parts, single(it.lo))
		case itemRange:
			parts = append(parts, runeSet{{it.lo, it.hi}})
		case itemCategory:
			parts = append(parts, categorySet(it.cat, f))
		}
	}
	return union(parts...)
}

// foldedMembers is _optimize_charset with a fixup, as the set of folded
// characters IN_(UNI_)IGNORE accepts: the charmap (folded BMP members and,
// for Unicode, their extra cases) and the tail it keeps as is
// (categories, non-BMP literals unfolded, non-BMP ranges as
// RANGE_UNI_IGNORE, which also accepts a character whose upper case is
// in the range). cased is hascased: whether the compiler folds at all.
func foldedMembers(set []setItem, f flags, ascii bool) (s runeSet, cased bool) {
	fold, changed, casedSet := lower, lowerChanged, uniCased
	if ascii {
		fold, changed, casedSet = asciiLower, asciiUpper, asciiLetters
	}
	var charmap, tail []runeSet
	addFolded := func(r runeSet) {
		var moved []rune
		intersect(r, changed).each(func(c rune) { moved = append(moved, fold(c)) })
		folded := r.minus(changed).addRunes(moved)
		charmap = append(charmap, folded)
		if !ascii {
			for k, extra := range extraCase {
				if folded.contains(k) {
					charmap = append(charmap, runeSet(nil).addRunes(extra))
				}
			}
		}
	}
	for _, it := range set {
		switch it.kind {
		case itemLiteral:
			if fold(it.lo) > bmpMax {
				cased = true
				tail = append(tail, single(it.lo))
				continue
			}
			addFolded(single(it.lo))
			cased = cased || casedSet.contains(it.lo)
		case itemRange:
			if it.lo <= bmpMax {
				addFolded(runeSet{{it.lo, min(it.hi, bmpMax)}})
			}
			r := runeSet{{it.lo, it.hi}}
			if it.hi > bmpMax {
				cased = true
				tail = append(tail, r, upperPreimage(r))
				continue
			}
			cased = cased || len(intersect(r, casedSet)) > 0
		case itemCategory:
			tail = append(tail, categorySet(it.cat, f))
		}
	}
	return union(append(charmap, tail...)...), cased
}

package pyre

//go:generate python3 gen/gentables.py

import "sync"

// The character data of CPython 3.11 (Unicode 14.0), from tables_gen.go.
// Nothing here consults Go's unicode package or regexp2's tables: both
// follow other Unicode versions and other definitions of \w, \s and case.
// They are built on first use (sync.OnceValue), not at package
// initialisation: every solopi command would otherwise pay for tables
// only a requirement's matches oracle reads (1.4 ms a start).
var (
	uniWord      = sync.OnceValue(func() runeSet { return pairs(wordRanges) })
	uniDigit     = sync.OnceValue(func() runeSet { return pairs(digitRanges) })
	uniSpace     = sync.OnceValue(func() runeSet { return pairs(spaceRanges) })
	uniCased     = sync.OnceValue(func() runeSet { return pairs(casedRanges) })
	printable    = sync.OnceValue(func() runeSet { return pairs(printableRanges) })
	alpha        = sync.OnceValue(func() runeSet { return pairs(alphaRanges) })
	identStart   = sync.OnceValue(func() runeSet { return pairs(identStartRanges) })
	identCont    = sync.OnceValue(func() runeSet { return pairs(identContinueRanges) })
	ideographs   = sync.OnceValue(func() runeSet { return pairs(unifiedIdeographs) })
	lowerMap     = sync.OnceValue(func() map[rune]rune { return caseMap(lowerRuns) })
	upperMap     = sync.OnceValue(func() map[rune]rune { return caseMap(upperRuns) })
	lowerChanged = sync.OnceValue(func() runeSet { return keys(lowerMap()) })
	upperChanged = sync.OnceValue(func() runeSet { return keys(upperMap()) })
	extraCase    = sync.OnceValue(func() map[rune][]rune { return extraCases2map(extraCases) })
)

var (
	// sre's ASCII categories (the a flag): Py_ISALNUM, Py_ISDIGIT and
	// Py_ISSPACE of the C locale.
	asciiWord    = runeSet{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}
	asciiDigit   = runeSet{{'0', '9'}}
	asciiSpace   = runeSet{{'\t', '\r'}, {' ', ' '}}
	asciiUpper   = runeSet{{'A', 'Z'}}
	asciiLetters = runeSet{{'A', 'Z'}, {'a', 'z'}}
	newline      = single('\n')
	everything   = runeSet{{0, maxRune}}
)

// caseMap expands lo, hi, stride, delta runs into a map of the code points
// whose mapping is not themselves.
func caseMap(runs []rune) map[rune]rune {
	m := map[rune]rune{}
	for i := 0; i+3 < len(runs); i += 4 {
		for c := runs[i]; c <= runs[i+1]; c += runs[i+2] {
			m[c] = c + runs[i+3]
		}
	}
	return m
}

func keys(m map[rune]rune) runeSet {
	cs := make([]rune, 0, len(m))
	for c := range m {
		cs = append(cs, c)
	}
	return runeSet(nil).addRunes(cs)
}

func extraCases2map(t []rune) map[rune][]rune {
	m := map[rune][]rune{}
	for i := 0; i+1 < len(t); {
		n := int(t[i+1])
		m[t[i]] = t[i+2 : i+2+n]
		i += 2 + n
	}
	return m
}

// lower is _sre.unicode_tolower; upper is _PyUnicode_ToUppercase.
func lower(c rune) rune {
	if l, ok := lowerMap()[c]; ok {
		return l
	}
	return c
}

func upper(c rune) rune {
	if u, ok := upperMap()[c]; ok {
		return u
	}
	return c
}

func asciiLower(c rune) rune {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func asciiCased(c rune) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }

// foldPreimage is every c whose case fold (lower, or ASCII lower) is in
// k: what sre's *_IGNORE opcodes accept, since they fold the text
// character before they compare it.
func foldPreimage(k runeSet, ascii bool) runeSet {
	if ascii {
		return preimage(k, asciiUpper, asciiLower)
	}
	return preimage(k, lowerChanged(), lower)
}

// upperPreimage is every c with upper(c) in k.
func upperPreimage(k runeSet) runeSet { return preimage(k, upperChanged(), upper) }

// preimage is every c with m(c) in k, where changed holds the code points
// m does not map to themselves.
func preimage(k, changed runeSet, m func(rune) rune) runeSet {
	var add []rune
	changed.each(func(c rune) {
		if k.contains(m(c)) {
			add = append(add, c)
		}
	})
	return k.minus(changed).addRunes(add)
}

// isIdentifier is str.isidentifier().
func isIdentifier(s string) bool {
	first := true
	for _, c := range s {
		if first && !identStart().contains(c) || !first && !identCont().contains(c) {
			return false
		}
		first = false
	}
	return !first
}

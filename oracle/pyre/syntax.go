package pyre

// The syntax tree of a pattern. The parser resolves everything a later
// pass would otherwise have to re-derive from the source: every node
// carries the flags in force where it was written, every reference the
// number of the group it reads, every quantifier its bounds.

// flags is a set of inline flags (the letters of (?aimsux) and t).
type flags uint16

const (
	flagIgnoreCase flags = 1 << iota // i
	flagMultiline                    // m
	flagDotAll                       // s
	flagVerbose                      // x
	flagASCII                        // a
	flagUnicode                      // u
	flagTemplate                     // t (accepted at the start only; any repeat is then refused)

	typeFlags = flagASCII | flagUnicode
)

// flagOf maps an inline flag letter to its bit; L (locale) is a letter
// Python knows but refuses for str patterns, so it maps to 0 with ok.
func flagOf(c rune) (f flags, ok bool) {
	switch c {
	case 'i':
		return flagIgnoreCase, true
	case 'm':
		return flagMultiline, true
	case 's':
		return flagDotAll, true
	case 'x':
		return flagVerbose, true
	case 'a':
		return flagASCII, true
	case 'u':
		return flagUnicode, true
	case 't':
		return flagTemplate, true
	case 'L':
		return 0, true
	}
	return 0, false
}

// scoped is f inside a (?on-off:...) group: a type flag turned on
// replaces the one in force.
func scoped(f, on, off flags) flags {
	if on&typeFlags != 0 {
		f &^= typeFlags
	}
	return (f | on) &^ off
}

type kind uint8

const (
	kChar   kind = iota // one character: a literal, ., a class or a category
	kAnchor             // ^ $ \A \Z \b \B
	kCat                // subs in sequence
	kAlt                // subs as alternatives
	kGroup              // a capturing group (num > 0) or a plain or flag-scoped one; subs[0]
	kRepeat             // subs[0] from min to max times (max == unbounded: no limit)
	kLook               // look-ahead or look-behind (behind), negative (neg); subs[0]
	kAtomic             // (?>...); subs[0]
	kRef                // a backreference to group num
	kCond               // (?(num)yes|no): subs[0], subs[1] (nil: no "no" branch)
)

type anchor uint8

const (
	aStart     anchor = iota // ^
	aEnd                     // $
	aStartText               // \A
	aEndText                 // \Z
	aWord                    // \b
	aNotWord                 // \B
)

type repeatMode uint8

const (
	greedy repeatMode = iota
	lazy
	possessive
)

// unbounded is the max of *, + and {m,}; Python refuses any explicit
// count this large.
const unbounded = 1<<32 - 1

// node is one item of the tree.
type node struct {
	kind kind
	fl   flags // the flags in force at this item
	pos  int   // where it starts in the pattern
	subs []*node

	ch       *charItem  // kChar
	anchor   anchor     // kAnchor
	num      int        // kGroup (0: not capturing), kRef, kCond
	on, off  flags      // kGroup: a flag scope
	min, max uint32     // kRepeat
	mode     repeatMode // kRepeat
	behind   bool       // kLook
	neg      bool       // kLook
}

// charItem is what one-character node tests.
type charItem struct {
	what  charKind
	c     rune        // cLiteral, cNotLiteral
	neg   bool        // cClass: [^...]
	items []classItem // cClass
}

type charKind uint8

const (
	cLiteral    charKind = iota // c
	cNotLiteral                 // [^c]
	cAny                        // .
	cClass                      // [...] or a category escape (a class of one category)
)

// classItem is one member of a class: lo-hi (lo == hi: one character) or
// a category.
type classItem struct {
	lo, hi rune
	rng    bool     // written as a range (lo-hi), even of one character
	cat    category // catNone for a character or range
}

type category uint8

const (
	catNone category = iota
	catDigit
	catNotDigit
	catSpace
	catNotSpace
	catWord
	catNotWord
)

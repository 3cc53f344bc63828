package pyre

import (
	"math"
	"slices"
)

// The parse tree mirrors sre_parse's (opcode, argument) lists, so that
// the compiler's decisions (which flags apply, which width a look-behind
// has, how a set folds case) can be taken exactly as Python takes them.

type opcode uint8

const (
	opLiteral        opcode = iota // c
	opNotLiteral                   // c
	opIn                           // set
	opAny                          // .
	opAt                           // at
	opBranch                       // alts
	opSubpattern                   // group (0: none), add, del, alts[0]
	opAtomic                       // alts[0]
	opRepeat                       // min, max, kind, alts[0]
	opAssert                       // behind, negate, alts[0]
	opGroupRef                     // group
	opGroupRefExists               // group, alts[0] yes, alts[1] no (nil)
)

type atCode uint8

const (
	atBeginning       atCode = iota // ^
	atBeginningString               // \A
	atBoundary                      // \b
	atNonBoundary                   // \B
	atEnd                           // $
	atEndString                     // \Z
)

type repeatKind uint8

const (
	greedy repeatKind = iota
	lazy
	possessive
)

// maxRepeat is sre's MAXREPEAT (an unbounded repeat's maximum).
const maxRepeat = math.MaxUint32

type node struct {
	op       opcode
	c        rune
	set      []setItem
	at       atCode
	group    int
	add, del flags
	min, max uint32
	kind     repeatKind
	behind   bool
	negate   bool
	alts     []*seq
}

// seq is a SubPattern: a sequence of nodes, with its width cached once
// computed (as sre_parse caches it).
type seq struct {
	items []*node
	width *[2]uint64
}

type itemKind uint8

const (
	itemLiteral itemKind = iota
	itemRange
	itemCategory
	itemNegate
)

type category uint8

const (
	catDigit category = iota
	catNotDigit
	catSpace
	catNotSpace
	catWord
	catNotWord
)

// setItem is one member of a character set: a literal, a range, a
// category (\d inside [...]), or NEGATE (always first).
type setItem struct {
	kind   itemKind
	lo, hi rune
	cat    category
}

// equal is Python's == on two (op, av) items, as _parse_sub uses it to
// find a common prefix of alternatives: a tuple holding a SubPattern
// compares by identity, so only leaves can be equal.
func (n *node) equal(m *node) bool {
	if n == m {
		return true
	}
	if n.op != m.op {
		return false
	}
	switch n.op {
	case opLiteral, opNotLiteral:
		return n.c == m.c
	case opIn:
		return slices.Equal(n.set, m.set)
	case opAny:
		return true
	case opAt:
		return n.at == m.at
	case opGroupRef:
		return n.group == m.group
	}
	return false
}

// maxWidth is sre_parse's MAXWIDTH (1 << 64); widths saturate just below
// it, which no comparison the compiler makes can tell apart.
const maxWidth = math.MaxUint64

func addW(a, b uint64) uint64 {
	if a > maxWidth-b {
		return maxWidth
	}
	return a + b
}

func mulW(a uint64, b uint32) uint64 {
	if b != 0 && a > maxWidth/uint64(b) {
		return maxWidth
	}
	return a * uint64(b)
}

// getwidth is SubPattern.getwidth: the (min, max) length of what s matches.
func (s *seq) getwidth(groupWidths [][2]uint64) [2]uint64 {
	if s.width != nil {
		return *s.width
	}
	var lo, hi uint64
	for _, n := range s.items {
		switch n.op {
		case opBranch:
			i, j := uint64(maxWidth), uint64(0)
			for _, a := range n.alts {
				w := a.getwidth(groupWidths)
				i, j = min(i, w[0]), max(j, w[1])
			}
			lo, hi = addW(lo, i), addW(hi, j)
		case opAtomic, opSubpattern:
			w := n.alts[0].getwidth(groupWidths)
			lo, hi = addW(lo, w[0]), addW(hi, w[1])
		case opRepeat:
			w := n.alts[0].getwidth(groupWidths)
			lo = addW(lo, mulW(w[0], n.min))
			if n.max == maxRepeat && w[1] != 0 {
				hi = maxWidth
			} else {
				hi = addW(hi, mulW(w[1], n.max))
			}
		case opAny, opIn, opLiteral, opNotLiteral:
			lo, hi = addW(lo, 1), addW(hi, 1)
		case opGroupRef:
			w := groupWidths[n.group]
			lo, hi = addW(lo, w[0]), addW(hi, w[1])
		case opGroupRefExists:
			w := n.alts[0].getwidth(groupWidths)
			i, j := w[0], w[1]
			if n.alts[1] != nil {
				v := n.alts[1].getwidth(groupWidths)
				i, j = min(i, v[0]), max(j, v[1])
			} else {
				i = 0
			}
			lo, hi = addW(lo, i), addW(hi, j)
		}
	}
	s.width = &[2]uint64{lo, hi}
	return *s.width
}

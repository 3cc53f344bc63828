package pyre

import (
	"testing"
	"unicode"
)

// A case-insensitive backreference is emitted as regexp2's (?i:\k<N>),
// which compares unicode.ToLower of both sides; sre compares
// unicode_tolower. That is exact only while Go's lower case is Python
// 3.11's on every code point.
func TestBackrefFoldIsPythons(t *testing.T) {
	t.Parallel()
	for c := rune(0); c <= maxRune; c++ {
		if unicode.ToLower(c) != lower(c) {
			t.Fatalf("unicode.ToLower(%U) = %U, Python's lower = %U", c, unicode.ToLower(c), lower(c))
		}
	}
}

// The generated tables read back into sets that hold what the issue's
// examples need.
func TestTables(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		set  runeSet
		r    rune
		want bool
	}{
		{uniWord(), '²', true}, {uniWord(), '½', true}, {uniWord(), 'Ⅻ', true}, {uniWord(), '\u0301', false},
		{uniDigit(), '٣', true}, {uniDigit(), '²', false}, {uniSpace(), '\x1c', true}, {uniSpace(), '\x85', true},
		{uniSpace(), '\u200b', false}, {uniCased(), 'ß', true}, {printable(), '\x85', false}, {identStart(), '_', true},
		{identCont(), '١', true}, {identStart(), '١', false}, {alpha(), 'ª', true},
	} {
		if got := c.set.contains(c.r); got != c.want {
			t.Errorf("%U: %v, want %v", c.r, got, c.want)
		}
	}
	if lower('İ') != 'i' || upper('ß') != 'S' || lower('\u212a') != 'k' || len(extraCase()['s']) != 1 {
		t.Errorf("case maps: lower(İ)=%U upper(ß)=%U lower(K)=%U extra(s)=%v", lower('İ'), upper('ß'), lower('\u212a'), extraCase()['s'])
	}
	if r, ok := lookupName("EM DASH"); !ok || r != '—' {
		t.Errorf("EM DASH = %U, %v", r, ok)
	}
	if r, ok := lookupName("HANGUL SYLLABLE HAN"); !ok || r != '한' {
		t.Errorf("HANGUL SYLLABLE HAN = %U, %v", r, ok)
	}
}

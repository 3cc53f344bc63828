package protocol

import (
	"regexp"
	"strings"
	"testing"
)

// The functions must agree with the regular expressions they replace.
func TestIDChecksAgreeWithRegexps(t *testing.T) {
	t.Parallel()
	id := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	chars := regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)
	hex := regexp.MustCompile(`^replay-[0-9a-f]{64}$`)
	hexAny := regexp.MustCompile(`^[0-9a-fA-F]{64}$`)
	inputs := []string{"", "a", "-a", ".x", "a-b_c.d", "é", "a b", "a/b", strings.Repeat("a", 128), strings.Repeat("a", 129),
		"replay-" + strings.Repeat("0f", 32), "replay-" + strings.Repeat("0F", 32), "replay-" + strings.Repeat("0", 63),
		strings.Repeat("aB", 32), strings.Repeat("g", 64)}
	for _, s := range inputs {
		if ValidID(s, 128) != id.MatchString(s) {
			t.Errorf("ValidID(%q) disagrees", s)
		}
		if ValidIDChars(s, 128) != chars.MatchString(s) {
			t.Errorf("ValidIDChars(%q) disagrees", s)
		}
		if ValidPrefixedHex(s, "replay-", 64) != hex.MatchString(s) {
			t.Errorf("ValidPrefixedHex(%q) disagrees", s)
		}
		if ValidHex(s, 64, true) != hexAny.MatchString(s) {
			t.Errorf("ValidHex(%q) disagrees", s)
		}
	}
}

func FuzzValidID(f *testing.F) {
	id := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,15}$`)
	for _, s := range []string{"a", "-", "a.b", "\xff", "0123456789abcdefg"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if ValidID(s, 16) != id.MatchString(s) {
			t.Fatalf("ValidID(%q) disagrees with the regexp", s)
		}
	})
}

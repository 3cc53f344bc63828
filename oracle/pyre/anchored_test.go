package pyre

import "testing"

// Anchored reads the parsed pattern: both ends constrained by ^ or \A and
// $ or \Z outside MULTILINE, through groups and every alternative.
func TestAnchored(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		`^a$`: true, `^a|^b$`: false, `(?:^a)$`: true, `(^a)(b$)`: true, `(?>^a)$`: true, `(?m)^a$`: false,
		`\Aa\Z`: true, `(?m:^)a$`: false, `^(?:a|b)$`: true, `(?:^a|^b)(?:c$|d$)`: true, `^`: false, `^$`: true,
		`(?i)^a$`: true, `(?x) ^ a $ `: true, `^a$|b`: false, `(?:)^a$(?#c)`: true, `a`: false, `^a`: false,
		`(`: false, `^a$\`: false,
	} {
		if got := Anchored(p); got != want {
			t.Errorf("Anchored(%q) = %v, want %v", p, got, want)
		}
	}
}

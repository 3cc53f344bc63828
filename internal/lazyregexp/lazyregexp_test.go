package lazyregexp

import "testing"

func TestCompilesOnFirstUse(t *testing.T) {
	t.Parallel()
	r := New(`^(\d+)-(\w+)$`)
	if r.re != nil {
		t.Fatal("compiled before first use")
	}
	if !r.MatchString("12-ab") || r.MatchString("x") {
		t.Fatal("MatchString")
	}
	if m := r.FindStringSubmatch("7-z"); len(m) != 3 || m[1] != "7" || m[2] != "z" {
		t.Fatalf("FindStringSubmatch %v", m)
	}
	if got := New(`[^a-z]+`).ReplaceAllString("a1b22c", "-"); got != "a-b-c" {
		t.Fatalf("ReplaceAllString %q", got)
	}
}

func TestBadPatternPanicsOnUse(t *testing.T) {
	t.Parallel()
	r := New(`(`)
	defer func() {
		if recover() == nil {
			t.Fatal("a bad pattern must panic like regexp.MustCompile")
		}
	}()
	r.MatchString("x")
}

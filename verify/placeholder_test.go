package verify

import (
	"regexp"
	"strings"
	"testing"
)

// The hand-written scanner must find exactly what the placeholder regular
// expression finds.
var (
	placeholderRE = regexp.MustCompile(`\$\{([A-Za-z0-9][A-Za-z0-9._-]{0,127})\}`)
	wholeRE       = regexp.MustCompile(`^` + placeholderRE.String() + `$`)
)

func checkPlaceholders(t *testing.T, s string) {
	t.Helper()
	want := placeholderRE.ReplaceAllStringFunc(s, func(m string) string { return "<" + m[2:len(m)-1] + ">" })
	got := replacePlaceholders(s, func(name, text string) string { return "<" + name + ">" })
	if got != want {
		t.Fatalf("replacePlaceholders(%q) = %q, regexp gives %q", s, got, want)
	}
	name, ok := wholePlaceholder(s)
	whole := wholeRE.FindStringSubmatch(s)
	if ok != (whole != nil) || ok && name != whole[1] {
		t.Fatalf("wholePlaceholder(%q) = %q, %v", s, name, ok)
	}
}

func TestPlaceholderScannerAgreesWithRegexp(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "${a}", "x${a}y${b.c-d_e}z", "${}", "${-a}", "${a", "$${a}}", "${a}${b}",
		"${" + strings.Repeat("a", 128) + "}", "${" + strings.Repeat("a", 129) + "}", "${a b}", "${é}", "${${a}}"} {
		checkPlaceholders(t, s)
	}
}

func FuzzPlaceholderScanner(f *testing.F) {
	for _, s := range []string{"${a}", "x${a}y", "${${a}}", "${-}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// Past twice the longest name nothing new can happen, and every
		// input that finds new code is minimized: long ones would keep the
		// fuzzer minimizing instead of fuzzing.
		if len(s) > 300 {
			return
		}
		checkPlaceholders(t, s)
	})
}

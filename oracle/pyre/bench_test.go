package pyre

import (
	"testing"
	"time"
)

// benchPatterns are the shapes verdicts use: plain literals, Unicode
// classes (\w and \b spell out hundreds of ranges), case-insensitive
// text and a pattern with groups and quantifiers.
var benchPatterns = []struct{ name, pattern string }{
	{"literal", `hello world`},
	{"word", `^\w+$`},
	{"boundary", `\bfoo\b`},
	{"ignorecase", `(?i)error: [a-z]+ \d{2,4}`},
	{"groups", `^(?P<k>[A-Za-z_][\w.-]*)=(?:"([^"]*)"|(\S+))$`},
}

func BenchmarkCompile(b *testing.B) {
	for _, p := range benchPatterns {
		b.Run(p.name, func(b *testing.B) {
			for range b.N {
				if _, err := Compile(p.pattern, time.Second); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCompileVectors compiles every pattern of the mixed suite, a
// spread of every construct (per op: one pattern).
func BenchmarkCompileVectors(b *testing.B) {
	v, err := loadVectors()
	if err != nil {
		b.Fatal(err)
	}
	ps := v.Suites[2].Vectors
	b.ResetTimer()
	for i := range b.N {
		Compile(ps[i%len(ps)].Pattern, time.Second)
	}
}

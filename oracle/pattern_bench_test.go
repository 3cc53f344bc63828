package oracle

import "testing"

// benchPatterns are matches oracles of the kinds plans carry.
var benchPatterns = []string{
	`^\d+$`, `(?i)^hello,?\s+world!?$`, `\bCount\w*`, `^[^\W\d_]+$`,
	`^(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})$`, `^\S+@\S+\.\w+$`, `(?<=Total: )\d+(?:\.\d\d)?`,
}

var benchTexts = []string{"1234567", "Hello,   World!", "Counting 12 items", "Überprüfung", "2024-01-31", "user@example.com", "Total: 42.50"}

func BenchmarkCompileSearch(b *testing.B) {
	for b.Loop() {
		for i, src := range benchPatterns {
			p, err := CompilePattern(src)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := p.Search(benchTexts[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkSearch(b *testing.B) {
	ps := make([]*pattern, len(benchPatterns))
	for i, src := range benchPatterns {
		p, err := CompilePattern(src)
		if err != nil {
			b.Fatal(err)
		}
		ps[i] = p
	}
	for b.Loop() {
		for i, p := range ps {
			if _, err := p.Search(benchTexts[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
}

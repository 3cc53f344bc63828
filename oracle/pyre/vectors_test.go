package pyre

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// vectors is testdata/vectors.json.gz, what CPython 3.11 answered
// (generated once by testdata/gen_vectors.py).
type vectors struct {
	Python   string    `json:"python"`
	Suites   []suite   `json:"suites"`
	Charsets []charset `json:"charsets"`
}

// charset is a pattern that matches one character and every code point
// re.fullmatch accepts for it.
type charset struct {
	Pattern string    `json:"p"`
	Ranges  [][2]rune `json:"ranges"`
}

// suite is a list of patterns, each searched in the same texts.
type suite struct {
	Name    string   `json:"name"`
	Texts   []string `json:"texts"`
	Vectors []vector `json:"vectors"`
}

// vector is one pattern: Python's exception class and message, or the
// span of re.search on every text (nil: no match).
type vector struct {
	Pattern string    `json:"p"`
	Error   string    `json:"error"`
	Message string    `json:"message"`
	Spans   []*[2]int `json:"spans"`
}

var loadVectors = sync.OnceValues(func() (*vectors, error) { return readVectors("testdata/vectors.json.gz") })

// syntax_vectors.json.gz is random token soup (testdata/gen_syntax_vectors.py):
// mostly refused patterns, for which error Python reports first.
var loadSyntaxVectors = sync.OnceValues(func() (*vectors, error) { return readVectors("testdata/syntax_vectors.json.gz") })

func readVectors(path string) (*vectors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var v vectors
	if err := json.NewDecoder(zr).Decode(&v); err != nil {
		return nil, err
	}
	return &v, nil
}

// vectorTimeout bounds one search of a vector. Every vector answers in
// well under a millisecond on an idle machine (the texts are short); the
// bound is only there so that a hang fails the test instead of stalling
// it, and is far above what CPU contention can stretch a search to, so a
// timeout here is a real disagreement (Python answered) and never load.
const vectorTimeout = 2 * time.Minute

// checkVector compares one pattern with Python's answers; it returns a
// description of every disagreement. A pattern Python accepts and this
// package refuses as unsupported is counted in refused, when given.
func checkVector(v *suite, i int, refused *atomic.Int64) []string {
	vec := v.Vectors[i]
	re, err := Compile(vec.Pattern, vectorTimeout)
	if vec.Error != "" {
		var e *Error
		switch {
		case err == nil:
			return []string{fmt.Sprintf("%q: accepted; Python: %s: %s", vec.Pattern, vec.Error, vec.Message)}
		case !errors.As(err, &e):
			return []string{fmt.Sprintf("%q: error %T %v", vec.Pattern, err, err)}
		case e.Kind == kindUnsupported && vec.Error == "RecursionError":
			return nil
		case e.Kind != vec.Error || e.Error() != vec.Message:
			return []string{fmt.Sprintf("%q: %s: %s; Python: %s: %s", vec.Pattern, e.Kind, e.Error(), vec.Error, vec.Message)}
		}
		return nil
	}
	if err != nil {
		if refused != nil && errors.Is(err, ErrUnsupported) {
			refused.Add(1)
		}
		var e *Error
		if errors.As(err, &e) && (e.Msg == msgASCIIFoldBackref || e.Msg == msgStaleGroup) {
			return nil // documented: Python accepts, pyre refuses
		}
		return []string{fmt.Sprintf("%q: refused (%v); Python accepts", vec.Pattern, err)}
	}
	var out []string
	for j, text := range v.Texts {
		want := [2]int{-1, -1}
		if vec.Spans[j] != nil {
			want = *vec.Spans[j]
		}
		got := [2]int{-1, -1}
		m, err := re.prog.FindStringMatch(text)
		if err != nil {
			out = append(out, fmt.Sprintf("%q on %q: %v", vec.Pattern, text, err))
			continue
		}
		if m != nil {
			got = [2]int{m.Index, m.Index + m.Length}
		}
		if got != want {
			out = append(out, fmt.Sprintf("%q on %q: span %v, Python %v", vec.Pattern, text, got, want))
		}
	}
	return out
}

func TestVectorsMatchPython(t *testing.T) {
	t.Parallel()
	v, err := loadVectors()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v.Python, "3.11.") || len(v.Suites) != 3 || len(v.Suites[0].Vectors) < 3000 || len(v.Suites[0].Texts) < 80 {
		t.Fatalf("vectors of Python %s: %d suites", v.Python, len(v.Suites))
	}
	// The documented exceptions must not grow: counted over every suite
	// once the shards below are done (a parent's cleanup runs after its
	// parallel subtests).
	var refused atomic.Int64
	accepted := 0
	for _, su := range v.Suites {
		for _, vec := range su.Vectors {
			if vec.Error == "" {
				accepted++
			}
		}
	}
	t.Cleanup(func() {
		t.Logf("%d of %d patterns Python accepts are refused as unsupported", refused.Load(), accepted)
		if n := refused.Load(); n > maxUnsupported {
			t.Errorf("%d patterns Python accepts are refused as unsupported (at most %d)", n, maxUnsupported)
		}
	})
	const shards = 4
	for _, su := range v.Suites {
		for s := range shards {
			t.Run(fmt.Sprintf("%s/%d", su.Name, s), func(t *testing.T) {
				t.Parallel()
				bad := 0
				for i := s; i < len(su.Vectors); i += shards {
					for _, msg := range checkVector(&su, i, &refused) {
						if bad++; bad <= 30 {
							t.Error(clip(msg))
						}
					}
				}
				if bad > 30 {
					t.Errorf("... %d disagreements in all", bad)
				}
			})
		}
	}
}

func TestSyntaxVectorsMatchPython(t *testing.T) {
	t.Parallel()
	v, err := loadSyntaxVectors()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v.Python, "3.11.") || len(v.Suites) != 2 || len(v.Suites[0].Vectors) < 8000 {
		t.Fatalf("vectors of Python %s: %d suites", v.Python, len(v.Suites))
	}
	for _, su := range v.Suites {
		t.Run(su.Name, func(t *testing.T) {
			t.Parallel()
			bad := 0
			for i := range su.Vectors {
				for _, msg := range checkVector(&su, i, nil) {
					if bad++; bad <= 30 {
						t.Error(clip(msg))
					}
				}
			}
			if bad > 30 {
				t.Errorf("... %d disagreements in all", bad)
			}
		})
	}
}

func clip(s string) string {
	if r := []rune(s); len(r) > 300 {
		return string(r[:300]) + "…"
	}
	return s
}

// Every code point, for the character predicates: class members, case
// folding under IGNORECASE with and without ASCII.
func TestCharsetsMatchPython(t *testing.T) {
	t.Parallel()
	v, err := loadVectors()
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Charsets) < 50 {
		t.Fatalf("%d charsets", len(v.Charsets))
	}
	for _, c := range v.Charsets {
		tr, err := parseTree(c.Pattern)
		if err != nil || tr.top.kind != kCat || len(tr.top.subs) != 1 || tr.top.subs[0].kind != kChar {
			t.Errorf("%q: %v", c.Pattern, err)
			continue
		}
		got, ok := charSet(tr.top.subs[0]), true
		var want runeSet
		for _, r := range c.Ranges {
			want = append(want, runeRange{r[0], r[1]})
		}
		if !ok || !slices.Equal(got, want) {
			t.Errorf("%q: %d ranges, Python %d; differ at %v", c.Pattern, len(got), len(want), firstDifference(got, want))
		}
	}
}

func firstDifference(a, b runeSet) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("%X-%X vs %X-%X", a[i].lo, a[i].hi, b[i].lo, b[i].hi)
		}
	}
	return "the end"
}

// maxUnsupported bounds the patterns Python accepts that this package
// refuses as unsupported (a backreference under (?ai), a group a
// possessive repeat can leave stale): the documented exceptions, which
// must not grow.
const maxUnsupported = 37

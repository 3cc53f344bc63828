package tooltest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// recorder stands in for a test and records how Missing ended it.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }
func (r *recorder) Skipf(format string, args ...any)  { r.skip = fmt.Sprintf(format, args...) }

// Under CI=true a missing tool fails the test; elsewhere it skips it.
func TestMissingFailsOnlyUnderCI(t *testing.T) {
	for _, c := range []struct {
		ci          string
		fatal, skip bool
	}{{"true", true, false}, {"", false, true}, {"false", false, true}} {
		t.Setenv("CI", c.ci)
		r := &recorder{TB: t}
		Missing(r, "chromium is not installed")
		if (r.fatal != "") != c.fatal || (r.skip != "") != c.skip {
			t.Errorf("CI=%q: fatal %q, skip %q", c.ci, r.fatal, r.skip)
		}
		if c.fatal && !strings.Contains(r.fatal, "cannot be skipped") {
			t.Errorf("CI=%q: the failure does not say why: %q", c.ci, r.fatal)
		}
	}
}

// No test skips on its own: a bare t.Skip would pass in CI while the work
// it stands for went unchecked. Every skip goes through Missing.
func TestNoDirectSkips(t *testing.T) {
	t.Parallel()
	skip := regexp.MustCompile(`\.(Skip|Skipf|SkipNow)\(`)
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || filepath.Dir(path) == filepath.Join(root, "internal", "tooltest") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if skip.MatchString(line) {
				t.Errorf("%s:%d: skips directly; call tooltest.Missing so CI=true fails instead", path, i+1)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

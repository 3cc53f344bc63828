package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/schemas/schematest"
)

// TestReportCommand: `solopi report DIR` on an older perf-stop directory
// that holds only CSV files analyses it first, then writes report.html;
// bad directories are usage errors with a stable errorCode.
func TestReportCommand(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "perf")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	csvs, _ := filepath.Glob(filepath.Join("..", "..", "report", "testdata", "perf", "*.csv"))
	if len(csvs) == 0 {
		t.Fatal("no perf testdata")
	}
	for _, c := range csvs {
		b, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, filepath.Base(c)), b, 0o644)
	}
	r := inProc(t, "report", dir)
	if r.code != 0 {
		t.Fatalf("report exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	schematest.Validate(t, "report", r.stdout)
	m := decodeObject(t, r)
	if m["kind"] != "perf" || m["report"] != filepath.Join(dir, "report.html") {
		t.Fatalf("report: %s", r.stdout)
	}
	for _, f := range []string{"analysis.json", "report.html", "charts"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	html, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	if !strings.Contains(string(html), `src="charts/001-`) {
		t.Error("the report shows no chart")
	}
	// Regenerating is idempotent.
	if r := inProc(t, "report", dir); r.code != 0 {
		t.Fatalf("second report exit %d: %s", r.code, r.stdout)
	}

	file := filepath.Join(t.TempDir(), "f.txt")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, c := range []struct {
		args []string
		code string
	}{
		{[]string{"report", t.TempDir()}, "unknown_evidence_kind"},
		{[]string{"report", file}, "not_a_directory"},
		{[]string{"report"}, "not_a_directory"},
	} {
		r := inProc(t, c.args...)
		if r.code != 3 || !strings.Contains(string(r.stdout), `"errorCode":"`+c.code+`"`) {
			t.Errorf("%v: exit %d %s", c.args, r.code, r.stdout)
		}
		schematest.Validate(t, "error", r.stdout)
	}
}

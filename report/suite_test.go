package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/suitereport"
)

// suiteRoot writes an artifacts root with two suites, each its
// suite.json as the runner writes it: the newer one on two phones with a
// passed, a flaky and a failed case, a phone left out.
func suiteRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	t0 := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	attempt := func(n int, dev string, v suitereport.Verdict, from, to int) suitereport.Attempt {
		return suitereport.Attempt{Number: n, Device: dev, Verdict: v, StartedAt: at(from), FinishedAt: at(to), DurationMs: int64(to-from) * 1000}
	}
	slot := func(c string, n int, v suitereport.Verdict, from, to int) suitereport.Slot {
		return suitereport.Slot{Case: c, Attempt: n, Verdict: v, StartedAt: at(from), FinishedAt: at(to), DurationMs: int64(to-from) * 1000}
	}
	newer := &suitereport.Report{Schema: suitereport.Schema, BatchID: "b2", Name: "solopi", StartedAt: at(0), FinishedAt: at(10), DurationMs: 10000,
		Devices: []suitereport.Device{
			{Serial: "sim-0001", Model: "Pixel 7", AndroidVersion: "14", Usable: true,
				Timeline: []suitereport.Slot{slot("login-ok", 1, suitereport.Passed, 0, 3), slot("search", 2, suitereport.Passed, 4, 8)}},
			{Serial: "sim-0002", Model: "Pixel 7", AndroidVersion: "14", Usable: true,
				Timeline: []suitereport.Slot{slot("search", 1, suitereport.Failed, 0, 3), slot("pay", 1, suitereport.Failed, 4, 9)}},
			{Serial: "sim-0003", LeftOut: &suitereport.Problem{Code: "solopi_not_ready", Message: "accessibility is off"}},
		},
		Cases: []suitereport.Case{
			{Name: "login-ok", Device: "sim-0001", Verdict: suitereport.Passed, Attempts: []suitereport.Attempt{attempt(1, "sim-0001", suitereport.Passed, 0, 3)}},
			{Name: "search", Device: "sim-0001", Verdict: suitereport.Flaky, Attempts: []suitereport.Attempt{
				attempt(1, "sim-0002", suitereport.Failed, 0, 3), attempt(2, "sim-0001", suitereport.Passed, 4, 8)}},
			{Name: "pay", Device: "sim-0002", Verdict: suitereport.Failed, Attempts: []suitereport.Attempt{attempt(1, "sim-0002", suitereport.Failed, 4, 9)}},
		},
	}
	newer.Finish(at(10))
	older := &suitereport.Report{Schema: suitereport.Schema, BatchID: "b1", Name: "solopi", StartedAt: at(-3600), FinishedAt: at(-3590),
		Devices: []suitereport.Device{{Serial: "sim-0001", Usable: true}},
		Cases:   []suitereport.Case{{Name: "login-ok", Verdict: suitereport.Passed, Attempts: []suitereport.Attempt{attempt(1, "sim-0001", suitereport.Passed, -3600, -3597)}}}}
	older.Finish(at(-3590))
	for name, r := range map[string]*suitereport.Report{"batch-b1": older, "batch-b2": newer} {
		if err := r.WriteFile(filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// A suite's page shows each phone's timeline, the left-out phone and its
// reason, every case with its attempts and the flaky marker; the root's
// index lists both suites, newest first, with their counts.
func TestSuitePageAndIndex(t *testing.T) {
	t.Parallel()
	root := suiteRoot(t)
	page, kind, err := render(filepath.Join(root, "batch-b2"), Options{})
	if err != nil || kind != kindSuite {
		t.Fatalf("kind %s: %v", kind, err)
	}
	html := string(page)
	for _, want := range []string{"sim-0001", "sim-0002", "sim-0003", "accessibility is off", "login-ok", "search", "pay", "flaky", "Pixel 7"} {
		if !strings.Contains(html, want) {
			t.Errorf("the suite page lacks %q", want)
		}
	}
	index, err := WriteIndex(root)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i2, i1 := strings.Index(s, "batch-b2"), strings.Index(s, "batch-b1")
	if i2 < 0 || i1 < 0 || i2 > i1 {
		t.Errorf("the index lists batch-b2 at %d and batch-b1 at %d: newest first", i2, i1)
	}
	if _, err := WriteIndex(t.TempDir()); err == nil {
		t.Error("an index of a directory without batches")
	}
}

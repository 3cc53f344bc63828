package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/suitereport"
)

// A suite's attempt that kept a recording (two parts) and performance
// CSVs links both from the suite page; one that kept neither links
// none.
func TestSuitePageLinksVideoAndPerf(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	batch := filepath.Join(root, "batch-m1")
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(batch, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("with/attempt-1/result.json", `{"state":"failed"}`)
	write("with/attempt-1/video-1.mp4", "mp4")
	write("with/attempt-1/video-2.mp4", "mp4")
	write("with/attempt-1/perf/cpu.csv", "RecordTime,cpu(%)\n1,2\n")
	write("with/attempt-1/perf/notes.txt", "not a series")
	write("without/attempt-1/result.json", `{"state":"passed"}`)
	// A farm shard's attempt: a verification's evidence whose recording
	// has its own page.
	write("shard/attempt-1/report.json", `{"status":"passed"}`)
	write("shard/attempt-1/video.mp4", "mp4")
	write("shard/attempt-1/perf/cpu.csv", "RecordTime,cpu(%)\n1,2\n")
	write("shard/attempt-1/perf/report.html", "<html></html>")
	writeSuite(t, batch, "m1", caseRun{"with", suitereport.Failed}, caseRun{"without", suitereport.Passed}, caseRun{"shard", suitereport.Passed})
	page, kind, err := render(batch, Options{})
	if err != nil || kind != kindSuite {
		t.Fatalf("kind %s: %v", kind, err)
	}
	html := string(page)
	for _, want := range []string{`href="with/attempt-1/video-1.mp4"`, "(2 parts)", `href="with/attempt-1/report.html#performance"`, "(1 CSV)",
		`href="shard/attempt-1/video.mp4"`, `href="shard/attempt-1/perf/report.html"`} {
		if !strings.Contains(html, want) {
			t.Errorf("the suite page lacks %s", want)
		}
	}
	if strings.Contains(html, "without/attempt-1/video") || strings.Contains(html, "without/attempt-1/report.html#performance") {
		t.Error("an attempt without a recording or perf files links one")
	}
}

// caseRun is one case of writeSuite.
type caseRun struct {
	name    string
	verdict suitereport.Verdict
}

// writeSuite writes batch/suite.json of a suite on one phone whose cases
// ran once each, every attempt's evidence in batch/<case>/attempt-1.
func writeSuite(t *testing.T, batch, id string, cases ...caseRun) {
	t.Helper()
	t0 := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	r := &suitereport.Report{Schema: suitereport.Schema, BatchID: id, Name: "solopi", StartedAt: t0, FinishedAt: t0.Add(2 * time.Second),
		Devices: []suitereport.Device{{Serial: "sim-0001", Usable: true}}}
	for _, c := range cases {
		r.Cases = append(r.Cases, suitereport.Case{Name: c.name, Verdict: c.verdict, Attempts: []suitereport.Attempt{{Number: 1, Device: "sim-0001",
			Verdict: c.verdict, StartedAt: t0, FinishedAt: t0.Add(time.Second), DurationMs: 1000, EvidenceDir: filepath.Join(batch, c.name, "attempt-1")}}})
	}
	r.Finish(t0.Add(2 * time.Second))
	if err := r.WriteFile(batch); err != nil {
		t.Fatal(err)
	}
}

// A run-batch root's sub-run that kept a recording and perf CSVs links
// both from its row.
func TestBatchPageLinksVideoAndPerf(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for rel, body := range map[string]string{
		"001-login/result.json": `{"state":"failed"}`, "001-login/video.mp4": "mp4", "001-login/perf/fps.csv": "RecordTime,fps\n1,60\n",
		"002-search/result.json": `{"state":"passed"}`,
	} {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	page, kind, err := render(root, Options{})
	if err != nil || kind != kindBatch {
		t.Fatalf("kind %s: %v", kind, err)
	}
	html := string(page)
	for _, want := range []string{`href="001-login/video.mp4"`, `href="001-login/report.html#performance"`} {
		if !strings.Contains(html, want) {
			t.Errorf("the batch page lacks %s", want)
		}
	}
	if strings.Contains(html, "002-search/video") {
		t.Error("a sub-run without a recording links one")
	}
}

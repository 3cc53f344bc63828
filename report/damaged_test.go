package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/internal/counterphone"
	"github.com/solopi-dev/solopi/suitereport"
)

// Evidence is downloaded, moved and edited by people: a report renders
// what it can of a damaged directory, says what it could not read, and
// never reaches outside the directory.

// editJSON rewrites a JSON evidence file through fn.
func editJSON(t *testing.T, file string, fn func(m map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	fn(m)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The run's performance section: a recording the report cannot read is a
// note in the run's page, never a failed report nor another verdict.
func TestRunPerfSectionSurvivesDamagedRecording(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	writeOutside := func() {
		b, _ := os.ReadFile(filepath.Join("testdata", "run-perf", "perf", PerfAnalysisFile))
		os.WriteFile(filepath.Join(outside, PerfAnalysisFile), []byte(strings.Replace(string(b), `"descriptive-only"`, `"do-not-embed"`, 1)), 0o644)
	}
	writeOutside()
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   []string
		absent []string
	}{
		{"analysis cut short", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "perf", PerfAnalysisFile), []byte(`{"analysisMode":"descriptive-only","metrics":[`), 0o644)
		}, []string{`id="performance"`, "The performance recording cannot be read: ", "analysis.json"}, []string{`src="perf/charts/`}},
		{"analysis missing", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "perf", PerfAnalysisFile))
		}, []string{"The performance recording cannot be read: ", "the performance directory has no analysis.json"}, []string{`src="perf/charts/`}},
		{"perf is a link out of the evidence", func(t *testing.T, dir string) {
			os.RemoveAll(filepath.Join(dir, "perf"))
			if err := os.Symlink(outside, filepath.Join(dir, "perf")); err != nil {
				t.Fatal(err)
			}
		}, nil, []string{`id="performance"`, "do-not-embed"}},
		{"charts recorded on another machine", func(t *testing.T, dir string) {
			// Windows paths of the CI machine that wrote it, one chart
			// never written: found by name in charts/, or left out.
			editJSON(t, filepath.Join(dir, "perf", PerfAnalysisFile), func(m map[string]any) {
				for i, x := range m["metrics"].([]any) {
					mm := x.(map[string]any)
					switch i {
					case 0:
						mm["chart"] = ""
					case 1:
						mm["chart"] = `C:\ci\work\perf\charts\no-such-chart.svg`
					default:
						mm["chart"] = `C:\ci\work\perf\charts\` + filepath.Base(mm["chart"].(string))
					}
				}
			})
		}, []string{`id="performance"`, `src="perf/charts/003-`, `src="perf/charts/009-`}, []string{`src="perf/charts/001-`, "no-such-chart", "cannot be read"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := copyTestdata(t, "run-perf")
			c.damage(t, dir)
			b, kind, err := render(dir, Options{})
			if err != nil || kind != kindRun {
				t.Fatalf("kind %s: %v", kind, err)
			}
			html := string(b)
			// The budgets failed the run (result.json's perf verdict),
			// whether or not the recording can be read.
			if !strings.Contains(html, `data-verdict="failed">failed</div>`) {
				t.Error("the run's verdict changed")
			}
			for _, w := range c.want {
				if !strings.Contains(html, w) {
					t.Errorf("the report lacks %q", w)
				}
			}
			for _, a := range c.absent {
				if strings.Contains(html, a) {
					t.Errorf("the report holds %q", a)
				}
			}
		})
	}
}

// Write of an artifacts root writes every report its pages link to: each
// batch's and its runs', each suite's and its attempts' (the suite page
// links an attempt's report#performance).
func TestWriteRootWritesEveryLinkedReport(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	copyTestdataTo(t, "batch-stopped", filepath.Join(root, "batch-old"))
	suite := filepath.Join(root, "batch-s1")
	copyTestdataTo(t, "run-perf", filepath.Join(suite, "pay", "attempt-1"))
	copyTestdataTo(t, "run-failed", filepath.Join(suite, "search", "attempt-1"))
	writeSuite(t, suite, "s1", caseRun{"pay", suitereport.Failed}, caseRun{"search", suitereport.Failed}, caseRun{"gone", suitereport.Error})
	res, err := Write(root, Options{})
	if err != nil || res.Kind != kindIndex {
		t.Fatalf("write root: %+v %v", res, err)
	}
	for _, rel := range []string{"report.html", "batch-old/report.html", "batch-old/001-counter-smoke/report.html",
		"batch-s1/report.html", "batch-s1/pay/attempt-1/report.html", "batch-s1/search/attempt-1/report.html"} {
		if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
			t.Errorf("%s was not written: %v", rel, err)
		}
	}
	if _, err := os.Stat(filepath.Join(suite, "gone", "attempt-1")); err == nil {
		t.Error("a report was written for an attempt without evidence")
	}
	pay, _ := os.ReadFile(filepath.Join(suite, "pay", "attempt-1", "report.html"))
	if !strings.Contains(string(pay), `id="performance"`) {
		t.Error("the attempt's report has no performance section its suite links to")
	}
	// The index lists the run-batch beside the suite, its counts from
	// batch.json.
	index, _ := os.ReadFile(res.Path)
	html := string(index)
	for _, w := range []string{`href="batch-old/report.html"`, `href="batch-s1/report.html"`, ">batch<", ">suite<"} {
		if !strings.Contains(html, w) {
			t.Errorf("the index lacks %q", w)
		}
	}
	// A suite.json that cannot be read fails the index (typed), not half
	// of it.
	os.WriteFile(filepath.Join(suite, suiteReport), []byte(`{"schema":`), 0o644)
	if _, err := WriteIndex(root); err == nil {
		t.Error("an unreadable suite.json was indexed")
	}
}

// The agent report draws every kind of action over its screenshot, lists
// protocol retries as failures of their step, and links a recording only
// when video.json describes one that is there.
func TestAgentReportActionsRetriesAndVideo(t *testing.T) {
	t.Parallel()
	dir := agentRun(t, "increase the counter to 3", counterphone.RunOptions{Model: fakemodel.Options{Quirk: fakemodel.QuirkWrapped}})
	traj := filepath.Join(dir, "trajectory.json")
	// The fake model only taps; the runtime records a swipe, typed text
	// and a key the same way (the mapped device coordinates in fields).
	editJSON(t, traj, func(m map[string]any) {
		actions := 0
		for _, x := range m["events"].([]any) {
			ev := x.(map[string]any)
			if ev["type"] != "action" {
				continue
			}
			pl := ev["payload"].(map[string]any)
			act := pl["action"].(map[string]any)
			switch actions {
			case 0:
				act["action"] = "Swipe"
				pl["fields"] = map[string]any{"start": map[string]any{"device_coordinate": []any{540, 1800}}, "end": map[string]any{"device_coordinate": []any{540, 600}}}
			case 1:
				act["action"], act["text"] = "Type", strings.Repeat("long text ", 10)
			case 2:
				act["action"] = "Back"
			}
			actions++
		}
		if actions < 3 {
			t.Fatalf("the run planned %d actions", actions)
		}
	})
	b, _, err := render(dir, Options{Trajectory: "trajectory.json"})
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, w := range []string{`<line class="swipe" x1="540" y1="1800" x2="540" y2="600"`, `<polygon points="540,600 `,
		"⌨ " + strings.Repeat("long text ", 6)[:60] + "…", `font-family="sans-serif">Back</text>`, "<b>protocol retry</b>"} {
		if !strings.Contains(html, w) {
			t.Errorf("the agent report lacks %q", w)
		}
	}
	if strings.Contains(html, "<video") {
		t.Error("a recording is linked without video.json")
	}
	os.WriteFile(filepath.Join(dir, "video-1.mp4"), []byte{0}, 0o644)
	for _, bad := range []string{`{"files":[{"path":"video-1.mp4"}]`, `{"files":[{"path":"video-1.mp4"}],"startedAt":"yesterday"}`,
		`{"files":[{"path":"video-2.mp4"},{"path":"../video-1.mp4"}],"startedAt":"2026-01-01T00:00:00Z"}`} {
		os.WriteFile(filepath.Join(dir, agentVideoFile), []byte(bad), 0o644)
		b, _, err := render(dir, Options{Trajectory: "trajectory.json"})
		if err != nil || strings.Contains(string(b), "<video") {
			t.Errorf("video.json %s: %v, or a recording linked", bad, err)
		}
	}
}

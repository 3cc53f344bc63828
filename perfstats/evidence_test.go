package perfstats

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/schemas/schematest"
)

// run --perf writes its analysis into the run's evidence (WriteEvidence):
// one chart per series and analysis.json, every file in the manifest.

func evidenceDir(t *testing.T) *artifacts.Dir {
	t.Helper()
	dir, err := artifacts.Open(filepath.Join(t.TempDir(), "ev"), artifacts.EvidenceNew)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestWriteEvidenceChartsAndAnalysis(t *testing.T) {
	t.Parallel()
	in := t.TempDir()
	writeSeries(t, in, "全局占用_CPU_0123456789abcdef_1_2.csv", "全局占用(%)", "20", "70", "40")
	writeSeries(t, in, "帧率_FPS_0123456789abcdef_1_2.csv", "帧率(fps)", "60", "24", "58")
	a, err := AnalyzePerformance(context.Background(), PerfAnalyzeOptions{Input: in})
	if err != nil {
		t.Fatal(err)
	}
	bs, err := ParseBudgets("cpu_global.max=80,fps.min=30")
	if err != nil {
		t.Fatal(err)
	}
	if v := a.Assess(a.CheckBudgets(bs)); v != "failed" {
		t.Fatalf("verdict %s", v)
	}
	dir := evidenceDir(t)
	if err := a.WriteEvidence(dir, "perf"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range dir.Files() {
		got = append(got, f.Path)
	}
	slices.Sort(got)
	want := []string{"perf/analysis.json", "perf/charts/001-全局占用_CPU_0123456789abcdef_1_2.svg", "perf/charts/002-帧率_FPS_0123456789abcdef_1_2.svg"}
	if !slices.Equal(got, want) {
		t.Fatalf("manifest %v, want %v", got, want)
	}
	for _, m := range a.Metrics {
		if !strings.HasPrefix(m.Chart, filepath.Join(dir.Root(), "perf", "charts")+string(filepath.Separator)) {
			t.Fatalf("chart path %q is not in the evidence", m.Chart)
		}
		svg, err := os.ReadFile(m.Chart)
		if err != nil || wellFormedXML(svg) != nil || !bytes.Contains(svg, []byte(m.Name)) {
			t.Fatalf("chart %s: %v", m.Chart, err)
		}
	}
	// analysis.json is perf-analyze's object with the budgets' assessment
	// (docs/file-formats.md; perf-analyze's own schema allows only an
	// unperformed one, so the assessment is checked here).
	b, err := os.ReadFile(filepath.Join(dir.Root(), "perf", AnalysisFile))
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Assessment struct {
			Verdict string `json:"verdict"`
			Reason  string `json:"reason"`
			Budgets []BudgetCheck
		} `json:"assessment"`
		Charts struct {
			Directory string   `json:"directory"`
			Files     []string `json:"files"`
		} `json:"charts"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Assessment.Verdict != "failed" || !strings.Contains(back.Assessment.Reason, "fps.min 24 < limit 30 (frame rate)") ||
		len(back.Assessment.Budgets) != 2 || back.Assessment.Budgets[0].Status != BudgetPassed ||
		back.Charts.Directory != filepath.Join(dir.Root(), "perf", "charts") || len(back.Charts.Files) != 2 {
		t.Fatalf("analysis.json = %s", b)
	}
}

// A recording whose only CSV has no numeric series has no chart: the
// analysis (without budgets: perf-analyze's object) still says so, with an
// empty (not absent) chart list.
func TestWriteEvidenceWithoutSeries(t *testing.T) {
	t.Parallel()
	in := t.TempDir()
	writeFiles(t, in, map[string]string{"notes_x_1_2.csv": "RecordTime,note\nsoon,later\n"})
	a, err := AnalyzePerformance(context.Background(), PerfAnalyzeOptions{Input: in})
	if err != nil || len(a.Metrics) != 0 {
		t.Fatalf("analysis %+v %v", a, err)
	}
	dir := evidenceDir(t)
	if err := a.WriteEvidence(dir, "perf"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir.Root(), "perf", AnalysisFile))
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, "perf-analyze", b)
	if !bytes.Contains(b, []byte(`"files": []`)) || len(dir.Files()) != 1 {
		t.Fatalf("analysis.json = %s, manifest %v", b, dir.Files())
	}
}

// A chart that cannot be written fails the evidence (run --perf reports it)
// before an analysis.json names charts that are not there.
func TestWriteEvidenceChartFails(t *testing.T) {
	t.Parallel()
	in := t.TempDir()
	writeSeries(t, in, "全局占用_CPU_0123456789abcdef_1_2.csv", "全局占用(%)", "20", "70")
	a, err := AnalyzePerformance(context.Background(), PerfAnalyzeOptions{Input: in})
	if err != nil {
		t.Fatal(err)
	}
	dir := evidenceDir(t)
	if _, err := dir.WriteFile("perf/charts", "test", []byte("a file where the charts go")); err != nil {
		t.Fatal(err)
	}
	if err := a.WriteEvidence(dir, "perf"); err == nil {
		t.Fatal("charts were written through a file")
	}
	if _, err := os.Stat(filepath.Join(dir.Root(), "perf", AnalysisFile)); err == nil {
		t.Fatal("analysis.json was written although its charts failed")
	}
}

package report

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/counterphone"
)

// copyTestdata copies testdata/name into a temporary directory, so that
// reports are written beside a copy and the checked-in evidence stays as
// it is.
func copyTestdata(t testing.TB, name string) string {
	t.Helper()
	return copyTestdataTo(t, name, filepath.Join(t.TempDir(), name))
}

// copyTestdataTo copies testdata/name to dst.
func copyTestdataTo(t testing.TB, name, dst string) string {
	t.Helper()
	src := filepath.Join("testdata", name)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// agentRun runs the pure-vision runtime on the in-memory counter phone
// with the fake model and returns the directory holding its trajectory
// and screenshots.
func agentRun(t testing.TB, task string, o counterphone.RunOptions) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "agent")
	o.Task = task
	if o.Model.Coords == "" {
		o.Model.Coords = fakemodel.CoordsRelative
	}
	r, err := counterphone.RunAgent(context.Background(), dir, o)
	if err != nil {
		t.Fatal(err)
	}
	if r.Screens == 0 {
		t.Fatal("the run kept no screenshot")
	}
	return dir
}

var kinds = []struct {
	dir  string
	kind Kind
}{
	{"run-failed", kindRun},
	{"batch-stopped", kindBatch},
	{"verify-run", kindVerify},
	{"perf", KindPerf},
}

func TestDetect(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		got, err := Detect(filepath.Join("testdata", k.dir), Options{})
		if err != nil || got != k.kind {
			t.Errorf("%s: kind %q, %v; want %s", k.dir, got, err, k.kind)
		}
	}
	if got, err := Detect(agentRun(t, "increase the counter to 1", counterphone.RunOptions{}), Options{}); err != nil || got != kindAgent {
		t.Errorf("agent run: kind %q, %v", got, err)
	}
	// A batch child is a run; the batch root without batch.json is still
	// a batch.
	if got, _ := Detect(filepath.Join("testdata", "batch-stopped", "001-counter-smoke"), Options{}); got != kindRun {
		t.Errorf("batch child: %q", got)
	}
	noSummary := copyTestdata(t, "batch-stopped")
	os.Remove(filepath.Join(noSummary, batchSummary))
	if got, _ := Detect(noSummary, Options{}); got != kindBatch {
		t.Errorf("batch without batch.json: %q", got)
	}

	empty := t.TempDir()
	file := filepath.Join(empty, "x.txt")
	os.WriteFile(file, []byte("x"), 0o644)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(filepath.Join("..", "..", "testdata", "run-failed"), link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir, code string
	}{
		{empty, fault.CodeUnknownEvidenceKind},
		{file, fault.CodeNotADirectory},
		{filepath.Join(empty, "missing"), fault.CodeNotADirectory},
		{link, fault.CodeNotADirectory},
	} {
		_, err := Detect(c.dir, Options{})
		if fault.CodeOf(err) != c.code || fault.KindOf(err) != fault.Invalid {
			t.Errorf("%s: %v (code %s), want %s", c.dir, err, fault.CodeOf(err), c.code)
		}
	}
}

// TestRenderIsDeterministic: the same evidence gives the same bytes.
func TestRenderIsDeterministic(t *testing.T) {
	t.Parallel()
	dirs := []string{}
	for _, k := range kinds {
		dirs = append(dirs, filepath.Join("testdata", k.dir))
	}
	dirs = append(dirs, agentRun(t, "increase the counter to 2", counterphone.RunOptions{}))
	for _, d := range dirs {
		a, _, err := render(d, Options{})
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		b, _, err := render(d, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two renders differ", d)
		}
		if bytes.Contains(bytes.ToLower(a), []byte("<script")) {
			t.Errorf("%s: the report contains a script element", d)
		}
	}
}

func TestRunReportMarksTheFailingStep(t *testing.T) {
	t.Parallel()
	b, _, err := render(filepath.Join("testdata", "run-failed"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{
		`data-verdict="failed"`,
		`id="failing-step"`,
		`<b>expect-four</b>`,
		`Assert failed: text &#34;3&#34; is not &#34;4&#34;`,
		// The hostile case name is text.
		`counter-&lt;script&gt;alert(1)&lt;/script&gt;-four`,
		`src="device/003-failure-step-5.png"`,
		`src="screen.png"`,
		`<a href="logcat.txt">`,
		`not_reached`,
		// the digest column of the manifest
		`title="d8abe212c30c6d0ee1f42355097d0018507fb2fa597584a13b26e9acd33d658d"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the run report lacks %s", want)
		}
	}
	// The logcat excerpt is placed by the device clock inferred from the
	// replay log: it ends at the failure, not at the end of logcat.
	if !strings.Contains(html, "before to 5s after the failure (device time 12-01 11:55:46.406)") {
		t.Error("the logcat excerpt is not anchored at the failure")
	}
}

func TestBatchReportWithoutSummaryListsItsDirectories(t *testing.T) {
	t.Parallel()
	dir := copyTestdata(t, "batch-stopped")
	if err := os.Remove(filepath.Join(dir, batchSummary)); err != nil {
		t.Fatal(err)
	}
	res, err := Write(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(res.Path)
	html := string(b)
	if !strings.Contains(html, "has no batch.json") || strings.Count(html, `href="00`) != 2 {
		t.Errorf("batch report without summary:\n%s", html)
	}
	// Every linked sub-run report was written.
	for _, c := range []string{"001-counter-smoke", "002-counter-script-alert-1-script-four"} {
		if _, err := os.Stat(filepath.Join(dir, c, fileName)); err != nil {
			t.Errorf("sub-run report %s: %v", c, err)
		}
	}
}

func TestPerfWithoutAnalysisIsRefused(t *testing.T) {
	t.Parallel()
	dir := copyTestdata(t, "perf")
	os.Remove(filepath.Join(dir, PerfAnalysisFile))
	if k, err := Detect(dir, Options{}); k != KindPerf || err != nil {
		t.Fatalf("CSV directory: %q %v", k, err)
	}
	_, err := Write(dir, Options{})
	if fault.CodeOf(err) != fault.CodePerfAnalysisMissing {
		t.Fatalf("err %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, fileName)); err == nil {
		t.Error("a report was written without the analysis")
	}
}

// TestWriteRefusesASymlink: a report.html planted as a link to another
// file is refused by the output-path policy (a symbolic link is never
// followed nor replaced); the link's target is untouched.
func TestWriteRefusesASymlink(t *testing.T) {
	t.Parallel()
	dir := copyTestdata(t, "run-failed")
	victim := filepath.Join(t.TempDir(), "victim.txt")
	os.WriteFile(victim, []byte("keep me"), 0o644)
	if err := os.Symlink(victim, filepath.Join(dir, fileName)); err != nil {
		t.Fatal(err)
	}
	_, err := Write(dir, Options{})
	if fault.CodeOf(err) != fault.CodeInvalidOutputPath {
		t.Fatalf("want %s, got %v", fault.CodeInvalidOutputPath, err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me" {
		t.Errorf("the link's target changed: %q", b)
	}
	if fi, err := os.Lstat(filepath.Join(dir, fileName)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the planted link was touched: %v %v", fi, err)
	}
}

// TestEvidenceLinksAreNotFollowed: a symlink inside an evidence directory
// (a downloaded artifact) is neither read nor linked.
func TestEvidenceLinksAreNotFollowed(t *testing.T) {
	t.Parallel()
	dir := copyTestdata(t, "run-failed")
	secret := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(secret, []byte("12-01 11:55:40.000  1  1 E Secret: do-not-embed\n"), 0o644)
	os.Remove(filepath.Join(dir, "logcat.txt"))
	if err := os.Symlink(secret, filepath.Join(dir, "logcat.txt")); err != nil {
		t.Fatal(err)
	}
	b, _, err := render(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("do-not-embed")) {
		t.Error("the report embedded a file reached through a symbolic link")
	}
}

func TestAgentReportDrawsTheActions(t *testing.T) {
	t.Parallel()
	dir := agentRun(t, "increase the counter to 2", counterphone.RunOptions{})
	b, _, err := render(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{`data-verdict="completed"`, `class="tap"`, `viewBox="0 0 1080 2340"`, `src="screens/`, `precondition`, `completion review`} {
		if !strings.Contains(html, want) {
			t.Errorf("the agent report lacks %s", want)
		}
	}
	// Taps land on +1 (x 560..960, y 1120..1290 on the 1080×2340 screen).
	if !strings.Contains(html, `cx="760" cy="1203"`) {
		t.Error("no tap marker on the +1 button")
	}
}

func TestVerifyReportTree(t *testing.T) {
	t.Parallel()
	b, _, err := render(filepath.Join("testdata", "verify-run"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{
		`data-verdict="failed"`,
		`id="checkpoint-value-four"`,
		`replay: Assert failed: text &#34;3&#34; is not &#34;4&#34;`,
		`equals &#34;4&#34;`,
		`dependency_not_passed`,
		`agent said done`,
		// evidence written elsewhere is found in the moved directory
		`href="segments/segment-increment-three-test-01-5f0c2a9d41b7/replay/screen.png"`,
		`src="segments/segment-explore-increment-test-01-c93e7a1f06d2/screens/`,
		// hostile acceptance-criterion text stays text
		`&lt;img src=x onerror=`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the verification report lacks %s", want)
		}
	}
}

// Runs an early stop never reached are listed under skipped[] (solopi-ai's
// results[] holds only executed runs); the page shows them as not reached.
func TestBatchReportListsSkippedRuns(t *testing.T) {
	t.Parallel()
	dir := copyTestdata(t, "batch-stopped")
	var sum map[string]any
	b, err := os.ReadFile(filepath.Join(dir, batchSummary))
	if err != nil || json.Unmarshal(b, &sum) != nil {
		t.Fatal(err)
	}
	results := sum["results"].([]any)
	last := results[len(results)-1].(map[string]any)
	sum["results"] = results[:len(results)-1]
	sum["skipped"] = []any{map[string]any{"index": last["index"], "caseName": "never-ran-case"}}
	b, _ = json.Marshal(sum)
	if err := os.WriteFile(filepath.Join(dir, batchSummary), b, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Write(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(res.Path)
	if !strings.Contains(string(page), "never-ran-case") || !strings.Contains(string(page), "not_reached") {
		t.Errorf("the skipped run is not listed:\n%s", page)
	}
}

// TestRunWithPerfShowsBudgetsAndEnglishNames: a run recorded with --perf
// and a budget it exceeded shows the failed verdict, the budget with its
// measured value, every chart, and the metrics' English names beside
// SoloPi's own; nothing says thresholds were not given.
func TestRunWithPerfShowsBudgetsAndEnglishNames(t *testing.T) {
	t.Parallel()
	dir := copyTestdata(t, "run-perf")
	if k, err := Detect(dir, Options{}); k != kindRun || err != nil {
		t.Fatalf("kind %q %v", k, err)
	}
	res, err := Write(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(res.Path)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{`id="performance"`, `<code>memory.max=50</code>`, `<span class="badge bad">exceeded</span>`,
		"app memory (PSS)", "frame rate", "帧率", "app CPU usage", "budget exceeded: memory.max 258.9", `src="perf/charts/001-`} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(html, "no thresholds") {
		t.Error("the report still says no thresholds were given")
	}
	if n := strings.Count(html, `<figure class="shot"><img src="perf/charts/`); n != 9 {
		t.Errorf("%d charts, want 9", n)
	}
	if !strings.Contains(html, `data-verdict="failed">failed</div>`) {
		t.Error("the verdict is not failed")
	}
}

// TestPerfReportPointsAtBudgets: a recording no budget judged says how
// to give one, not that thresholds were missing.
func TestPerfReportPointsAtBudgets(t *testing.T) {
	t.Parallel()
	dir := copyTestdata(t, "perf")
	res, err := Write(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(res.Path)
	if html := string(b); !strings.Contains(html, "--perf-budget") || strings.Contains(html, "no thresholds") || !strings.Contains(html, "device CPU usage") {
		t.Errorf("perf report:\n%s", html)
	}
}

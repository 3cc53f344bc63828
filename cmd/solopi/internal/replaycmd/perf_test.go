package replaycmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/sim"
)

// run --perf with --perf-budget: a budget the simulator's figures exceed
// fails the run (exit 2, perf_budget_exceeded naming the metric, the limit
// and the value) and its report shows the recording; one they meet passes;
// the options' rules are usage errors.
func TestRunPerfBudget(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	r.importCase(cmdtest.WriteCase(t, nil))
	fail := filepath.Join(t.TempDir(), "fail")
	m := r.Cmd(2, append([]string{"run", "--case", demo, "--artifacts", fail, "--perf", "CPU,Memory", "--perf-budget", "memory.max=50,cpu.max=80"}, fast...)...)
	if m["errorCode"] != "perf_budget_exceeded" || !strings.Contains(cmdtest.Str(m, "error"), "memory.max") || !strings.Contains(cmdtest.Str(m, "error"), "limit 50") {
		t.Fatalf("run: %v", m)
	}
	if p := cmdtest.Obj(m, "perf"); p["verdict"] != "failed" || p["stopped"] != true {
		t.Fatalf("perf %v", p)
	}
	html, err := os.ReadFile(filepath.Join(fail, "report.html"))
	if err != nil || !strings.Contains(string(html), "memory.max=50") || !strings.Contains(string(html), `data-verdict="failed"`) {
		t.Fatalf("report.html: %v", err)
	}
	pass := filepath.Join(t.TempDir(), "pass")
	m = r.Cmd(0, append([]string{"run", "--case", demo, "--artifacts", pass, "--perf", "CPU,Memory,FPS", "--perf-budget", "cpu.max=80,memory.max=300,fps.p10=45"}, fast...)...)
	if p := cmdtest.Obj(m, "perf"); p["verdict"] != "passed" {
		t.Fatalf("perf %v", p)
	}
	// Neither option: no perf object.
	m = r.Cmd(0, append([]string{"run", "--case", demo}, fast...)...)
	if _, ok := m["perf"]; ok {
		t.Fatalf("a run without --perf has a perf object: %v", m)
	}
	for _, c := range []struct {
		args []string
		code string
	}{
		{[]string{"--perf-budget", "cpu.max=80"}, "invalid_option"},
		{[]string{"--perf", "CPU"}, "invalid_option"},
		{[]string{"--perf", " , "}, "invalid_option"},
		{[]string{"--artifacts", filepath.Join(t.TempDir(), "x"), "--perf", "CPU", "--perf-budget", "cpu.maximum=80"}, "invalid_perf_budget"},
		{[]string{"--artifacts", filepath.Join(t.TempDir(), "y"), "--perf", "CPU", "--perf-budget", "fps.p10=50"}, "invalid_option"},
	} {
		if m := r.Cmd(3, append([]string{"run", "--case", demo}, c.args...)...); m["errorCode"] != c.code {
			t.Errorf("%v: %v", c.args, m)
		}
	}
}

// run-batch passes --perf and --perf-budget to every sub-run.
func TestRunBatchPerfBudgetPerSubRun(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	r.importCase(cmdtest.WriteCase(t, nil))
	root := t.TempDir()
	m := r.Cmd(2, append([]string{"run-batch", "--case", demo, "--artifacts", root, "--perf", "Memory", "--perf-budget", "memory.max=50"}, fast...)...)
	res := m["results"].([]any)
	if len(res) != 1 {
		t.Fatalf("results %v", m)
	}
	sub := res[0].(map[string]any)
	if sub["errorCode"] != "perf_budget_exceeded" {
		t.Fatalf("sub-run %v", sub)
	}
	run := sub["run"].(map[string]any)
	if p := cmdtest.Obj(run, "perf"); p["verdict"] != "failed" {
		t.Fatalf("perf %v", p)
	}
	dir := cmdtest.Str(cmdtest.Obj(run, "artifacts"), "dir")
	if _, err := os.Stat(filepath.Join(dir, "perf", "analysis.json")); err != nil {
		t.Fatal(err)
	}
}

// A suite across phones passes --perf and --perf-budget to every attempt:
// an exceeded budget is the case's failure (not the phone's), with the
// recording in the attempt's evidence.
func TestSuitePerfBudgetIsAProductFailure(t *testing.T) {
	t.Parallel()
	c, _ := farmCLI(t, 2)
	dir := caseDir(t, "case-01", "case-02")
	root := t.TempDir()
	m := c.Expect(2, "run-batch", append([]string{"run-batch", "--dir", dir, "--devices", "all", "--artifacts", root,
		"--perf", "Memory", "--perf-budget", "memory.max=50"}, fast...)...)
	results := m["results"].([]any)
	if len(results) != 2 {
		t.Fatalf("suite %v", m)
	}
	for _, r := range results {
		r := r.(map[string]any)
		attempts := r["attempts"].([]any)
		if r["verdict"] != "failed" || len(attempts) != 1 {
			t.Fatalf("result %v", r)
		}
		ev := str(attempts[0].(map[string]any), "evidenceDir")
		if _, err := os.Stat(filepath.Join(ev, "perf", "analysis.json")); err != nil {
			t.Fatalf("attempt evidence: %v", err)
		}
	}
}

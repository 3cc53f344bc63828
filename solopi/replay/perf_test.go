package replay

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/perfstats"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/solopi/sessions"
)

func perfRunOptions(t *testing.T, name, dir, items, budget string) RunOptions {
	t.Helper()
	o := fastRun(name, dir)
	o.Perf, o.PerfSessions = sessions.ParseItems(items), sessions.PerfRecorder{}
	if budget != "" {
		b, err := perfstats.ParseBudgets(budget)
		if err != nil {
			t.Fatal(err)
		}
		o.PerfBudget = b
	}
	return o
}

// runObject is the run's output as printed: valid against the run
// schema, decoded as a client reads it.
func runObject(t *testing.T, rep *RunReport) map[string]any {
	t.Helper()
	b, err := json.Marshal(rep.Payload)
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, "run", b)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// printed is the run's output decoded as a client reads it, without the
// schema check.
func printed(rep *RunReport) map[string]any {
	b, _ := json.Marshal(rep.Payload)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// perfOf is the run output's "perf" object, decoded as a client reads it.
func perfOf(t *testing.T, rep *RunReport) map[string]any {
	t.Helper()
	out := runObject(t, rep)
	p, ok := out["perf"].(map[string]any)
	if !ok {
		t.Fatalf("no perf object in %v", out)
	}
	return p
}

// checkPerfEvidence checks that the CSVs, the analysis and its charts are
// in perf/ and in the manifest (checkArtifacts verified every digest), and
// that result.json carries the figures.
func checkPerfEvidence(t *testing.T, dir string, rep *RunReport, perf map[string]any) {
	t.Helper()
	m := checkArtifacts(t, dir, rep.RunID, rep.RequestID, "perf/"+perfstats.AnalysisFile)
	csvs, charts := 0, 0
	for _, f := range m.Files {
		switch {
		case strings.HasPrefix(f.Path, "perf/charts/") && strings.HasSuffix(f.Path, ".svg"):
			charts++
		case strings.HasPrefix(f.Path, "perf/") && strings.HasSuffix(f.Path, ".csv"):
			if !strings.Contains(f.Source, "/records/performance-"+perf["sessionId"].(string)+"/") {
				t.Fatalf("CSV from %s", f.Source)
			}
			csvs++
		}
	}
	if csvs == 0 || charts != csvs || len(perf["files"].([]any)) != csvs {
		t.Fatalf("%d CSVs, %d charts, perf files %v", csvs, charts, perf["files"])
	}
	var res map[string]any
	b, _ := os.ReadFile(filepath.Join(dir, ArtifactResult))
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if rp, _ := res["perf"].(map[string]any); rp == nil || len(rp["metrics"].([]any)) != csvs {
		t.Fatalf("result.json perf %v", res["perf"])
	}
}

// noLivePerf fails unless the device's performance recording is our
// session, stopped.
func noLivePerf(t *testing.T, p *simPhone, sessionID string) {
	t.Helper()
	res, err := sessions.PerfStatus(context.Background(), p.d, sessionID)
	if err != nil {
		t.Fatalf("perf-status %s: %v", sessionID, err)
	}
	if st := res["state"]; st != "stopped" {
		t.Fatalf("the performance session is %v after the run: %v", st, res)
	}
	if n := p.mutations("action=stop", "sessionId="+sessionID); n < 1 {
		t.Fatalf("no stop of %s: %v", sessionID, p.dev.Mutations())
	}
}

func budgetStatus(t *testing.T, perf map[string]any) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, b := range perf["budgets"].([]any) {
		m := b.(map[string]any)
		out[m["budget"].(string)] = m["status"].(string)
	}
	return out
}

func TestRunPerfBudgetExceededFails(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("smoke", twoSteps)
	dir := filepath.Join(t.TempDir(), "out")
	// The simulator's app PSS is 90..260 MB, so 50 is always exceeded;
	// its app CPU (1..35 %) meets 80.
	rep := RunReplay(context.Background(), p.d, perfRunOptions(t, "smoke", dir, "CPU,Memory", "memory.max=50,cpu.max=80"))
	if rep.ErrorCode != fault.CodePerfBudgetExceeded || kindOf(rep.Err) != fault.Failed || rep.State != "passed" {
		t.Fatalf("code %s kind %v state %s: %v", rep.ErrorCode, kindOf(rep.Err), rep.State, rep.Payload)
	}
	msg := rep.Err.Message
	if !strings.Contains(msg, "memory.max") || !strings.Contains(msg, "limit 50") || strings.Contains(msg, "cpu.max") {
		t.Fatalf("message %q", msg)
	}
	ex := rep.Err.Details["exceededBudgets"].([]map[string]any)
	if len(ex) != 1 || ex[0]["metric"] != "memory" || ex[0]["limit"] != 50.0 || ex[0]["value"].(float64) <= 50 {
		t.Fatalf("exceeded %v", ex)
	}
	perf := perfOf(t, rep)
	if perf["verdict"] != "failed" || perf["target"] != "com.example.counter" {
		t.Fatalf("perf %v", perf)
	}
	if st := budgetStatus(t, perf); st["memory.max=50"] != "exceeded" || st["cpu.max=80"] != "passed" {
		t.Fatalf("budgets %v", st)
	}
	checkPerfEvidence(t, dir, rep, perf)
	if m := readManifest(t, dir); m.Extra["errorCode"] != fault.CodePerfBudgetExceeded {
		t.Fatalf("manifest extra %v", m.Extra)
	}
	noLivePerf(t, p, perf["sessionId"].(string))
}

func TestRunPerfBudgetMetPasses(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("smoke", twoSteps)
	dir := filepath.Join(t.TempDir(), "out")
	rep := RunReplay(context.Background(), p.d, perfRunOptions(t, "smoke", dir, "CPU,Memory,FPS", "cpu.max=80,memory.max=300,fps.p10=45"))
	if rep.Err != nil || printed(rep)["success"] != true {
		t.Fatalf("err %v payload %v", rep.Err, rep.Payload)
	}
	perf := perfOf(t, rep)
	if perf["verdict"] != "passed" {
		t.Fatalf("perf %v", perf)
	}
	for b, st := range budgetStatus(t, perf) {
		if st != "passed" {
			t.Fatalf("%s: %s", b, st)
		}
	}
	// Every series is named in English beside SoloPi's own name.
	for _, m := range perf["metrics"].([]any) {
		mm := m.(map[string]any)
		if mm["english"] == nil || mm["metric"] == nil {
			t.Fatalf("metric without an English name: %v", mm)
		}
	}
	checkPerfEvidence(t, dir, rep, perf)
	noLivePerf(t, p, perf["sessionId"].(string))
}

func TestRunPerfWithoutBudgetNeverChangesTheVerdict(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("broken", failSteps)
	dir := filepath.Join(t.TempDir(), "out")
	rep := RunReplay(context.Background(), p.d, perfRunOptions(t, "broken", dir, "CPU", ""))
	if rep.ErrorCode != fault.CodeReplayFailed {
		t.Fatalf("code %s", rep.ErrorCode)
	}
	perf := perfOf(t, rep)
	if perf["verdict"] != nil || perf["budgets"] != nil || perf["stopped"] != true {
		t.Fatalf("perf %v", perf)
	}
	checkPerfEvidence(t, dir, rep, perf)
}

func TestRunPerfUnmeasuredBudgetIsNotTested(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("smoke", twoSteps)
	// The metric provider is not ready: the recording cannot start.
	p.dev.App.SetPerfProviderReady(false)
	dir := filepath.Join(t.TempDir(), "out")
	rep := RunReplay(context.Background(), p.d, perfRunOptions(t, "smoke", dir, "CPU", "cpu.max=80"))
	if rep.ErrorCode != fault.CodePerfNotMeasured || kindOf(rep.Err) == fault.Failed || printed(rep)["success"] != false || rep.State != "passed" {
		t.Fatalf("code %s kind %v: %v", rep.ErrorCode, kindOf(rep.Err), rep.Payload)
	}
	perf := perfOf(t, rep)
	if perf["verdict"] != "not_tested" || budgetStatus(t, perf)["cpu.max=80"] != "not_tested" || perf["sessionId"] != nil {
		t.Fatalf("perf %v", perf)
	}
	if errs, _ := perf["errors"].([]any); len(errs) == 0 || !strings.Contains(errs[0].(string), "did not start") {
		t.Fatalf("perf errors %v", perf["errors"])
	}
}

func TestRunPerfInterruptStopsTheSessionByID(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("slow", hangSteps)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p.onStatus(func(r runAnswer, n int) {
		if r.State == "running" && n == 3 {
			cancel()
		}
	})
	dir := filepath.Join(t.TempDir(), "out")
	rep := RunReplay(ctx, p.d, perfRunOptions(t, "slow", dir, "CPU,Memory", "memory.max=50"))
	if kindOf(rep.Err) != fault.Interrupted || rep.ErrorCode != fault.CodeInterrupted {
		t.Fatalf("kind %v code %s", kindOf(rep.Err), rep.ErrorCode)
	}
	if p.mutations("type=cancel&runId="+rep.RunID) != 1 || p.status().State != "cancelled" {
		t.Fatalf("cancel not sent for our run: %v", p.dev.Mutations())
	}
	perf := perfOf(t, rep)
	id, _ := perf["sessionId"].(string)
	if id == "" || perf["stopped"] != true {
		t.Fatalf("perf %v", perf)
	}
	noLivePerf(t, p, id)
	// What was recorded is kept; the budget is judged but the interrupt is
	// the run's outcome.
	checkPerfEvidence(t, dir, rep, perf)
	if perf["verdict"] != "failed" {
		t.Fatalf("perf %v", perf)
	}
}

func TestRunPerfOptionRules(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out")
	budget, _ := perfstats.ParseBudgets("fps.p10=50")
	for _, c := range []struct {
		name string
		o    RunOptions
		want string
	}{
		{"budget without perf", RunOptions{CaseName: "c", ArtifactsDir: dir, PerfBudget: budget}, "needs --perf"},
		{"perf without artifacts", RunOptions{CaseName: "c", Perf: []string{"FPS"}}, "needs --artifacts"},
		{"perf with no-wait", RunOptions{CaseName: "c", ArtifactsDir: dir, Perf: []string{"FPS"}, NoWait: true}, "--no-wait"},
		{"budget on an item not recorded", RunOptions{CaseName: "c", ArtifactsDir: dir, Perf: []string{"CPU"}, PerfBudget: budget, PerfSessions: sessions.PerfRecorder{}}, "add FPS to --perf"},
	} {
		err := c.o.Validate()
		if fault.CodeOf(err) != fault.CodeInvalidOption || fault.KindOf(err) != fault.Invalid || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// A caller that asks for a recording must say what drives it.
	o0 := RunOptions{CaseName: "c", ArtifactsDir: dir, Perf: []string{"CPU"}}
	if err := o0.Validate(); fault.KindOf(err) != fault.Internal {
		t.Errorf("no PerfSessions: %v", err)
	}
	// Neither option: nothing changes.
	o := RunOptions{CaseName: "c", ArtifactsDir: dir}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestRunPerfTimeoutStopsTheSessionByID(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("slow", hangSteps)
	dir := filepath.Join(t.TempDir(), "out")
	o := perfRunOptions(t, "slow", dir, "CPU", "cpu.max=80")
	o.RunTimeout = 400 * time.Millisecond
	rep := RunReplay(context.Background(), p.d, o)
	if kindOf(rep.Err) != fault.Timeout || rep.ErrorCode != fault.CodeRunTimeout {
		t.Fatalf("kind %v code %s", kindOf(rep.Err), rep.ErrorCode)
	}
	perf := perfOf(t, rep)
	noLivePerf(t, p, perf["sessionId"].(string))
	checkPerfEvidence(t, dir, rep, perf)
}

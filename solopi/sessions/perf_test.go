package sessions

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/perfstats"
	"github.com/solopi-dev/solopi/sim"
)

func perfStart(f *simPhone) (*StartResult, error) {
	return StartPerformance(context.Background(), f.device(), PerfStartOptions{TargetPackage: "com.example.counter", Items: []string{"CPU", "FPS"}, SessionTimings: ssFast})
}

func TestPerfListAndCurrent(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	m, keys, err := PerfItems(context.Background(), f.device())
	ssExpect(t, "perf-list", m, err, passed)
	if !slices.Contains(keys, "CPU") || !slices.Contains(keys, "FPS") {
		t.Fatalf("keys = %v", keys)
	}
	cur, err := PerfCurrent(context.Background(), f.device())
	ssExpect(t, "perf-current", cur, err, passed)
	if ParseItems(" CPU, ,FPS,CPU ") == nil || strings.Join(ParseItems(" CPU, ,FPS,CPU "), ",") != "CPU,FPS" {
		t.Fatalf("ParseItems = %v", ParseItems(" CPU, ,FPS,CPU "))
	}
}

func TestPerfStartStopAndPull(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	res, err := ssOut(perfStart(f))
	m := ssExpect(t, "perf-start", res, err, passed)
	id := m["sessionId"].(string)
	if m["state"] != "recording" || f.mutationCount("mode=normal", "action=start", "targetApp=com.example.counter", "items=CPU%2CFPS", "sessionId="+id) != 1 {
		t.Fatalf("start = %v, %v", m, f.dev.Mutations())
	}
	out := filepath.Join(t.TempDir(), "perf")
	res, err = ssOut(StopPerformance(context.Background(), f.device(), PerfStopOptions{SessionID: id, Output: out, SessionTimings: ssFast}))
	m = ssExpect(t, "perf-stop", res, err, passed)
	if m["state"] != "stopped" || m["artifacts"].(map[string]any)["performance"] != out ||
		m["artifacts"].(map[string]any)["performanceDirectory"].(map[string]any)["path"] != out {
		t.Fatalf("stop = %v", m)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) < 2 {
		t.Fatalf("pulled %d files, want the session's CSVs", len(entries))
	}
	siblings, _ := os.ReadDir(filepath.Dir(out))
	if len(siblings) != 1 {
		t.Fatalf("temporary directories left next to the output: %v", siblings)
	}
	// The pulled directory is what perf-analyze reads.
	a, err := perfstats.AnalyzePerformance(context.Background(), perfstats.PerfAnalyzeOptions{Input: out})
	if err != nil || len(a.Metrics) < 2 || a.Jank.FPSBelow30Share == nil {
		t.Fatalf("analyze the pulled directory: %v %+v", err, a)
	}
}

func TestPerfStartRefusals(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	_, err := StartPerformance(context.Background(), f.device(), PerfStartOptions{Global: true, Items: []string{"CPU", "GPU"}, SessionTimings: ssFast})
	m := ssExpect(t, "perf-start", nil, err, fault.Failed)
	ssWantCode(t, m, fault.CodeUnsupportedItems)
	if len(f.dev.Mutations()) != 0 {
		t.Fatalf("unsupported items still started a session")
	}
	for _, o := range []PerfStartOptions{{Items: []string{"CPU"}}, {TargetPackage: "x.y", Global: true, Items: []string{"CPU"}}, {Global: true}} {
		if o.Validate() == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	// The adb permission is gone: the recording fails to start.
	if err := f.dev.App.SetPermission("adb", false); err != nil {
		t.Fatal(err)
	}
	res, err := ssOut(perfStart(f))
	if m := ssExpect(t, "perf-start", res, err, fault.Failed); m["state"] != "failed" {
		t.Fatalf("failed start = %v", m)
	}
	if f.mutationCount("targetApp=-") != 0 {
		t.Fatalf("unexpected global start")
	}
}

func TestPerfStopRetriesAtMostThreeTimes(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	res, err := ssOut(perfStart(f))
	id := ssExpect(t, "perf-start", res, err, passed)["sessionId"].(string)
	f.dev.App.SetPerfCleanupIncomplete(2)
	res, err = ssOut(StopPerformance(context.Background(), f.device(), PerfStopOptions{SessionID: id, SessionTimings: ssFast}))
	m := ssExpect(t, "perf-stop", res, err, passed)
	if m["stopRetries"] != float64(2) || f.mutationCount("action=stop", "sessionId="+id) != 3 {
		t.Fatalf("stop with 2 incomplete cleanups = %v (stops %d)", m, f.mutationCount("action=stop"))
	}

	g := newSimPhone(t)
	res, err = ssOut(perfStart(g))
	id = ssExpect(t, "perf-start", res, err, passed)["sessionId"].(string)
	g.dev.App.SetPerfCleanupIncomplete(10)
	res, err = ssOut(StopPerformance(context.Background(), g.device(), PerfStopOptions{SessionID: id, SessionTimings: ssFast}))
	m = ssExpect(t, "perf-stop", res, err, fault.Failed)
	ssWantCode(t, m, fault.CodeStopRetryLimit)
	if g.mutationCount("action=stop") != 4 {
		t.Fatalf("sent %d stops, want 1 + 3 retries", g.mutationCount("action=stop"))
	}
}

// slowPermission makes the permission request of a performance start take
// 30 s of device time: long enough to act while the session is starting;
// a stop meanwhile waits for it (SoloPi cannot cancel the request).
func slowPermission(f *simPhone) { f.dev.App.SetPermissionDialogDelay(30 * time.Second) }

func TestPerfStopWhileStartingFails(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	slowPermission(f)
	f.otherClient("performance", "mode", "normal", "action", "start", "sessionId", "mine", "targetApp", "com.example.counter", "items", "CPU")
	res, err := ssOut(StopPerformance(context.Background(), f.device(), PerfStopOptions{SessionID: "mine", SessionTimings: ssFast}))
	m := ssExpect(t, "perf-stop", res, err, fault.Failed)
	if m["state"] != "failed" || !strings.Contains(m["error"].(string), "cancelled before recording") {
		t.Fatalf("stop while starting = %v", m)
	}
}

func TestPerfStopRecoversWithoutPreflight(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	res, err := ssOut(perfStart(f))
	id := ssExpect(t, "perf-start", res, err, passed)["sessionId"].(string)
	f.dev.RefuseDials(3) // the preflight query and its two retries
	res, err = ssOut(StopPerformance(context.Background(), f.device(), PerfStopOptions{SessionID: id, SessionTimings: ssFast}))
	m := ssExpect(t, "perf-stop", res, err, passed)
	if m["recoveredWithoutPreflight"] != true || f.mutationCount("action=stop", "sessionId="+id) != 1 {
		t.Fatalf("blind stop = %v", m)
	}
}

func TestPerfPullRefusesForeignPaths(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	res, err := ssOut(perfStart(f))
	id := ssExpect(t, "perf-start", res, err, passed)["sessionId"].(string)
	f.answerFault(sim.AnswerFault{Action: "performance", Query: map[string]string{"mode": "status"}, When: map[string]any{"state": "stopped"},
		Set: map[string]any{"outputPath": "/sdcard/solopi/records/performance-someone-else"}})
	out := filepath.Join(t.TempDir(), "perf")
	res, err = ssOut(StopPerformance(context.Background(), f.device(), PerfStopOptions{SessionID: id, Output: out, SessionTimings: ssFast}))
	ssWantCode(t, ssExpect(t, "perf-stop", res, err, fault.Transport), fault.CodeUnsafeDevicePath)
	if _, err := os.Stat(out); err == nil {
		t.Fatalf("a foreign directory was published")
	}
	// An existing output is refused before the device is contacted.
	os.Mkdir(out, 0o755)
	n := len(f.dev.Mutations())
	res, err = ssOut(StopPerformance(context.Background(), f.device(), PerfStopOptions{SessionID: id, Output: out, SessionTimings: ssFast}))
	ssWantCode(t, ssExpect(t, "perf-stop", res, err, fault.Invalid), fault.CodeOutputExists)
	if len(f.dev.Mutations()) != n {
		t.Fatalf("the device was contacted although the output exists")
	}
}

func TestPerfValidator(t *testing.T) {
	t.Parallel()
	ssValidatorCases(t, validatePerformance, []ssCase{
		{"idle", `{"success":true,"kind":"performance","state":"idle","recording":false,"active":false,"terminal":false}`, true},
		{"retryable stopping", `{"success":true,"kind":"performance","sessionId":"a","state":"stopping","recording":false,"active":true,"terminal":false,"stopRetryable":true}`, true},
		{"retryable recording", `{"success":true,"kind":"performance","sessionId":"a","state":"recording","recording":true,"active":true,"terminal":false,"stopRetryable":true}`, false},
		{"recording flag", `{"success":true,"kind":"performance","sessionId":"a","state":"recording","recording":false,"active":true,"terminal":false}`, false},
		{"no id", `{"success":true,"kind":"performance","state":"stopped","recording":false,"active":false,"terminal":true}`, false},
		{"retryable not bool", `{"success":true,"kind":"performance","sessionId":"a","state":"stopping","recording":false,"active":true,"terminal":false,"stopRetryable":"yes"}`, false},
	})
	ssValidatorCases(t, validateCurrent, []ssCase{
		{"ok", `{"sampledAt":5,"values":{"CPU":"1"}}`, true},
		{"zero sampledAt", `{"sampledAt":0,"values":{}}`, false},
		{"number value", `{"sampledAt":5,"values":{"CPU":1}}`, false},
	})
}

func TestPerfStartTimeoutStopsOurSession(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	slowPermission(f)
	res, err := ssOut(StartPerformance(context.Background(), f.device(), PerfStartOptions{Global: true, Items: []string{"CPU"},
		SessionTimings: SessionTimings{Timeout: 60e6, Interval: 5e6}}))
	m := ssExpect(t, "perf-start", res, err, fault.Timeout)
	cl := m["cleanup"].(map[string]any)
	if m["phase"] != "performance-start" || cl["attempted"] != true || cl["terminalState"] != "failed" ||
		f.mutationCount("mode=normal", "action=stop", "sessionId="+m["sessionId"].(string)) != 1 {
		t.Fatalf("timeout cleanup = %v", m)
	}
}

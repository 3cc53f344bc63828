package sessions

import (
	"context"
	"testing"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
)

func displayStart(f *simPhone) (*StartResult, error) {
	return StartPerfDisplay(context.Background(), f.device(), PerfStartOptions{TargetPackage: "com.example.counter", Items: []string{"CPU"}, SessionTimings: ssFast})
}

func TestPerfDisplayStartStatusStop(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	res, err := ssOut(displayStart(f))
	m := ssExpect(t, "perf-display-start", res, err, passed)
	id := m["sessionId"].(string)
	if m["state"] != "running" || f.mutationCount("mode=display", "action=start", "sessionId="+id) != 1 {
		t.Fatalf("start = %v", m)
	}
	res, err = ssOut(PerfDisplayStatus(context.Background(), f.device(), id))
	if m := ssExpect(t, "perf-display-status", res, err, passed); len(m["values"].(map[string]any)) == 0 {
		t.Fatalf("status = %v", m)
	}
	res, err = ssOut(StopPerfDisplay(context.Background(), f.device(), id, ssFast))
	if m := ssExpect(t, "perf-display-stop", res, err, passed); m["state"] != "stopped" {
		t.Fatalf("stop = %v", m)
	}
}

func TestPerfDisplayOfAnotherOwnerCannotBeStoppedOrRead(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	f.otherClient("performance", "mode", "display", "action", "start", "sessionId", "other-owner", "targetApp", "com.example.counter", "items", "CPU")
	waitState(t, f, "performance", device.P("mode", "display", "action", "status"), "running")
	res, err := ssOut(PerfDisplayStatus(context.Background(), f.device(), "mine"))
	m := ssExpect(t, "perf-display-status", res, err, fault.Failed)
	ssWantCode(t, m, fault.CodeSessionMismatch)
	latest := m["latestPerformanceDisplay"].(map[string]any)
	if len(latest["values"].(map[string]any)) != 0 || latest["valuesWithheld"] != true {
		t.Fatalf("another owner's values were shown: %v", latest)
	}
	res, err = ssOut(StopPerfDisplay(context.Background(), f.device(), "mine", ssFast))
	m = ssExpect(t, "perf-display-stop", res, err, fault.Failed)
	ssWantCode(t, m, fault.CodeSessionMismatch)
	if st := f.state("performance", "mode", "display", "action", "status"); f.mutationCount("action=stop") != 0 || st != "running" {
		t.Fatalf("another owner's lease was stopped")
	}
	// A new monitor is refused while that lease is active.
	res, err = ssOut(displayStart(f))
	m = ssExpect(t, "perf-display-start", res, err, fault.Failed)
	ssWantCode(t, m, fault.CodeSessionActive)
	// Under solopi-ai's key too, and withheld there as well.
	for _, key := range []string{"latestPerformanceDisplay", "performanceDisplay"} {
		if v, _ := m[key].(map[string]any); v == nil || v["valuesWithheld"] != true {
			t.Fatalf("%s: %v", key, m[key])
		}
	}
}

func TestPerfDisplayRefusedWhileRecordingAndEchoChecked(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	res, err := ssOut(perfStart(f))
	ssExpect(t, "perf-start", res, err, passed)
	res, err = ssOut(displayStart(f))
	ssWantCode(t, ssExpect(t, "perf-display-start", res, err, fault.Failed), fault.CodeSessionActive)
	if f.mutationCount("mode=display") != 0 {
		t.Fatalf("a display start was sent while a recording owns the provider")
	}

	// The device echoes other items than the ones started.
	g := newSimPhone(t)
	g.answerFault(sim.AnswerFault{Action: "performance", Query: map[string]string{"mode": "display"}, When: map[string]any{"state": "running"},
		Set: map[string]any{"items": []any{"Memory"}}})
	res, err = ssOut(displayStart(g))
	m := ssExpect(t, "perf-display-start", res, err, fault.Transport)
	if g.mutationCount("mode=display", "action=stop", "sessionId="+m["sessionId"].(string)) != 1 {
		t.Fatalf("a lease with the wrong items was not stopped: %v", m)
	}
}

func TestPerfDisplayValidator(t *testing.T) {
	t.Parallel()
	ssValidatorCases(t, validateDisplay, []ssCase{
		{"idle", `{"success":true,"kind":"performance-display","state":"idle","running":false,"active":false,"terminal":false,"items":[],"ownedDisplayNames":[],"values":{},"sampledAt":1}`, true},
		{"value not owned", `{"success":true,"kind":"performance-display","sessionId":"a","state":"running","running":true,"active":true,"terminal":false,"items":["CPU"],"ownedDisplayNames":["CPU"],"values":{"Memory":"1"},"sampledAt":1,"startedAt":1}`, false},
		{"duplicate item", `{"success":true,"kind":"performance-display","sessionId":"a","state":"running","running":true,"active":true,"terminal":false,"items":["CPU","CPU"],"ownedDisplayNames":[],"values":{},"sampledAt":1,"startedAt":1}`, false},
		{"running with finishedAt", `{"success":true,"kind":"performance-display","sessionId":"a","state":"running","running":true,"active":true,"terminal":false,"items":["CPU"],"ownedDisplayNames":[],"values":{},"sampledAt":1,"startedAt":1,"finishedAt":2}`, false},
		{"stopped with error", `{"success":true,"kind":"performance-display","sessionId":"a","state":"stopped","running":false,"active":false,"terminal":true,"items":["CPU"],"ownedDisplayNames":[],"values":{},"sampledAt":1,"startedAt":1,"finishedAt":2,"durationMs":1,"error":"x"}`, false},
		{"idle with items", `{"success":true,"kind":"performance-display","state":"idle","running":false,"active":false,"terminal":false,"items":["CPU"],"ownedDisplayNames":[],"values":{},"sampledAt":1}`, false},
		{"no sampledAt", `{"success":true,"kind":"performance-display","state":"idle","running":false,"active":false,"terminal":false,"items":[],"ownedDisplayNames":[],"values":{}}`, false},
	})
}

func TestPerfDisplayFailedStartIsExit2(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	// SoloPi's own performance window holds the provider.
	f.dev.App.SetManualPerformanceWindow(true)
	res, err := ssOut(displayStart(f))
	m := ssExpect(t, "perf-display-start", res, err, fault.Failed)
	if m["state"] != "failed" || m["error"] != "Another performance session is already running" {
		t.Fatalf("failed display = %v", m)
	}
}

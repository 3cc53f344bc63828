package sessions

import (
	"context"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
)

func stressStart(f *simPhone, ctx context.Context, t SessionTimings) (*StartResult, error) {
	return StartStress(ctx, f.device(), StressOptions{CPUCount: 2, CPUPercent: 50, MemoryMB: 128, DurationSec: 3600, SessionTimings: t})
}

func TestStressStartStatusStop(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	res, err := ssOut(stressStart(f, context.Background(), ssFast))
	m := ssExpect(t, "stress-start", res, err, passed)
	id := m["sessionId"].(string)
	if m["state"] != "running" || f.mutationCount("action=start", "sessionId="+id, "cpuCount=2", "cpuPercent=50", "memory=128", "durationSec=3600") != 1 {
		t.Fatalf("start = %v, %v", m, f.dev.Mutations())
	}
	res, err = ssOut(StressStatus(context.Background(), f.device(), "other"))
	ssWantCode(t, ssExpect(t, "stress-status", res, err, fault.Failed), fault.CodeSessionMismatch)
	res, err = ssOut(StopStress(context.Background(), f.device(), id, ssFast))
	if m := ssExpect(t, "stress-stop", res, err, passed); m["state"] != "stopped" {
		t.Fatalf("stop = %v", m)
	}
}

func TestStressAutoZeroIsObservedAsStopped(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	res, err := ssOut(StartStress(context.Background(), f.device(), StressOptions{CPUCount: 2, CPUPercent: 50, DurationSec: 30, SessionTimings: ssFast}))
	id := ssExpect(t, "stress-start", res, err, passed)["sessionId"].(string)
	// The device removes the load on its own once durationSec elapsed.
	waitState(t, f, "stress", device.P("action", "status"), "stopped")
	res, err = ssOut(StopStress(context.Background(), f.device(), id, ssFast))
	m := ssExpect(t, "stress-stop", res, err, passed)
	if m["state"] != "stopped" || m["alreadyTerminal"] != true || f.mutationCount("action=stop") != 0 {
		t.Fatalf("auto-stopped session = %v (stops %d)", m, f.mutationCount("action=stop"))
	}
}

func TestStressIsNeverLeftRunning(t *testing.T) {
	t.Parallel()
	// Failure (powerSave not allowed): the stop is still attempted for our
	// sessionId.
	f := newSimPhone(t)
	if err := f.dev.App.SetPermission("powerSave", false); err != nil {
		t.Fatal(err)
	}
	res, err := ssOut(stressStart(f, context.Background(), ssFast))
	m := ssExpect(t, "stress-start", res, err, fault.Failed)
	if cl, _ := m["cleanup"].(map[string]any); cl["attempted"] != true || cl["terminalState"] != "failed" || f.mutationCount("action=stop", "sessionId="+m["sessionId"].(string)) != 1 {
		t.Fatalf("failure without cleanup evidence: %v", m)
	}
	// Timeout: stopped.
	g := newSimPhone(t)
	g.slowStarts()
	res, err = ssOut(stressStart(g, context.Background(), SessionTimings{Timeout: 60 * time.Millisecond, Interval: 5 * time.Millisecond}))
	m = ssExpect(t, "stress-start", res, err, fault.Timeout)
	if st := g.state("stress", "action", "status"); g.mutationCount("action=stop", "sessionId="+m["sessionId"].(string)) != 1 || st != "stopped" {
		t.Fatalf("timeout left stress %v: %v", st, m)
	}
	// Interrupt: stopped.
	h := newSimPhone(t)
	h.slowStarts()
	res, err = ssOut(stressStart(h, h.cancelOn("action=start"), ssFast))
	m = ssExpect(t, "stress-start", res, err, fault.Interrupted)
	if st := h.state("stress", "action", "status"); st != "stopped" || m["cleanup"].(map[string]any)["success"] != true {
		t.Fatalf("interrupt left stress %v: %v", st, m)
	}
	// A contract violation after the start: still stopped.
	k := newSimPhone(t)
	k.answerFault(sim.AnswerFault{Action: "stress", Query: map[string]string{"action": "status"},
		When: map[string]any{"state": "running"}, Set: map[string]any{"memory": 4096}})
	res, err = ssOut(stressStart(k, context.Background(), ssFast))
	m = ssExpect(t, "stress-start", res, err, fault.Transport)
	if k.mutationCount("action=stop") != 1 {
		t.Fatalf("a contract violation left the load running: %v", m)
	}
}

func TestStressLocalValidation(t *testing.T) {
	t.Parallel()
	for _, o := range []StressOptions{{CPUCount: 1}, {CPUPercent: 5}, {}, {MemoryMB: 4096}, {MemoryMB: 10, DurationSec: 4000}, {CPUCount: 1, CPUPercent: 101}} {
		if e := fault.From(o.Validate()); o.Validate() == nil || e.Kind != fault.Invalid {
			t.Errorf("%+v accepted", o)
		}
	}
	f := newSimPhone(t)
	_, err := StartStress(context.Background(), f.device(), StressOptions{CPUCount: 9, CPUPercent: 10, SessionTimings: ssFast})
	if e := fault.From(err); e.Kind != fault.Invalid || len(f.dev.Mutations()) != 0 {
		t.Fatalf("9 CPUs on an 8-CPU device: %v, mutations %v", err, f.dev.Mutations())
	}
}

func TestStressValidator(t *testing.T) {
	t.Parallel()
	ssValidatorCases(t, validateStress, []ssCase{
		{"idle", `{"success":true,"kind":"stress","state":"idle","active":false,"terminal":false,"cpuCount":0,"cpuPercent":0,"memory":0}`, true},
		{"running", `{"success":true,"kind":"stress","sessionId":"a","state":"running","active":true,"terminal":false,"cpuCount":1,"cpuPercent":20,"memory":0,"durationSec":60}`, true},
		{"no id", `{"success":true,"kind":"stress","state":"running","active":true,"terminal":false,"cpuCount":1,"cpuPercent":20,"memory":0}`, false},
		{"percent", `{"success":true,"kind":"stress","sessionId":"a","state":"running","active":true,"terminal":false,"cpuCount":1,"cpuPercent":120,"memory":0}`, false},
		{"missing memory", `{"success":true,"kind":"stress","sessionId":"a","state":"running","active":true,"terminal":false,"cpuCount":1,"cpuPercent":20}`, false},
		{"terminal flag", `{"success":true,"kind":"stress","sessionId":"a","state":"stopped","active":false,"terminal":false,"cpuCount":1,"cpuPercent":20,"memory":0}`, false},
	})
}

// waitState polls a session status query until the device shows state.
func waitState(t *testing.T, f *simPhone, action string, q device.Params, state string) {
	t.Helper()
	err := device.PollUntil(context.Background(), device.PollOptions{Timeout: 10 * time.Second, Interval: 5 * time.Millisecond}, func(ctx context.Context) (bool, error) {
		o, err := f.d.Query(ctx, action, q)
		return err == nil && o.Str("state") == state, err
	})
	if err != nil {
		t.Fatalf("%s never reached %s: %v", action, state, err)
	}
}

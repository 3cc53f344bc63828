package sessions

import (
	"context"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
)

func stressStart(f *sessFake, ctx context.Context, t SessionTimings) (*SessionResult, error) {
	return StartStress(ctx, f.device(), StressOptions{CPUCount: 2, CPUPercent: 50, MemoryMB: 128, DurationSec: 30, SessionTimings: t})
}

func TestStressStartStatusStop(t *testing.T) {
	f := newSessFake(t)
	res, err := stressStart(f, context.Background(), ssFast)
	m := ssExpect(t, "stress-start", res, err, passed)
	id := m["sessionId"].(string)
	if m["state"] != "running" || f.mutationCount("action=start", "sessionId="+id, "cpuCount=2", "cpuPercent=50", "memory=128", "durationSec=30") != 1 {
		t.Fatalf("start = %v, %v", m, f.mutations)
	}
	res, err = StressStatus(context.Background(), f.device(), "other")
	ssWantCode(t, ssExpect(t, "stress-status", res, err, fault.Failed), CodeSessionMismatch)
	res, err = StopStress(context.Background(), f.device(), id, ssFast)
	if m := ssExpect(t, "stress-stop", res, err, passed); m["state"] != "stopped" {
		t.Fatalf("stop = %v", m)
	}
}

func TestStressAutoZeroIsObservedAsStopped(t *testing.T) {
	f := newSessFake(t)
	f.stressPlan = "autostop"
	res, err := stressStart(f, context.Background(), ssFast)
	id := ssExpect(t, "stress-start", res, err, passed)["sessionId"].(string)
	// The device removes the load on its own (durationSec elapsed).
	for range 3 {
		f.mu.Lock()
		f.tick("stress")
		f.mu.Unlock()
	}
	res, err = StopStress(context.Background(), f.device(), id, ssFast)
	m := ssExpect(t, "stress-stop", res, err, passed)
	if m["state"] != "stopped" || m["alreadyTerminal"] != true || f.mutationCount("action=stop") != 0 {
		t.Fatalf("auto-stopped session = %v (stops %d)", m, f.mutationCount("action=stop"))
	}
}

func TestStressIsNeverLeftRunning(t *testing.T) {
	// Failure: the stop is still attempted for our sessionId.
	f := newSessFake(t)
	f.stressPlan = "fail"
	res, err := stressStart(f, context.Background(), ssFast)
	m := ssExpect(t, "stress-start", res, err, fault.Failed)
	if cl, _ := m["cleanup"].(map[string]any); cl["attempted"] != true || cl["terminalState"] != "failed" || f.mutationCount("action=stop", "sessionId="+m["sessionId"].(string)) != 1 {
		t.Fatalf("failure without cleanup evidence: %v", m)
	}
	// Timeout: stopped.
	g := newSessFake(t)
	g.stressPlan = "hang"
	res, err = stressStart(g, context.Background(), SessionTimings{Timeout: 60 * time.Millisecond, Interval: 5 * time.Millisecond})
	m = ssExpect(t, "stress-start", res, err, fault.Timeout)
	if g.mutationCount("action=stop", "sessionId="+m["sessionId"].(string)) != 1 || g.snaps["stress"]["state"] != "stopped" {
		t.Fatalf("timeout left stress %v: %v", g.snaps["stress"]["state"], m)
	}
	// Interrupt: stopped.
	h := newSessFake(t)
	h.stressPlan = "hang"
	res, err = stressStart(h, ssCancelOn(t, h, "action=start"), ssFast)
	m = ssExpect(t, "stress-start", res, err, fault.Interrupted)
	if h.snaps["stress"]["state"] != "stopped" || m["cleanup"].(map[string]any)["success"] != true {
		t.Fatalf("interrupt left stress %v: %v", h.snaps["stress"]["state"], m)
	}
	// A contract violation after the start: still stopped.
	k := newSessFake(t)
	k.stressPlan = "hang"
	k.afterStart["stress"] = []func(map[string]any){func(s map[string]any) {}, func(s map[string]any) { s["memory"] = 4096 }}
	res, err = stressStart(k, context.Background(), ssFast)
	m = ssExpect(t, "stress-start", res, err, fault.Transport)
	if k.mutationCount("action=stop") != 1 {
		t.Fatalf("a contract violation left the load running: %v", m)
	}
}

func TestStressLocalValidation(t *testing.T) {
	for _, o := range []StressOptions{{CPUCount: 1}, {CPUPercent: 5}, {}, {MemoryMB: 4096}, {MemoryMB: 10, DurationSec: 4000}, {CPUCount: 1, CPUPercent: 101}} {
		if e := fault.From(o.Validate()); o.Validate() == nil || e.Kind != fault.Invalid {
			t.Errorf("%+v accepted", o)
		}
	}
	f := newSessFake(t)
	_, err := StartStress(context.Background(), f.device(), StressOptions{CPUCount: 9, CPUPercent: 10, SessionTimings: ssFast})
	if e := fault.From(err); e.Kind != fault.Invalid || len(f.mutations) != 0 {
		t.Fatalf("9 CPUs on an 8-CPU device: %v, mutations %v", err, f.mutations)
	}
}

func TestStressValidator(t *testing.T) {
	ssValidatorCases(t, validateStress, []ssCase{
		{"idle", `{"success":true,"kind":"stress","state":"idle","active":false,"terminal":false,"cpuCount":0,"cpuPercent":0,"memory":0}`, true},
		{"running", `{"success":true,"kind":"stress","sessionId":"a","state":"running","active":true,"terminal":false,"cpuCount":1,"cpuPercent":20,"memory":0,"durationSec":60}`, true},
		{"no id", `{"success":true,"kind":"stress","state":"running","active":true,"terminal":false,"cpuCount":1,"cpuPercent":20,"memory":0}`, false},
		{"percent", `{"success":true,"kind":"stress","sessionId":"a","state":"running","active":true,"terminal":false,"cpuCount":1,"cpuPercent":120,"memory":0}`, false},
		{"missing memory", `{"success":true,"kind":"stress","sessionId":"a","state":"running","active":true,"terminal":false,"cpuCount":1,"cpuPercent":20}`, false},
		{"terminal flag", `{"success":true,"kind":"stress","sessionId":"a","state":"stopped","active":false,"terminal":false,"cpuCount":1,"cpuPercent":20,"memory":0}`, false},
	})
}

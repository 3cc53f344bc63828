package suite

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/testwait"
	"github.com/solopi-dev/solopi/sim/adbd"
	"github.com/solopi-dev/solopi/solopi/devicelock"
	"github.com/solopi-dev/solopi/solopi/replay"
	"github.com/solopi-dev/solopi/suitereport"
)

// A phone that fails the readiness checks is left out with its reason; the
// suite errors only when no phone is usable.
func TestPhonesFailingTheirChecksAreLeftOut(t *testing.T) {
	t.Parallel()
	r := newRig(t, 3, false)
	ctx := context.Background()
	if err := r.devs[1].App.SetPermission("accessibility", false); err != nil {
		t.Fatal(err)
	}
	o := r.options(items(t, "ready", 100, 100, 100))
	rep, err := Run(ctx, o)
	if err != nil || rep.Failure() != nil {
		t.Fatalf("%v %v", err, rep.Failure())
	}
	left := rep.Devices[1]
	if left.Usable || left.LeftOut == nil || left.LeftOut.Code != fault.CodeDeviceNotReady || len(left.Timeline) != 0 {
		t.Fatalf("sim-0002 %+v", left)
	}
	for _, c := range rep.Cases {
		if c.Attempts[0].Device == "sim-0002" {
			t.Errorf("%s ran on the phone left out", c.Name)
		}
	}
	for _, d := range []int{0, 2} {
		if err := r.devs[d].App.SetPermission("accessibility", false); err != nil {
			t.Fatal(err)
		}
	}
	_, err = Run(ctx, o)
	e := fault.From(err)
	if e.Code != fault.CodeNoUsableDevice || e.Kind != fault.Failed {
		t.Fatalf("no usable phone: %v", err)
	}
	if devs, _ := e.Details["devices"].([]map[string]any); len(devs) != 3 || devs[0]["errorCode"] != fault.CodeDeviceNotReady {
		t.Fatalf("devices %v", e.Details["devices"])
	}
	// One phone: its own error.
	o.Phones = r.phones[:1]
	if _, err := Run(ctx, o); fault.CodeOf(err) != fault.CodeDeviceNotReady {
		t.Fatalf("one phone: %v", err)
	}
}

// A phone that goes offline in the middle of a replay is retired and its
// case runs again on another phone as an infrastructure failure: no case
// is lost.
func TestDroppedPhoneLosesNoCase(t *testing.T) {
	t.Parallel()
	r := newRig(t, 3, true)
	ctx := context.Background()
	const victim = "sim-0002"
	var once sync.Once
	o := r.options(items(t, "drop", 2000, 2000, 2000, 2000, 2000, 2000, 2000, 2000, 2000))
	o.ArtifactsRoot = t.TempDir()
	o.Progress = func(e Event) {
		if e.Serial != victim || e.Phase != "start" || e.Attempt != 1 {
			return
		}
		// The victim's first case: take the phone offline once its
		// replay is running.
		once.Do(func() {
			go func() {
				d := r.localOf(victim)
				testwait.Until(t, 30*time.Second, "a replay running on "+victim, func() bool {
					st, err := replay.FetchReplayStatus(ctx, d)
					return err == nil && st.Active
				})
				if err := r.farm.Server().SetState(victim, adbd.StateOffline); err != nil {
					t.Error(err)
				}
			}()
		})
	}
	rep, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Counts.Passed != 9 || rep.Failure() != nil {
		t.Fatalf("counts %+v failure %v", rep.Counts, rep.Failure())
	}
	dropped := rep.Devices[1]
	if dropped.Retired == nil || dropped.Retired.Code != fault.CodePhoneDropped {
		t.Fatalf("%s %+v", victim, dropped)
	}
	moved := 0
	for _, c := range rep.Cases {
		if len(c.Attempts) == 2 {
			a, b := c.Attempts[0], c.Attempts[1]
			if a.Device != victim || a.Verdict != suitereport.Error || b.Device == victim || b.Verdict != suitereport.Passed || a.EvidenceDir == b.EvidenceDir {
				t.Errorf("%s attempts %+v", c.Name, c.Attempts)
			}
			moved++
		}
	}
	if moved != 1 {
		t.Fatalf("%d cases moved off the dropped phone, want 1", moved)
	}
	last := dropped.Timeline[len(dropped.Timeline)-1]
	if last.Verdict != suitereport.Error {
		t.Fatalf("the dropped phone's last slot %+v", last)
	}
}

// Two suites given the same phones never share one: started together they
// share the phones out; one that finds them all busy waits for them, or,
// without a wait, fails device_busy naming the holder.
func TestTwoSuitesNeverShareAPhone(t *testing.T) {
	t.Parallel()
	r := newRig(t, 2, false)
	ctx := context.Background()
	locks := &devicelock.Locker{Dir: t.TempDir()}
	options := func(prefix string, wait time.Duration) Options {
		o := r.options(items(t, prefix, 500, 500, 500, 500))
		o.Locker, o.DeviceWait = locks, wait
		return o
	}
	type result struct {
		rep *suitereport.Report
		err error
	}
	run := func(o Options, ch chan result) { rep, err := Run(ctx, o); ch <- result{rep, err} }
	apart := func(a, b *suitereport.Report) {
		t.Helper()
		for i := range r.phones {
			x, y := a.Devices[i].Timeline, b.Devices[i].Timeline
			if len(x) == 0 || len(y) == 0 {
				continue
			}
			if x[0].StartedAt.After(y[0].StartedAt) {
				x, y = y, x
			}
			if !x[len(x)-1].FinishedAt.Before(y[0].StartedAt) {
				t.Errorf("%s: the suites overlap", r.phones[i].Serial)
			}
		}
	}
	both := make(chan result, 2)
	go run(options("first", time.Minute), both)
	go run(options("second", time.Minute), both)
	a, b := <-both, <-both
	if a.err != nil || b.err != nil || a.rep.Failure() != nil || b.rep.Failure() != nil {
		t.Fatalf("together: %v %v", a.err, b.err)
	}
	apart(a.rep, b.rep)

	// The first holds both phones; the second waits and runs after it.
	var once sync.Once
	holding := make(chan struct{})
	ready := 0
	var mu sync.Mutex
	first := options("hold", 0)
	first.Progress = func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		if e.Phase == "ready" {
			ready++
		}
		if ready == 2 {
			once.Do(func() { close(holding) })
		}
	}
	firstDone := make(chan result, 1)
	go run(first, firstDone)
	<-holding
	second := make(chan result, 1)
	go run(options("wait", time.Minute), second)
	a, b = <-firstDone, <-second
	if a.err != nil || b.err != nil || a.rep.Failure() != nil || b.rep.Failure() != nil {
		t.Fatalf("waiting: %v %v", a.err, b.err)
	}
	for i := range r.phones {
		if len(b.rep.Devices[i].Timeline) == 0 && len(a.rep.Devices[i].Timeline) > 0 && b.rep.Devices[i].LeftOut != nil {
			t.Errorf("the waiting suite left %s out: %v", r.phones[i].Serial, b.rep.Devices[i].LeftOut)
		}
	}
	apart(a.rep, b.rep)

	held, err := locks.Acquire(ctx, "sim-0001", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	o := options("busy", 0)
	o.Phones = r.phones[:1]
	_, err = Run(ctx, o)
	if e := fault.From(err); e.Code != fault.CodeDeviceBusy || e.Details["holder"] == nil {
		t.Fatalf("busy phone: %v", err)
	}
	// With another phone free the suite does not wait for the busy one.
	rep, err := Run(ctx, options("free", time.Hour))
	if err != nil || rep.Failure() != nil {
		t.Fatalf("one phone free: %v %v", err, rep.Failure())
	}
	if d := rep.Devices[0]; d.LeftOut == nil || d.LeftOut.Code != fault.CodeDeviceBusy || len(rep.Devices[1].Timeline) != 4 {
		t.Fatalf("devices %+v", rep.Devices)
	}
}

// Ctrl-C cancels exactly the running replays, by their runIds, on every
// phone, and keeps the finished results.
func TestInterruptCancelsTheRunningReplays(t *testing.T) {
	t.Parallel()
	r := newRig(t, 2, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	its := []Item{{Name: "quick", Case: caseOf(t, "quick", 100)}}
	its = append(its, items(t, "long", 600000, 600000, 600000)...)
	o := r.options(its)
	o.ArtifactsRoot = t.TempDir()
	var mu sync.Mutex
	finished := 0
	o.Progress = func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		if e.Phase == "finish" {
			finished++
		}
	}
	go func() {
		testwait.Until(t, 60*time.Second, "two long replays running", func() bool {
			mu.Lock()
			done := finished
			mu.Unlock()
			running := 0
			for _, d := range r.local {
				if st, err := replay.FetchReplayStatus(ctx, d); err == nil && st.Active && st.CaseName != "quick" {
					running++
				}
			}
			return done == 1 && running == 2
		})
		cancel()
	}()
	rep, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Interrupted || exitOf(rep) != 130 {
		t.Fatalf("interrupted %v, exit %d", rep.Interrupted, exitOf(rep))
	}
	by := map[string]suitereport.Case{}
	for _, c := range rep.Cases {
		by[c.Name] = c
	}
	if q := by["quick"]; q.Verdict != suitereport.Passed {
		t.Fatalf("the finished case was not kept: %+v", q)
	}
	cancelled := map[string]string{}
	for _, c := range rep.Cases {
		for _, a := range c.Attempts {
			if a.Verdict == suitereport.Cancelled {
				cancelled[a.Device] = a.RunID
			}
		}
		if c.Name != "quick" && c.Verdict != suitereport.Skipped {
			t.Errorf("%s is %s", c.Name, c.Verdict)
		}
	}
	if len(cancelled) != 2 {
		t.Fatalf("cancelled attempts %v", cancelled)
	}
	for serial, runID := range cancelled {
		st, err := replay.FetchReplayStatus(context.Background(), r.localOf(serial))
		if err != nil || st.RunID != runID || st.State != "cancelled" {
			t.Errorf("%s: %+v %v, want run %s cancelled", serial, st, err, runID)
		}
	}
	if rep.Counts.Skipped != 3 || rep.Counts.Passed != 1 {
		t.Fatalf("counts %+v", rep.Counts)
	}
}

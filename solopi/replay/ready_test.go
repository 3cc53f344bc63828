package replay

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/devicefake"
)

// Ready on the simulator: auto-start turned on, then a phone with a
// permission missing or a replay running is refused.
func TestReadyOnTheSimulator(t *testing.T) {
	t.Parallel()
	dev := sim.New(sim.Options{Serial: "sim-ready", TimeScale: 50})
	t.Cleanup(func() { dev.Close() })
	s, err := device.OpenSession(context.Background(), dev, device.SessionOptions{StartupTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	d := s.Device
	ctx := context.Background()
	if err := Ready(ctx, d, true, 0); fault.CodeOf(err) != CodeDeviceNotReady {
		t.Fatalf("auto-start off and left off: %v", err)
	}
	if err := Ready(ctx, d, false, 0); err != nil {
		t.Fatalf("fresh phone: %v", err)
	}
	if on, err := readAutoStart(ctx, d); err != nil || !on {
		t.Fatalf("auto-start %v %v", on, err)
	}
	replaySimImport(t, d, "ready-slow", `[{"operationMethod":{"actionEnum":"SLEEP","operationParam":{"text":"600000"}}}]`)
	if _, _, err := dev.App.StartCompetingReplay("ready-slow"); err != nil {
		t.Fatal(err)
	}
	if err := Ready(ctx, d, false, 0); fault.CodeOf(err) != CodeReplayActive {
		t.Fatalf("a replay running: %v", err)
	}
	if err := dev.App.SetPermission("accessibility", false); err != nil {
		t.Fatal(err)
	}
	if err := Ready(ctx, d, false, 0); fault.CodeOf(err) != CodeDeviceNotReady {
		t.Fatalf("accessibility off: %v", err)
	}
}

// A run bound to a fingerprint refuses another version of the case before
// it starts anything.
func TestRunBoundToAFingerprint(t *testing.T) {
	t.Parallel()
	d := replaySimDevice(t)
	ctx := context.Background()
	replaySimImport(t, d, "bound", devicefake.TwoSteps)
	ci, err := GetCase(ctx, d, "bound")
	if err != nil {
		t.Fatal(err)
	}
	o := RunOptions{CaseName: "bound", AckTimeout: 10 * time.Second, RunTimeout: 60 * time.Second, CaseFingerprint: strings.Repeat("0", 64)}
	rep := RunReplay(ctx, d, o)
	if rep.ErrorCode != CodeCaseChanged || rep.RequestID != "" || kindOf(rep.Err) != fault.Failed {
		t.Fatalf("another version: %s %v", rep.ErrorCode, rep.Payload)
	}
	o.CaseFingerprint = ci.Fingerprint
	if rep = RunReplay(ctx, d, o); rep.Err != nil {
		t.Fatalf("the bound version: %v", rep.Payload)
	}
}

package replay

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
)

// Ready on the simulator: auto-start turned on, then a phone with a
// replay running or a permission missing is refused.
func TestReadyOnTheSimulator(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	ctx := context.Background()
	if err := Ready(ctx, p.d, true, 0); fault.CodeOf(err) != fault.CodeDeviceNotReady {
		t.Fatalf("auto-start off and left off: %v", err)
	}
	if err := Ready(ctx, p.d, false, 0); err != nil {
		t.Fatalf("fresh phone: %v", err)
	}
	if !p.autoStart() {
		t.Fatal("auto-start was not turned on")
	}
	p.addCase("ready-slow", hangSteps)
	if _, _, err := p.dev.App.StartCompetingReplay("ready-slow"); err != nil {
		t.Fatal(err)
	}
	if err := Ready(ctx, p.d, false, 0); fault.CodeOf(err) != fault.CodeReplayActive {
		t.Fatalf("a replay running: %v", err)
	}
	if err := p.dev.App.SetPermission("accessibility", false); err != nil {
		t.Fatal(err)
	}
	if err := Ready(ctx, p.d, false, 0); fault.CodeOf(err) != fault.CodeDeviceNotReady {
		t.Fatalf("accessibility off: %v", err)
	}
}

// A run bound to a fingerprint refuses another version of the case before
// it starts anything.
func TestRunBoundToAFingerprint(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	ctx := context.Background()
	p.addCase("bound", twoSteps)
	ci, err := GetCase(ctx, p.d, "bound")
	if err != nil {
		t.Fatal(err)
	}
	o := RunOptions{CaseName: "bound", AckTimeout: 10 * time.Second, RunTimeout: 60 * time.Second, CaseFingerprint: strings.Repeat("0", 64)}
	rep := RunReplay(ctx, p.d, o)
	if rep.ErrorCode != fault.CodeCaseChanged || rep.RequestID != "" || kindOf(rep.Err) != fault.Failed || p.mutations("replayMode=") != 0 {
		t.Fatalf("another version: %s %v", rep.ErrorCode, rep.Payload)
	}
	o.CaseFingerprint = ci.Fingerprint
	if rep = RunReplay(ctx, p.d, o); rep.Err != nil || p.mutations("replayMode=") != 1 {
		t.Fatalf("the bound version: %v", rep.Payload)
	}
}

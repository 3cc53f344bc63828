package soloapp

import (
	"testing"
	"time"

	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// ReplaceReplay: another client cancels the running run and starts its own
// in one move; without a running run, or a case, it refuses.
func TestReplaceReplay(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	if _, _, err := r.app.ReplaceReplay("nope"); err == nil {
		t.Error("replaced with an unknown case")
	}
	r.mustImport("long", stepJSON("s1", "SLEEP", "", map[string]string{"text": "86400000"}, false))
	if _, _, err := r.app.ReplaceReplay("long"); err == nil {
		t.Error("replaced although nothing runs")
	}
	r.phone.set(func(f *fakePhone) { f.fg = counterPkg })
	r.startReplay("long", "r-mine")
	mine := r.waitRun("r-mine", "running")
	reqID, runID, err := r.app.ReplaceReplay("long")
	if err != nil || runID == "" || runID == str(mine, "runId") {
		t.Fatalf("replace: %q %q %v", reqID, runID, err)
	}
	if st := r.runStatus(); str(st, "requestId") != reqID || str(st, "runId") != runID || str(st, "state") != "running" {
		t.Fatalf("status after the takeover: %v", st)
	}
	// The replaced run's cancel no longer finds it.
	wantErr(t, r.mutate("harness", "type", "cancel", "runId", str(mine, "runId")), "run_id_mismatch", "Harness runId does not match the active run")
}

// A slow scan page keeps the session starting until it opens.
func TestScanAttachDelay(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	r.app.SetScanAttachDelay(time.Hour)
	r.adb("scan", "action", "start", "sessionId", "slow-1")
	r.sleep(time.Second) // ten times the usual attach delay
	if st := r.get("scan", "action", "status"); str(st, "state") != "starting" || st["protocolActivityAttached"] != false {
		t.Fatalf("scan with a slow page: %v", st)
	}
	r.app.SetScanAttachDelay(0)
	r.adb("scan", "action", "cancel", "sessionId", "slow-1")
	r.adb("scan", "action", "start", "sessionId", "fast-1")
	r.eventually("scan attached", 10*time.Second, func() bool {
		return str(r.get("scan", "action", "status"), "state") == "scanning"
	})
}

package main

// verify-run's signal handling, end to end: the built binary interrupted
// with SIGINT while a segment replays on the simulated phone.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/internal/testwait"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/verify"
)

// interruptVerify starts verify-run, waits until ready() says the phone is
// busy with it, sends SIGINT and returns the exit code and stdout.
func interruptVerify(t *testing.T, env []string, ready func() bool, args ...string) (int, map[string]any) {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"verify-run"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Logf("verify-run stdout %s stderr %s", out.String(), errb.String())
		}
	})
	testwait.Until(t, 60*time.Second, "the run to get busy", ready)
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	r := cliRun{stdout: []byte(out.String()), stderr: []byte(errb.String()), code: code}
	schematest.Validate(t, "verify-run", r.stdout)
	return code, decodeObject(t, r)
}

// SIGINT while a deterministic segment replays: exactly that run is
// cancelled on the device, the report is partial and interrupted, exit 130.
func TestE2EVerifyRunInterruptDuringReplay(t *testing.T) {
	t.Parallel()
	f, env := startFarm(t, sim.FarmOptions{NoAdbd: true, TimeScale: 1})
	// A minute of waiting on the device before the checkpoint.
	plan := cmdtest.SlowPlan(t, 12)
	art := filepath.Join(t.TempDir(), "run")
	dev := f.Devices()[0]
	code, m := interruptVerify(t, env, func() bool { return dev.App.LeaseHolder() != "" }, "--plan", plan, "--artifacts", art)
	if code != 130 {
		t.Fatalf("exit %d: %v", code, m)
	}
	rep := cmdtest.CheckInterruptedReport(t, m, rep0Segment(t, plan))
	b, err := os.ReadFile(filepath.Join(art, "segments", verify.EvidenceDirName(rep.Scenarios[0].Segments[0].SegmentID), "run-response.json"))
	if err != nil {
		t.Fatal(err)
	}
	var resp map[string]any
	if err := json.Unmarshal(b, &resp); err != nil {
		t.Fatal(err)
	}
	st := decodeObject(t, runBinary(t, env, "status"))
	if st["state"] != "cancelled" || st["runId"] != resp["runId"] || resp["runId"] == nil {
		t.Errorf("device state %v, run response %v", st, resp)
	}
	if dev.App.LeaseHolder() != "" {
		t.Errorf("the device is still held by %s", dev.App.LeaseHolder())
	}
}

// rep0Segment is the first segment of a plan's first scenario.
func rep0Segment(t *testing.T, planPath string) string {
	t.Helper()
	b, err := os.ReadFile(planPath)
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := verify.LoadPlan(b)
	if err != nil {
		t.Fatal(err)
	}
	return p.Scenarios[0].Segments[0].ID
}

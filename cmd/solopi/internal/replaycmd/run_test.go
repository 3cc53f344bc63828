package replaycmd

import (
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/testwait"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/replay"
)

const demo = cmdtest.DemoCaseName

func TestRunPassWritesArtifactsJUnitAndSchemas(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	r.importCase(cmdtest.WriteCase(t, nil))
	dir := filepath.Join(t.TempDir(), "out")
	junit := filepath.Join(t.TempDir(), "junit.xml")
	m := r.Cmd(0, append([]string{"run", "--case", demo, "--artifacts", dir, "--junit", junit}, fast...)...)
	if m["success"] != true || m["state"] != "passed" || m["junit"] != junit {
		t.Fatalf("run: %v", m)
	}
	man, err := os.ReadFile(filepath.Join(dir, artifacts.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, "artifacts-manifest", man)
	result, _ := os.ReadFile(filepath.Join(dir, replay.ArtifactResult))
	schematest.Validate(t, "replay-status", result)
	if a := cmdtest.Obj(m, "artifacts"); a["report"] != filepath.Join(dir, "report.html") {
		t.Errorf("artifacts %v", a)
	}
	raw, _ := os.ReadFile(junit)
	var doc artifacts.XMLTestsuites
	if err := xml.Unmarshal(raw, &doc); err != nil || doc.Tests != 1 || doc.Failures != 0 || doc.Suites[0].Cases[0].Classname != "solopi."+demo {
		t.Fatalf("junit %s: %v", raw, err)
	}
	// result binds the runId; another one is a mismatch with the latest.
	runID := cmdtest.Str(m, "runId")
	r.Cmd(0, "result", "--run-id", runID)
	mm := r.Cmd(2, "result", "--run-id", "other")
	if mm["errorCode"] != fault.CodeRunIDMismatch || mm["latestRun"] == nil {
		t.Fatalf("result mismatch: %v", mm)
	}
}

func TestRunFailExit2NamesTheStep(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	r.importCase(cmdtest.FailingCase(t))
	junit := filepath.Join(t.TempDir(), "junit.xml")
	m := r.Cmd(2, append([]string{"run", "--case", demo, "--junit", junit}, fast...)...)
	if m["errorCode"] != "replay_failed" {
		t.Fatalf("run: %v", m)
	}
	if err := schematest.NewSet().ValidateBytes("run", r.Run(append([]string{"run", "--case", demo}, fast...)...).Stdout); err != nil {
		t.Fatal(err)
	}
	res := m["results"].([]any)[0].(map[string]any)
	if res["exceptionStepId"] != "expect-three" {
		t.Fatalf("results %v", res)
	}
	raw, _ := os.ReadFile(junit)
	var doc artifacts.XMLTestsuites
	if err := xml.Unmarshal(raw, &doc); err != nil || doc.Failures != 1 || !strings.Contains(doc.Suites[0].Cases[0].Failure.Text, "expect-three") {
		t.Fatalf("junit %s: %v", raw, err)
	}
}

// Every check that needs no device happens before it is selected.
func TestRunRefusesBeforeOpeningTheDevice(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "result.json"), []byte("{}"), 0o644)
	junit := filepath.Join(t.TempDir(), "j.xml")
	os.WriteFile(junit, nil, 0o644)
	for _, c := range []struct {
		args []string
		code string
	}{
		{[]string{"run", "--case", "smoke", "--artifacts", dir}, fault.CodeArtifactsDirNotEmpty},
		{[]string{"run", "--case", "smoke", "--junit", junit}, fault.CodeOutputExists},
		{[]string{"run", "--case", "smoke", "--restart-app", "--no-restart-app"}, fault.CodeInvalidOption},
		{[]string{"run", "--case", "smoke", "--wait", "--no-wait"}, fault.CodeInvalidOption},
		{[]string{"run", "--case", "smoke", "--target-package", ""}, fault.CodeInvalidOption},
		{[]string{"cancel", "--run-id", ""}, fault.CodeInvalidOption},
	} {
		if m := r.Cmd(3, c.args...); m["errorCode"] != c.code {
			t.Errorf("%v: %v", c.args, m)
		}
	}
	// Values the parser checks are its text on stderr, nothing on stdout.
	for _, args := range [][]string{
		{"run", "--case", "smoke", "--run-timeout", "0"},
		{"run-repeat", "--case", "x", "--times", "0"},
		{"cancel", "--run-id", "r", "--cancel-timeout", "-1"},
	} {
		if res := r.Run(args...); res.Code != 3 || len(res.Stdout) != 0 || len(res.Stderr) == 0 {
			t.Errorf("%v: exit %d %s", args, res.Code, res.Stdout)
		}
	}
	if n := r.Selections(); n != 0 {
		t.Fatalf("refused commands selected the device %d times", n)
	}
}

// A run that outlives --run-timeout is cancelled (exactly ours); a
// signal cancels it too, after which the evidence is still written.
func TestRunTimeoutAndInterrupt(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	r.importCase(cmdtest.SlowCase(t, 600000))
	m := r.Cmd(124, "run", "--case", demo, "--artifacts", filepath.Join(t.TempDir(), "t"), "--run-timeout", "0.5", "--poll-interval", "0.05")
	runID := cmdtest.Str(m, "runId")
	if m["errorCode"] != fault.CodeRunTimeout || runID == "" || cmdtest.Obj(m, "lastStatus")["runId"] != runID {
		t.Fatalf("timeout: %v", m)
	}
	if st := r.Cmd(0, "status"); st["runId"] != runID || st["state"] != "cancelled" {
		t.Fatalf("the timed-out run on the device: %v", st)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		testwait.Until(t, 20*time.Second, "the replay to run", r.replaying)
		cancel()
	}()
	dir := filepath.Join(t.TempDir(), "i")
	m = r.ExpectCtx(ctx, 130, "run", "run", "--case", demo, "--artifacts", dir, "--poll-interval", "0.05")
	if m["runId"] == nil || m["requestId"] == nil {
		t.Fatalf("interrupt: %v", m)
	}
	if cx := cmdtest.Obj(m, "cancel"); cx["sent"] != true || cx["finalState"] != "cancelled" {
		t.Fatalf("cancel %v", cx)
	}
	if _, err := os.Stat(filepath.Join(dir, replay.ArtifactScreenshot)); err != nil {
		t.Fatalf("interrupt evidence: %v", err)
	}
}

// status, --no-wait, cancel of exactly that run; cancel of a run that is no
// longer active touches nothing.
func TestStatusNoWaitAndCancel(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	if m := r.Cmd(0, "status"); m["state"] != "idle" {
		t.Fatalf("status: %v", m)
	}
	r.importCase(cmdtest.WriteCase(t, nil))
	done := r.Cmd(0, append([]string{"run", "--case", demo}, fast...)...)
	if m := r.Cmd(2, "cancel", "--run-id", cmdtest.Str(done, "runId")); m["errorCode"] != fault.CodeRunNotActive {
		t.Fatalf("cancel of a finished run: %v", m)
	}
	r.importCase(cmdtest.SlowCase(t, 600000))
	nw := r.Cmd(0, append([]string{"run", "--case", demo, "--no-wait"}, fast...)...)
	if nw["state"] != "running" && nw["state"] != "starting" {
		t.Fatalf("no-wait: %v", nw)
	}
	m := r.Cmd(0, "cancel", "--run-id", cmdtest.Str(nw, "runId"), "--poll-interval", "0.05")
	if m["state"] != "cancelled" || m["runId"] != nw["runId"] {
		t.Fatalf("cancel: %v", m)
	}
}

// The case rewritten after the preflight ends failed, never passed.
func TestCaseChangedAfterPreflightFails(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	r.importCase(cmdtest.WriteCase(t, nil))
	r.Transport = &hookedTransport{Device: r.Dev, onReplay: func() {
		if err := r.Dev.App.TouchCase(demo); err != nil {
			t.Error(err)
		}
	}}
	m := r.Cmd(2, append([]string{"run", "--case", demo}, fast...)...)
	if m["state"] != "failed" || !strings.Contains(cmdtest.Str(m, "error")+strings.Join(strs(m), " "), "Case changed after CLI safety validation") {
		t.Fatalf("run: %v", m)
	}
}

// Another client's same-name run is an ownership conflict, never adopted
// and never cancelled.
func TestCompetingRunIsAConflict(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	r.importCase(cmdtest.WriteCase(t, nil))
	r.Transport = &hookedTransport{Device: r.Dev, onReplay: func() {
		if _, _, err := r.Dev.App.StartCompetingReplay(demo); err != nil {
			t.Error(err)
		}
	}}
	if m := r.Cmd(2, append([]string{"run", "--case", demo}, fast...)...); m["errorCode"] != "ownership_conflict" {
		t.Fatalf("run: %v", m)
	}
	r.Transport = r.Dev
	if st := r.Cmd(0, "status"); st["state"] == "cancelled" {
		t.Errorf("the competing run was cancelled: %v", st)
	}
}

// A late cancel of an old run does not stop a new one.
func TestLateCancelDoesNotTouchANewRun(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	r.importCase(cmdtest.WriteCase(t, nil))
	first := r.Cmd(0, append([]string{"run", "--case", demo}, fast...)...)
	second := r.Cmd(0, append([]string{"run", "--case", demo, "--no-wait"}, fast...)...)
	// The stale cancel names the old run: refused as a mismatch while the
	// new run is active, as nothing to cancel once it ended (a loaded host
	// may be that slow); either way the new run is left alone.
	if m := r.Cmd(2, "cancel", "--run-id", cmdtest.Str(first, "runId")); m["errorCode"] != "run_id_mismatch" && m["errorCode"] != "run_not_active" {
		t.Fatalf("stale cancel: %v", m)
	}
	var res map[string]any
	testwait.Until(t, 20*time.Second, "the new run to end", func() bool {
		res = r.Run("result", "--run-id", cmdtest.Str(second, "runId")).Object(t)
		return res["terminal"] == true
	})
	if res["state"] != "passed" {
		t.Errorf("the new run did not pass after a stale cancel: %v", res)
	}
}

// A cancel that arrives before the permission callback publishes cancelled
// for the same runId.
func TestCancelBeforePermissionCallback(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	r.importCase(cmdtest.WriteCase(t, nil))
	r.Dev.App.SetPermissionDialogDelay(30 * time.Second)
	started := r.Cmd(0, append([]string{"run", "--case", demo, "--no-wait"}, fast...)...)
	m := r.Cmd(0, "cancel", "--run-id", cmdtest.Str(started, "runId"), "--poll-interval", "0.05")
	if m["state"] != "cancelled" || m["runId"] != started["runId"] {
		t.Fatalf("cancel: %v", m)
	}
}

// An app restart mid-run gives a clear error, not a hang.
func TestAppRestartMidRun(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{TimeScale: 10})
	r.importCase(cmdtest.WriteCase(t, nil))
	r.Dev.App.SetPermissionDialogDelay(30 * time.Second)
	go func() {
		for r.Dev.App.LeaseHolder() == "" {
			r.Dev.Clock().Sleep(context.Background(), 100*time.Millisecond)
		}
		r.Dev.Clock().Sleep(context.Background(), time.Second) // device time: the run is under way
		r.Dev.App.Restart()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res := r.RunCtx(ctx, "--startup-timeout", "20", "run", "--case", demo, "--run-timeout", "40", "--poll-interval", "0.05")
	if res.Code == 0 || res.Code == 124 {
		t.Fatalf("exit %d after an app restart: %s", res.Code, res.Stdout)
	}
	schematest.Validate(t, "run", res.Stdout)
	if code := cmdtest.Str(res.Object(t), "errorCode"); code == "" {
		t.Errorf("no errorCode: %s", res.Stdout)
	}
}

// strs are the string values of m (for searching messages).
func strs(m map[string]any) []string {
	var out []string
	for _, v := range m {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

package replay

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
)

// fastRun are run options for tests: a short poll interval, and budgets
// far above what a run on the simulator needs even on a loaded machine
// (the tests of a budget set their own).
func fastRun(name, dir string) RunOptions {
	return RunOptions{CaseName: name, AckTimeout: 10 * time.Second, RunTimeout: 30 * time.Second,
		PollInterval: 20 * time.Millisecond, CancelWait: 10 * time.Second, ArtifactsDir: dir}
}

func readManifest(t *testing.T, dir string) artifacts.Manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, artifacts.ManifestName))
	if err != nil {
		t.Fatalf("manifest: %v", err)
	}
	var m artifacts.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("manifest json: %v", err)
	}
	return m
}

// checkArtifacts verifies the evidence directory of runID: every listed
// file exists with the recorded size and SHA-256, result.json is bound to
// the run, and the files named below are present.
func checkArtifacts(t *testing.T, dir, runID, requestID string, want ...string) artifacts.Manifest {
	t.Helper()
	m := readManifest(t, dir)
	if m.RunID != runID || m.RequestID != requestID {
		t.Fatalf("manifest bound to %s/%s, want %s/%s", m.RunID, m.RequestID, runID, requestID)
	}
	have := map[string]bool{}
	for _, f := range m.Files {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatalf("listed file %s: %v", f.Path, err)
		}
		sum := sha256.Sum256(b)
		if int64(len(b)) != f.Size || hex.EncodeToString(sum[:]) != f.SHA256 {
			t.Fatalf("file %s: size/sha mismatch with manifest", f.Path)
		}
		have[f.Path] = true
	}
	for _, w := range want {
		if !have[w] {
			t.Fatalf("manifest lacks %s: %+v", w, m.Files)
		}
	}
	var res map[string]any
	b, _ := os.ReadFile(filepath.Join(dir, ArtifactResult))
	if err := json.Unmarshal(b, &res); err != nil || res["runId"] != runID {
		t.Fatalf("result.json not bound to %s: %s", runID, b)
	}
	return m
}

func TestRunPassCollectsArtifactsAndLeavesAutoStartOn(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("smoke", twoSteps)
	// A result naming a file outside SoloPi's storage is never pulled; one
	// the device no longer has is skipped.
	if err := p.dev.AddAnswerFault(sim.AnswerFault{Action: "harness", Query: map[string]string{"type": "status"},
		When: map[string]any{"state": "passed"}, Set: map[string]any{
			"results/0/screenshotFiles/evil": "/sdcard/solopi/../../data/secret",
			"results/0/screenshotFiles/gone": "/sdcard/solopi/replay/gone.png"}}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	rep := RunReplay(context.Background(), p.d, fastRun("smoke", dir))
	if kindOf(rep.Err) != passed || printed(rep)["success"] != true || rep.State != "passed" {
		t.Fatalf("kind %v payload %v", kindOf(rep.Err), rep.Payload)
	}
	if !strings.HasPrefix(rep.RequestID, "replay-") || len(rep.RequestID) != 39 || rep.RunID == "" {
		t.Fatalf("identities %q %q", rep.RequestID, rep.RunID)
	}
	// Turned on for the run and left on, as solopi-ai leaves it.
	if !p.autoStart() {
		t.Fatal("auto-start was turned off again after the run")
	}
	as := printed(rep)["autoStart"].(map[string]any)
	if as["changed"] != true || as["previous"] != false || len(as) != 3 {
		t.Fatalf("autoStart report %v", as)
	}
	m := checkArtifacts(t, dir, rep.RunID, rep.RequestID, ArtifactResult, artifactCase, ArtifactScreenshot, artifactLogcat)
	if m.Extra["serial"] == "" || m.Extra["state"] != "passed" || m.Extra["redaction"] != redactionInputParameters {
		t.Fatalf("manifest %+v", m)
	}
	// The device's running.log and the SCREENSHOT step's image were pulled.
	var log, png bool
	for _, f := range m.Files {
		log = log || strings.HasPrefix(f.Path, "device/") && strings.HasSuffix(f.Path, "-running.log")
		png = png || strings.HasPrefix(f.Path, "device/") && strings.HasSuffix(f.Path, ".png")
	}
	if !log || !png {
		t.Fatalf("device files not collected: %+v", m.Files)
	}
	// The path with ".." is never pulled; the missing file is skipped.
	skipped := map[string]bool{}
	for _, sk := range m.Skipped {
		skipped[sk.Source] = true
	}
	if len(m.Skipped) != 2 || !skipped["/sdcard/solopi/../../data/secret"] || !skipped["/sdcard/solopi/replay/gone.png"] || m.Complete {
		t.Fatalf("skipped %v", m.Skipped)
	}
	if p.mutations("type=cancel") != 0 {
		t.Fatal("a passed run must not be cancelled")
	}
	// The replay mutation carries exactly the preflight identities.
	_, fp, err := p.dev.App.CaseFingerprint("smoke")
	if err != nil {
		t.Fatal(err)
	}
	if p.mutations("caseFingerprint="+fp) != 1 || p.mutations("requestId="+rep.RequestID) != 1 {
		t.Fatalf("replay mutation params: %v", p.dev.Mutations())
	}
}

func TestRunFailReportsExceptionStep(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("login", failSteps)
	dir := filepath.Join(t.TempDir(), "out")
	rep := RunReplay(context.Background(), p.d, fastRun("login", dir))
	if kindOf(rep.Err) != fault.Failed || rep.ErrorCode != fault.CodeReplayFailed || printed(rep)["success"] != false {
		t.Fatalf("kind %v code %s", kindOf(rep.Err), rep.ErrorCode)
	}
	if printed(rep)["error"] != "1 replay result(s) failed" {
		t.Fatalf("error %v", printed(rep)["error"])
	}
	ff := rep.Status.FirstFailure()
	if ff == nil || ff.ExceptionStepID != "ai-step-002" || ff.ExceptionStep == nil || *ff.ExceptionStep != 1 || ff.ExceptionMessage == "" {
		t.Fatalf("first failure %+v", ff)
	}
	checkArtifacts(t, dir, rep.RunID, rep.RequestID, ArtifactResult, ArtifactScreenshot, artifactLogcat)
	tc := RunJUnitCase(rep, "login", 2)
	if tc.Failure == nil || tc.Failure.Type != fault.CodeReplayFailed || !strings.Contains(tc.Failure.Text, "exceptionStepId: ai-step-002") ||
		tc.Failure.Message != ff.ExceptionMessage || len(tc.Attachments) < 2 {
		t.Fatalf("junit case %+v", tc)
	}
}

func TestRunCancelledByOperatorExits130(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("long", hangSteps)
	// Someone with the runId cancels it on the device.
	p.onStatus(func(r runAnswer, n int) {
		if r.State == "running" && n == 3 {
			p.cancelAsOperator(r.RunID)
		}
	})
	dir := filepath.Join(t.TempDir(), "out")
	rep := RunReplay(context.Background(), p.d, fastRun("long", dir))
	if kindOf(rep.Err) != fault.Interrupted || rep.ErrorCode != fault.CodeReplayCancelled || rep.State != "cancelled" {
		t.Fatalf("kind %v code %s state %s", kindOf(rep.Err), rep.ErrorCode, rep.State)
	}
	checkArtifacts(t, dir, rep.RunID, rep.RequestID, ArtifactResult)
}

func TestRunTimeoutCancelsOurRun(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("slow", hangSteps)
	dir := filepath.Join(t.TempDir(), "out")
	o := fastRun("slow", dir)
	o.RunTimeout = 400 * time.Millisecond
	o.CancelWait = 0 // the default wait
	rep := RunReplay(context.Background(), p.d, o)
	if kindOf(rep.Err) != fault.Timeout || rep.ErrorCode != fault.CodeRunTimeout {
		t.Fatalf("kind %v code %s", kindOf(rep.Err), rep.ErrorCode)
	}
	if p.mutations("type=cancel&runId="+rep.RunID) != 1 {
		t.Fatalf("the timeout must cancel exactly our runId: %v", p.dev.Mutations())
	}
	cx := printed(rep)["cancel"].(map[string]any)
	if cx["sent"] != true || cx["success"] != true || cx["finalState"] != "cancelled" {
		t.Fatalf("cancel evidence %v", cx)
	}
	// solopi-ai's timeout fields: runId and lastStatus.
	if printed(rep)["runId"] != rep.RunID || printed(rep)["lastStatus"] == nil {
		t.Fatalf("payload %v", rep.Payload)
	}
	checkArtifacts(t, dir, rep.RunID, rep.RequestID, ArtifactResult, ArtifactScreenshot, artifactLogcat)
	if st := p.status(); st.RunID != rep.RunID || st.State != "cancelled" {
		t.Fatalf("device status after timeout: %+v", st)
	}
}

func TestRunInterruptCancelsOurRunAndPrintsRunID(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("slow", hangSteps)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p.onStatus(func(r runAnswer, n int) {
		if r.State == "running" && n == 3 {
			cancel() // SIGINT while waiting for the terminal state
		}
	})
	dir := filepath.Join(t.TempDir(), "out")
	rep := RunReplay(ctx, p.d, fastRun("slow", dir))
	if kindOf(rep.Err) != fault.Interrupted || rep.ErrorCode != fault.CodeInterrupted {
		t.Fatalf("kind %v code %s payload %v", kindOf(rep.Err), rep.ErrorCode, rep.Payload)
	}
	if printed(rep)["runId"] == nil || printed(rep)["runId"] != rep.RunID || printed(rep)["requestId"] != rep.RequestID {
		t.Fatalf("interrupt payload lacks identities: %v", rep.Payload)
	}
	if p.mutations("type=cancel&runId="+rep.RunID) != 1 || p.status().State != "cancelled" {
		t.Fatalf("cancel not sent for our run: %v", p.dev.Mutations())
	}
	// After an interrupt the evidence has a short budget: what does not
	// make it is named in the manifest.
	m := checkArtifacts(t, dir, rep.RunID, rep.RequestID, ArtifactResult, artifactLogcat)
	if rep.Artifacts.Screenshot == "" && !strings.Contains(strings.Join(m.Errors, "\n"), ArtifactScreenshot) {
		t.Fatalf("the screenshot is neither collected nor reported missing: %+v", m)
	}
}

func TestRunOwnershipConflictNeverAdopts(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("shared", hangSteps)
	// Another client starts the same case just before our start arrives.
	var once sync.Once
	stop := p.dev.OnMutation(func(uri string) {
		if strings.Contains(uri, "startaction/replay?") {
			once.Do(func() {
				if _, _, err := p.dev.App.StartCompetingReplay("shared"); err != nil {
					t.Errorf("competing replay: %v", err)
				}
			})
		}
	})
	dir := filepath.Join(t.TempDir(), "out")
	rep := RunReplay(context.Background(), p.d, fastRun("shared", dir))
	stop()
	if kindOf(rep.Err) != fault.Failed || rep.ErrorCode != fault.CodeOwnershipConflict {
		t.Fatalf("kind %v code %s", kindOf(rep.Err), rep.ErrorCode)
	}
	ar, _ := printed(rep)["activeRun"].(map[string]any)
	if ar == nil || ar["caseName"] != "shared" || ar["requestId"] == rep.RequestID {
		t.Fatalf("activeRun %v", ar)
	}
	if rep.RunID != "" || p.mutations("type=cancel") != 0 {
		t.Fatal("another client's run was adopted or cancelled")
	}
	if _, err := os.Stat(dir); err == nil {
		t.Fatal("artifacts of another client's run were collected")
	}
}

func TestRunAckTimeoutOnInvisibleRejection(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("ghost", twoSteps)
	// The start never reaches SoloPi: nothing is published.
	if err := p.dev.AddMutationFault(sim.MutationFault{Action: "replay", Drop: true}); err != nil {
		t.Fatal(err)
	}
	o := fastRun("ghost", "")
	o.AckTimeout = 300 * time.Millisecond
	rep := RunReplay(context.Background(), p.d, o)
	if kindOf(rep.Err) != fault.Timeout || rep.ErrorCode != fault.CodeAckTimeout || printed(rep)["requestId"] != rep.RequestID {
		t.Fatalf("kind %v code %s payload %v", kindOf(rep.Err), rep.ErrorCode, rep.Payload)
	}
}

func TestRunPassedWithoutResultsIsAnomaly(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("hollow", twoSteps)
	if err := p.dev.AddAnswerFault(sim.AnswerFault{Action: "harness", Query: map[string]string{"type": "status"},
		When: map[string]any{"state": "passed"}, Set: map[string]any{"results": []any{}}}); err != nil {
		t.Fatal(err)
	}
	rep := RunReplay(context.Background(), p.d, fastRun("hollow", ""))
	if kindOf(rep.Err) != fault.Transport || rep.ErrorCode != fault.CodeEmptyResults {
		t.Fatalf("kind %v code %s", kindOf(rep.Err), rep.ErrorCode)
	}
}

func TestRunRefusesExistingArtifactsDirBeforeDeviceContact(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("smoke", twoSteps)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "old.txt"), []byte("x"), 0o644)
	cmds, muts := len(p.dev.Commands()), len(p.dev.Mutations())
	rep := RunReplay(context.Background(), p.d, fastRun("smoke", dir))
	if kindOf(rep.Err) != fault.Invalid || rep.ErrorCode != fault.CodeArtifactsDirNotEmpty {
		t.Fatalf("kind %v code %s", kindOf(rep.Err), rep.ErrorCode)
	}
	if len(p.dev.Commands()) != cmds || len(p.dev.Mutations()) != muts {
		t.Fatalf("device contacted: %v", p.dev.Commands()[cmds:])
	}
	// With --overwrite it runs and replaces only our files.
	o := fastRun("smoke", dir)
	o.Overwrite = true
	rep = RunReplay(context.Background(), p.d, o)
	if kindOf(rep.Err) != passed {
		t.Fatalf("overwrite run kind %v: %v", kindOf(rep.Err), rep.Payload)
	}
	checkArtifacts(t, dir, rep.RunID, rep.RequestID, ArtifactResult)
}

// imageStep needs the hulu_imageCompare plugin.
const imageStep = `[{"operationMethod":{"actionEnum":"OTHER_NODE","operationParam":{"targetAction":"clickByScreenshot","targetImage":"iVBORw0KGgo="}},
	"operationNode":{"resourceId":"com.example.counter:id/logo"}}]`

func TestRunPreflightRefusals(t *testing.T) {
	t.Parallel()
	t.Run("replay active", func(t *testing.T) {
		t.Parallel()
		p := newSimPhone(t)
		p.addCase("a", hangSteps)
		if _, _, err := p.dev.App.StartCompetingReplay("a"); err != nil {
			t.Fatal(err)
		}
		rep := RunReplay(context.Background(), p.d, fastRun("a", ""))
		if kindOf(rep.Err) != fault.Failed || rep.ErrorCode != fault.CodeReplayActive || printed(rep)["activeRun"] == nil {
			t.Fatalf("kind %v code %s", kindOf(rep.Err), rep.ErrorCode)
		}
		if p.mutations("startaction/replay?") != 0 {
			t.Fatal("replay sent although a run is active")
		}
	})
	t.Run("permissions missing", func(t *testing.T) {
		t.Parallel()
		p := newSimPhone(t)
		p.addCase("a", twoSteps)
		if err := p.dev.App.SetPermission("accessibility", false); err != nil {
			t.Fatal(err)
		}
		rep := RunReplay(context.Background(), p.d, fastRun("a", ""))
		if kindOf(rep.Err) != fault.Failed || rep.ErrorCode != fault.CodeDeviceNotReady {
			t.Fatalf("kind %v code %s", kindOf(rep.Err), rep.ErrorCode)
		}
		mp := printed(rep)["missingPermissions"].([]any)
		if len(mp) != 1 || mp[0] != "accessibility" || printed(rep)["userActionRequired"] == nil {
			t.Fatalf("payload %v", rep.Payload)
		}
	})
	t.Run("no auto-start", func(t *testing.T) {
		t.Parallel()
		p := newSimPhone(t)
		p.addCase("a", twoSteps)
		before := len(p.dev.Mutations())
		o := fastRun("a", "")
		o.NoAutoStart = true
		rep := RunReplay(context.Background(), p.d, o)
		if kindOf(rep.Err) != fault.Failed || rep.ErrorCode != fault.CodeDeviceNotReady || len(p.dev.Mutations()) != before {
			t.Fatalf("kind %v code %s mutations %v", kindOf(rep.Err), rep.ErrorCode, p.dev.Mutations()[before:])
		}
	})
	t.Run("unbound snapshot", func(t *testing.T) {
		t.Parallel()
		p := newSimPhone(t)
		p.addCase("a", twoSteps)
		if err := p.dev.AddAnswerFault(sim.AnswerFault{Action: "harness", Query: map[string]string{"type": "case"},
			Set: map[string]any{"case/caseFingerprint": "not-a-digest"}}); err != nil {
			t.Fatal(err)
		}
		before := len(p.dev.Mutations())
		rep := RunReplay(context.Background(), p.d, fastRun("a", ""))
		if kindOf(rep.Err) != fault.Transport || rep.ErrorCode != fault.CodeCaseSnapshotUnbound || len(p.dev.Mutations()) != before {
			t.Fatalf("kind %v code %s", kindOf(rep.Err), rep.ErrorCode)
		}
	})
	t.Run("case missing", func(t *testing.T) {
		t.Parallel()
		p := newSimPhone(t)
		rep := RunReplay(context.Background(), p.d, fastRun("nope", ""))
		if kindOf(rep.Err) != fault.Failed || rep.ErrorCode != "case_not_found" {
			t.Fatalf("kind %v code %s", kindOf(rep.Err), rep.ErrorCode)
		}
	})
	t.Run("plugins unavailable", func(t *testing.T) {
		t.Parallel()
		p := newSimPhone(t)
		p.addCase("shots", imageStep)
		before := len(p.dev.Mutations())
		rep := RunReplay(context.Background(), p.d, fastRun("shots", ""))
		if kindOf(rep.Err) != fault.Failed || rep.ErrorCode != fault.CodePluginsUnavailable {
			t.Fatalf("kind %v code %s %v", kindOf(rep.Err), rep.ErrorCode, rep.Payload)
		}
		up0, _ := printed(rep)["unavailablePlugins"].([]any)[0].(map[string]any)
		if up0["name"] != "hulu_imageCompare" || up0["installed"] != false || len(p.dev.Mutations()) != before {
			t.Fatalf("unavailable %v", up0)
		}
	})
	t.Run("refused step", func(t *testing.T) {
		t.Parallel()
		p := newSimPhone(t)
		p.addCase("shell", twoSteps)
		// Edited on the phone into a step the host never replays.
		if err := p.dev.App.RewriteCase("shell", func(c *casefile.Case) {
			cmd := "reboot"
			c.Steps[0].Method.ActionEnum = "EXECUTE_SHELL"
			c.Steps[0].Method.Params = map[string]*string{"text": &cmd}
		}); err != nil {
			t.Fatal(err)
		}
		before := len(p.dev.Mutations())
		rep := RunReplay(context.Background(), p.d, fastRun("shell", ""))
		if kindOf(rep.Err) != fault.Invalid || len(p.dev.Mutations()) != before {
			t.Fatalf("kind %v code %s", kindOf(rep.Err), rep.ErrorCode)
		}
	})
}

func TestLateCancelOfOldRunNeverStopsNewRun(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("a", twoSteps)
	p.addCase("b", hangSteps)
	d := p.d
	first := RunReplay(context.Background(), d, fastRun("a", ""))
	if kindOf(first.Err) != passed {
		t.Fatalf("first run kind %v", kindOf(first.Err))
	}
	o := fastRun("b", "")
	o.NoWait = true
	second := RunReplay(context.Background(), d, o)
	if kindOf(second.Err) != passed || second.State != "running" || second.RunID == first.RunID {
		t.Fatalf("second run kind %v state %s", kindOf(second.Err), second.State)
	}
	// A stale owner cancels its old runId: nothing reaches the device.
	res := cancelOwnRun(context.Background(), d, first.RunID, first.RequestID, 300*time.Millisecond)
	if res.Sent || res.Reason != "run_not_current" {
		t.Fatalf("stale cancel %+v", res)
	}
	_, err := CancelRun(context.Background(), d, first.RunID, time.Second, 50*time.Millisecond)
	if e := fault.From(err); e.Kind != fault.Failed || e.Code != fault.CodeRunIDMismatch || e.Details["activeRun"] == nil {
		t.Fatalf("cancel --run-id old: %v", err)
	}
	if st := p.status(); p.mutations("type=cancel") != 0 || st.State != "running" || st.RunID != second.RunID {
		t.Fatalf("the new run was touched: %v %+v", p.dev.Mutations(), st)
	}
	// The owner of the new run cancels it by its own runId.
	out, err := CancelRun(context.Background(), d, second.RunID, time.Second, 50*time.Millisecond)
	if err != nil || out.device["state"] != "cancelled" || !out.Success {
		t.Fatalf("cancel own run: %v %v", out, err)
	}
	// Cancelling it again is idempotent: the terminal snapshot, exit 0.
	again, err := CancelRun(context.Background(), d, second.RunID, time.Second, 50*time.Millisecond)
	if err != nil || !again.Idempotent || again.device["state"] != "cancelled" || again.CancelSent || p.mutations("type=cancel") != 1 {
		t.Fatalf("second cancel: %v %v", again, err)
	}
	// The first run left auto-start on: the second found it so.
	as := printed(second)["autoStart"].(map[string]any)
	if as["previous"] != true || as["changed"] != false {
		t.Fatalf("second autoStart %v", as)
	}
}

func TestLatestResult(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("a", twoSteps)
	d := p.d
	// No run: the idle snapshot's fields stay at the top level (solopi-ai).
	if _, _, err := LatestResult(context.Background(), d, ""); fault.From(err).Code != fault.CodeNoRun || fault.From(err).Details["state"] != "idle" || fault.From(err).Details["terminal"] != false {
		t.Fatalf("no run: %v", err)
	}
	rep := RunReplay(context.Background(), d, fastRun("a", ""))
	out, failure, err := LatestResult(context.Background(), d, rep.RunID)
	if err != nil || failure != nil || !out.Success {
		t.Fatalf("result: %v %v %v", out, failure, err)
	}
	_, _, err = LatestResult(context.Background(), d, "1-other")
	if e := fault.From(err); e.Kind != fault.Failed || e.Code != fault.CodeRunIDMismatch || e.Details["latestRun"] == nil || e.Details["expectedRunId"] != "1-other" {
		t.Fatalf("mismatch: %v", err)
	}
}

func TestPollUntilAdaptive(t *testing.T) {
	t.Parallel()
	start := time.Now()
	n := 0
	err := device.PollUntil(context.Background(), device.PollOptions{Timeout: 5 * time.Second, Interval: time.Second}, func(context.Context) (bool, error) {
		n++
		return n == 3, nil
	})
	// 100 ms + 200 ms of pauses, far below two 1 s intervals.
	if err != nil || n != 3 || time.Since(start) > 900*time.Millisecond {
		t.Fatalf("err %v n %d after %v", err, n, time.Since(start))
	}
	err = device.PollUntil(context.Background(), device.PollOptions{Timeout: 150 * time.Millisecond, Interval: 50 * time.Millisecond}, func(context.Context) (bool, error) {
		return false, nil
	})
	if err != device.ErrPollTimeout {
		t.Fatalf("want ErrPollTimeout, got %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := device.PollUntil(ctx, device.PollOptions{Timeout: time.Second}, func(context.Context) (bool, error) { return false, nil }); !fault.IsInterrupt(err) {
		t.Fatalf("want interrupt, got %v", err)
	}
}

func TestCheckEvidencePath(t *testing.T) {
	t.Parallel()
	ok := []string{"/sdcard/solopi/logs/a.log", "/storage/emulated/0/solopi/screenshots/x.png", "/sdcard/Android/data/com.alipay.hulu/files/solopi/a.png"}
	bad := []string{"relative/a.log", "/sdcard/solopi/../x", "/data/data/com.alipay.hulu/a", "/sdcard/solopi/", "/sdcard/solopi//a", "/sdcard/solopi/a\nb", "/sdcard/Android/data/com.other/files/a"}
	for _, p := range ok {
		if err := checkEvidencePath("com.alipay.hulu", p); err != nil {
			t.Errorf("%s refused: %v", p, err)
		}
	}
	for _, p := range bad {
		if err := checkEvidencePath("com.alipay.hulu", p); err == nil {
			t.Errorf("%s accepted", p)
		}
	}
}

func TestRunIdentityRules(t *testing.T) {
	t.Parallel()
	t.Run("our requestId with another case name", func(t *testing.T) {
		t.Parallel()
		p := newSimPhone(t)
		p.addCase("a", hangSteps)
		if err := p.dev.AddAnswerFault(sim.AnswerFault{Action: "harness", Query: map[string]string{"type": "status"},
			When: map[string]any{"state": "running"}, Set: map[string]any{"caseName": "b"}}); err != nil {
			t.Fatal(err)
		}
		rep := RunReplay(context.Background(), p.d, fastRun("a", ""))
		if kindOf(rep.Err) != fault.Transport || rep.ErrorCode != fault.CodeRunIdentityMismatch {
			t.Fatalf("kind %v code %s", kindOf(rep.Err), rep.ErrorCode)
		}
		// The run carries our requestId, so it is what our start created:
		// it is not claimed as a verdict, but it is not left running either.
		if p.mutations("type=cancel&runId="+rep.RunID) != 1 || p.status().State != "cancelled" {
			t.Fatalf("anomalous run of our request left running: %v %v", p.dev.Mutations(), printed(rep)["cancel"])
		}
	})
	t.Run("run replaced while waiting", func(t *testing.T) {
		t.Parallel()
		p := newSimPhone(t)
		p.addCase("a", hangSteps)
		p.onStatus(func(r runAnswer, n int) {
			if r.State == "running" && n == 3 {
				// Someone else takes the slot before the host reads this.
				if _, _, err := p.dev.App.ReplaceReplay("a"); err != nil {
					t.Errorf("replace: %v", err)
				}
			}
		})
		dir := filepath.Join(t.TempDir(), "out")
		rep := RunReplay(context.Background(), p.d, fastRun("a", dir))
		if kindOf(rep.Err) != fault.Failed || rep.ErrorCode != fault.CodeRunReplaced || printed(rep)["activeRun"] == nil {
			t.Fatalf("kind %v code %s", kindOf(rep.Err), rep.ErrorCode)
		}
		if p.mutations("type=cancel") != 0 {
			t.Fatal("the replacing run was cancelled")
		}
		if _, err := os.Stat(dir); err == nil {
			t.Fatal("evidence collected for a run that is no longer ours")
		}
	})
	t.Run("device files of a newer run are not pulled", func(t *testing.T) {
		t.Parallel()
		p := newSimPhone(t)
		p.addCase("a", failSteps)
		p.addCase("other", hangSteps)
		var once sync.Once
		p.onStatus(func(r runAnswer, n int) {
			if r.CaseName == "a" && r.State == "failed" {
				// After our terminal status, another client starts.
				once.Do(func() {
					if _, _, err := p.dev.App.StartCompetingReplay("other"); err != nil {
						t.Errorf("competing replay: %v", err)
					}
				})
			}
		})
		dir := filepath.Join(t.TempDir(), "out")
		rep := RunReplay(context.Background(), p.d, fastRun("a", dir))
		if kindOf(rep.Err) != fault.Failed || rep.ErrorCode != fault.CodeReplayFailed {
			t.Fatalf("kind %v %v", kindOf(rep.Err), rep.Payload)
		}
		m := checkArtifacts(t, dir, rep.RunID, rep.RequestID, ArtifactResult, ArtifactScreenshot)
		for _, f := range m.Files {
			if strings.HasPrefix(f.Path, "device/") {
				t.Fatalf("pulled %s while another run was current", f.Path)
			}
		}
		if m.Complete || len(m.Errors) == 0 {
			t.Fatalf("manifest should say why device files are missing: %+v", m)
		}
	})
	t.Run("plugin loaded", func(t *testing.T) {
		t.Parallel()
		p := newSimPhone(t)
		p.addCase("shots", imageStep)
		// The plugin is installed and SoloPi restarted since: it is loaded.
		if err := p.dev.App.InstallPlugin("hulu_imageCompare", 1.0); err != nil {
			t.Fatal(err)
		}
		p.dev.App.Restart()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.dev.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
		rep := RunReplay(context.Background(), p.d, fastRun("shots", ""))
		// The preflight lets the run start; the simulated app cannot
		// compare images, so the step itself fails on the device.
		if rep.ErrorCode == fault.CodePluginsUnavailable || p.mutations("startaction/replay?") != 1 || rep.RunID == "" {
			t.Fatalf("kind %v code %s", kindOf(rep.Err), rep.ErrorCode)
		}
	})
}

// TestCancelRunOutcomes: a cancel SoloPi takes too long to deliver finds
// the run finished, or never lands within the wait.
func TestCancelRunOutcomes(t *testing.T) {
	t.Parallel()
	start := func(t *testing.T, steps string) (*simPhone, string) {
		p := newSimPhone(t)
		p.addCase("a", steps)
		o := fastRun("a", "")
		o.NoWait = true
		rep := RunReplay(context.Background(), p.d, o)
		if kindOf(rep.Err) != passed {
			t.Fatalf("start kind %v", kindOf(rep.Err))
		}
		// SoloPi's main thread is busy: the cancel arrives ten minutes late.
		if err := p.dev.AddMutationFault(sim.MutationFault{Action: "harness", Query: map[string]string{"type": "cancel"}, DelayMs: 600_000}); err != nil {
			t.Fatal(err)
		}
		return p, rep.RunID
	}
	t.Run("finished before cancel", func(t *testing.T) {
		t.Parallel()
		p, runID := start(t, `[{"operationMethod":{"actionEnum":"SLEEP","operationParam":{"text":"30000"}}}]`)
		_, err := CancelRun(context.Background(), p.d, runID, 5*time.Second, 20*time.Millisecond)
		if e := fault.From(err); e.Kind != fault.Failed || e.Code != fault.CodeRunFinishedBeforeCancel || e.Details["state"] != "passed" {
			t.Fatalf("want exit 2 %s, got %v", fault.CodeRunFinishedBeforeCancel, err)
		}
	})
	t.Run("cancel not confirmed", func(t *testing.T) {
		t.Parallel()
		p, runID := start(t, hangSteps)
		_, err := CancelRun(context.Background(), p.d, runID, 200*time.Millisecond, 20*time.Millisecond)
		if e := fault.From(err); e.Kind != fault.Timeout || e.Code != fault.CodeCancelTimeout || e.Details["cancelSent"] != true {
			t.Fatalf("want 124, got %v", err)
		}
	})
}

// passed stands for "no failure" where tests compare a result's kind.
const passed fault.Kind = 255

// kindOf is the kind of a result's failure, passed when there is none.
func kindOf(e *fault.Error) fault.Kind {
	if e == nil {
		return passed
	}
	return e.Kind
}

// testExit stands in for the command's exit mapping in JUnit reports.
func testExit(e *fault.Error) int {
	if e == nil {
		return 0
	}
	return int(e.Kind) + 100
}

package soloapp

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/casefile/paramcrypt"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

func (r *rig) preflight(name string) (string, string) {
	r.t.Helper()
	c := sub(r.get("harness", "type", "case", "caseName", name), "case")
	if c == nil {
		r.t.Fatalf("case %s missing", name)
	}
	return strconv.FormatInt(num(c, "id"), 10), str(c, "caseFingerprint")
}

func (r *rig) startReplay(name, reqID string, extra ...string) {
	r.t.Helper()
	id, fp := r.preflight(name)
	r.adb("replay", append([]string{"replayMode", "normal", "caseName", name, "requestId", reqID, "caseId", id, "caseFingerprint", fp}, extra...)...)
}

func (r *rig) runStatus() map[string]any { return r.get("harness", "type", "status") }

func (r *rig) waitRun(reqID string, states ...string) map[string]any {
	r.t.Helper()
	var st map[string]any
	r.eventually("run "+reqID+" in "+strings.Join(states, "|"), 30*time.Second, func() bool {
		st = r.runStatus()
		if str(st, "requestId") != reqID {
			return false
		}
		for _, s := range states {
			if str(st, "state") == s {
				return true
			}
		}
		return false
	})
	return st
}

func passingSteps() []string {
	return []string{
		stepJSON("s1", "CLICK", nodeByID("increment"), nil, false),
		stepJSON("s2", "CLICK", `{"text":"Increment"}`, nil, false),
		stepJSON("s3", "ASSERT", `{"resourceId":"com.example.counter:id/counter_value"}`, map[string]string{"assertMode": "assert_accurate", "assertInputContent": "2"}, false),
		stepJSON("s4", "ASSERT", `{"resourceId":"com.example.counter:id/counter_value"}`, map[string]string{"assertMode": "assert_dayuAndEqual", "assertInputContent": "2"}, false),
		stepJSON("s5", "INPUT", `{"xpath":"/android.widget.FrameLayout/android.widget.EditText"}`, map[string]string{"text": paramcrypt.Encrypt(paramcrypt.DefaultSeed, "Bob")}, true),
		stepJSON("s6", "ASSERT", `{"resourceId":"com.example.counter:id/name"}`, map[string]string{"assertMode": "assert_regular", "assertInputContent": "B.b"}, false),
		stepJSON("s7", "SLEEP", "", map[string]string{"text": "100"}, false),
		stepJSON("s8", "SCREENSHOT", "", map[string]string{"text": "after-input"}, false),
		stepJSON("s9", "GLOBAL_SCROLL_TO_BOTTOM", "", nil, false),
		stepJSON("s10", "CLICK_IF_EXISTS", `{"resourceId":"com.example.counter:id/absent"}`, nil, false),
		stepJSON("s11", "SLEEP_UNTIL", nodeByID("noop"), map[string]string{"text": "500"}, false),
	}
}

func TestReplayValidationIsInvisible(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	r.mustImport("smoke", passingSteps()...)
	id, fp := r.preflight("smoke")
	good := map[string]string{"replayMode": "normal", "caseName": "smoke", "requestId": "replay-1", "caseId": id, "caseFingerprint": fp}
	for _, tc := range []struct {
		change map[string]string
		drop   string
		want   string
	}{
		{drop: "replayMode", want: "Parameter 'replayMode' is required"},
		{change: map[string]string{"replayMode": "fast"}, want: "Unsupported replay mode: fast"},
		{drop: "caseName", want: "Parameter 'caseName' is required"},
		{drop: "requestId", want: "Parameter 'requestId' is invalid"},
		{change: map[string]string{"requestId": "-bad"}, want: "Parameter 'requestId' is invalid"},
		{change: map[string]string{"requestId": strings.Repeat("a", 129)}, want: "Parameter 'requestId' is invalid"},
		{drop: "caseId", want: "Parameter 'caseId' is required"},
		{change: map[string]string{"caseId": "0"}, want: "Parameter 'caseId' must be a positive integer"},
		{change: map[string]string{"caseId": "x1"}, want: "Parameter 'caseId' must be a positive integer"},
		{change: map[string]string{"caseFingerprint": strings.ToUpper(fp)}, want: "Parameter 'caseFingerprint' must be a lowercase SHA-256 value"},
		{drop: "caseFingerprint", want: "Parameter 'caseFingerprint' must be a lowercase SHA-256 value"},
		{change: map[string]string{"restartApp": "maybe"}, want: "Parameter 'restartApp' must be true or false"},
	} {
		var kv []string
		for k, v := range good {
			if k == tc.drop {
				continue
			}
			if c, found := tc.change[k]; found {
				v = c
			}
			kv = append(kv, k, v)
		}
		for k, v := range tc.change {
			if _, found := good[k]; !found {
				kv = append(kv, k, v)
			}
		}
		got := r.mutate("replay", kv...)
		if len(got) != 1 || str(got, "error") != tc.want {
			t.Errorf("%v: %v", tc, got)
		}
	}
	if st := r.runStatus(); str(st, "state") != "idle" || st["runId"] != nil {
		t.Fatalf("invisible rejection changed status: %v", st)
	}
}

func TestReplayPasses(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{Settings: map[string]string{"KEY_REPLAY_AUTO_START": "true"}})
	r.mustImport("smoke", passingSteps()...)
	r.phone.set(func(f *fakePhone) { f.fg = counterPkg; f.count = 7 })
	ack := r.mutate("replay", "replayMode", "normal", "caseName", "smoke", "requestId", "replay-x", "caseId", "999", "caseFingerprint", strings.Repeat("a", 64))
	if _, has := ack["success"]; has || !strings.Contains(str(ack, "runId"), "-") {
		t.Fatalf("ack: %v", ack)
	}
	r.waitRun("replay-x", "failed") // wrong id: visible failure, not a pass
	r.startReplay("smoke", "replay-ok")
	run := r.waitRun("replay-ok", "running")
	if run["active"] != true || num(run, "startedAt") == 0 || len(run["results"].([]any)) != 0 {
		t.Errorf("running: %v", run)
	}
	if _, has := run["finishedAt"]; has {
		t.Error("finishedAt while active")
	}
	if !strings.HasPrefix(r.app.LeaseHolder(), "harness:") {
		t.Errorf("lease: %q", r.app.LeaseHolder())
	}
	st := r.waitRun("replay-ok", "passed", "failed")
	if str(st, "state") != "passed" || st["terminal"] != true || st["active"] != false || st["error"] != nil {
		t.Fatalf("passed: %v", st)
	}
	if num(st, "durationMs") != num(st, "finishedAt")-num(st, "startedAt") {
		t.Errorf("duration: %v", st)
	}
	res := st["results"].([]any)[0].(map[string]any)
	if str(res, "status") != "passed" || str(res, "targetAppPackage") != counterPkg || str(res, "targetApp") != "Counter" || str(res, "platform") != "Android" {
		t.Errorf("result: %v", res)
	}
	for _, k := range []string{"exceptionMessage", "exceptionStep", "exceptionStepId"} {
		if _, has := res[k]; has {
			t.Errorf("passed result has %s", k)
		}
	}
	count, _, name, _ := r.phone.snapshot()
	if count != 2 || name != "Bob" {
		t.Errorf("phone after replay: count %d name %q", count, name)
	}
	if r.phone.stops[0] != counterPkg {
		t.Errorf("restartApp did not force-stop: %v", r.phone.stops)
	}
	if _, err := r.phone.Stat(str(res, "logFile")); err != nil || !strings.HasPrefix(str(res, "logFile"), "/storage/emulated/0/solopi/replay/smoke_") {
		t.Errorf("log file %s: %v", str(res, "logFile"), err)
	}
	shots := sub(res, "screenshotFiles")
	if p := str(shots, "after-input"); p == "" {
		t.Errorf("screenshots: %v", shots)
	} else if data, err := r.phone.ReadFile(p); err != nil || !strings.HasPrefix(string(data), "\x89PNG") {
		t.Errorf("screenshot %s: %v", p, err)
	}
	if r.app.LeaseHolder() != "" {
		t.Error("lease not released")
	}
}

func TestReplayStepFailures(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{Settings: map[string]string{"KEY_REPLAY_AUTO_START": "true", "KEY_MAX_WAIT_TIME": "300"}})
	for i, tc := range []struct {
		steps  []string
		index  int64
		stepID string
		msg    string
	}{
		{[]string{stepJSON("a1", "CLICK", nodeByID("increment"), nil, false),
			stepJSON("a2", "ASSERT", `{"resourceId":"com.example.counter:id/counter_value"}`, map[string]string{"assertMode": "assert_accurate", "assertInputContent": "5"}, false)},
			1, "a2", "Assert failed"},
		{[]string{stepJSON("b1", "EXECUTE_SHELL", "", map[string]string{"text": "ls"}, false)}, 0, "b1", "Unsupported action in simulator: EXECUTE_SHELL"},
		{[]string{stepJSON("c1", "BACK", "", nil, false), stepJSON("c2", "CLICK", nodeByID("increment"), nil, false)}, 1, "c2", "Target node not found"},
		{[]string{`{"operationId":"op-d","stepId":"d1","operationMethod":{"actionEnum":"assert","encrypt":false,"operationParam":{"assertMode":"assert_xiaoyu","assertInputContent":"0"}},"operationNode":{"resourceId":"com.example.counter:id/counter_value"}}`}, 0, "d1", "Assert failed"},
	} {
		name := "fail" + strconv.Itoa(i)
		r.mustImport(name, tc.steps...)
		req := "replay-" + name
		r.startReplay(name, req, "restartApp", "TRUE")
		st := r.waitRun(req, "passed", "failed")
		res := st["results"].([]any)[0].(map[string]any)
		if str(st, "state") != "failed" || str(st, "error") != "1 replay result(s) failed" || str(res, "status") != "failed" ||
			num(res, "exceptionStep") != tc.index || str(res, "exceptionStepId") != tc.stepID || !strings.HasPrefix(str(res, "exceptionMessage"), tc.msg) {
			t.Errorf("%s: %v / %v", name, st, res)
		}
		if len(sub(res, "screenshotFiles")) == 0 {
			t.Errorf("%s: no failure screenshot", name)
		}
	}
}

func TestReplayVisibleStartFailures(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{Settings: map[string]string{"KEY_REPLAY_AUTO_START": "true"}})
	r.mustImport("smoke", passingSteps()...)
	expect := func(req, msg string) {
		t.Helper()
		st := r.waitRun(req, "failed", "passed")
		if str(st, "state") != "failed" || str(st, "error") != msg || str(st, "caseName") != "smoke" {
			t.Errorf("%s: %v", req, st)
		}
		if r.app.LeaseHolder() != "" {
			t.Errorf("%s: lease kept", req)
		}
	}
	// Case changed after preflight: DB edit, in-place steps rewrite.
	id, fp := r.preflight("smoke")
	if err := r.app.TouchCase("smoke"); err != nil {
		t.Fatal(err)
	}
	r.adb("replay", "replayMode", "normal", "caseName", "smoke", "requestId", "r-touch", "caseId", id, "caseFingerprint", fp)
	expect("r-touch", "Case changed after CLI safety validation: smoke")
	id, fp = r.preflight("smoke")
	if err := r.app.RewriteCase("smoke", func(c *casefile.Case) { c.Steps = c.Steps[:1] }); err != nil {
		t.Fatal(err)
	}
	if id2, _ := r.preflight("smoke"); id2 != id {
		t.Fatal("rewrite changed the id")
	}
	r.adb("replay", "replayMode", "normal", "caseName", "smoke", "requestId", "r-rewrite", "caseId", id, "caseFingerprint", fp)
	expect("r-rewrite", "Case changed after CLI safety validation: smoke")
	// Name mismatch with the right id and fingerprint.
	id, fp = r.preflight("smoke")
	r.adb("replay", "replayMode", "normal", "caseName", "other", "requestId", "r-name", "caseId", id, "caseFingerprint", fp)
	st := r.waitRun("r-name", "failed")
	if str(st, "error") != "Case changed after CLI safety validation: other" {
		t.Errorf("name mismatch: %v", st)
	}
	// Replaced under the same name: the old id is gone.
	r.mustImport("smoke", passingSteps()...)
	r.adb("replay", "replayMode", "normal", "caseName", "smoke", "requestId", "r-gone", "caseId", id, "caseFingerprint", fp)
	expect("r-gone", "Case snapshot no longer exists: smoke")
	// Target application checks.
	r.startReplay("smoke", "r-missing", "targetApp", "com.not.installed")
	expect("r-missing", "Target application is not installed: com.not.installed")
	r.startReplay("smoke", "r-self", "targetApp", " com.alipay.hulu ")
	expect("r-self", "Replay target application cannot be SoloPi itself")
	r.startReplay("smoke", "r-nolaunch", "targetApp", "com.example.service")
	expect("r-nolaunch", "Target application has no launchable activity: com.example.service")
	// Permissions.
	_ = r.app.SetPermission(core.PermFloat, false)
	r.startReplay("smoke", "r-perm")
	expect("r-perm", "Permission denied: float")
	_ = r.app.SetPermission(core.PermFloat, true)
}

func TestReplayCancel(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	r.mustImport("smoke", passingSteps()...)
	wantErr(t, r.mutate("harness", "type", "cancel"), "missing_run_id", "Parameter 'runId' is required")
	wantErr(t, r.mutate("harness", "type", "cancel", "runId", "x"), "run_id_mismatch", "Harness runId does not match the active run")
	// Auto-start off: the run stays running until cancelled.
	r.startReplay("smoke", "r-hold")
	run := r.waitRun("r-hold", "running")
	r.sleep(3 * time.Second)
	if st := r.runStatus(); str(st, "state") != "running" {
		t.Fatalf("auto-start off must keep running: %v", st)
	}
	if _, _, _, fg := r.phone.snapshot(); fg == counterPkg {
		t.Error("steps executed without auto-start")
	}
	// A second replay is refused while one is active (invisible).
	id, fp := r.preflight("smoke")
	if got := r.mutate("replay", "replayMode", "normal", "caseName", "smoke", "requestId", "r-2", "caseId", id, "caseFingerprint", fp); str(got, "error") != "A replay is already running" {
		t.Errorf("second replay: %v", got)
	}
	mm := r.mutate("harness", "type", "cancel", "runId", "stale-run")
	wantErr(t, mm, "run_id_mismatch", "")
	if str(sub(mm, "run"), "runId") != str(run, "runId") {
		t.Errorf("mismatch run: %v", mm)
	}
	// case-delete of the running case is refused.
	wantErr(t, r.mutate("harness", "type", "case-delete", "requestId", "d", "caseName", "smoke", "confirmCaseName", "smoke"), "case_active", "The case is currently running and cannot be deleted")
	r.adb("harness", "type", "cancel", "runId", str(run, "runId"))
	st := r.waitRun("r-hold", "cancelled")
	if st["terminal"] != true || str(st, "runId") != str(run, "runId") || r.app.LeaseHolder() != "" {
		t.Errorf("cancelled: %v", st)
	}
	wantErr(t, r.mutate("harness", "type", "cancel", "runId", str(run, "runId")), "no_active_run", "There is no active harness run")

	// Cancel before the manager starts (permission dialog still open).
	r.app.SetPermissionDialogDelay(time.Minute)
	r.startReplay("smoke", "r-pre")
	pre := r.waitRun("r-pre", "running")
	acc := r.mutate("harness", "type", "cancel", "runId", str(pre, "runId"))
	if acc["success"] != true || acc["accepted"] != true || str(sub(acc, "run"), "state") != "cancelled" {
		t.Errorf("pre-start cancel: %v", acc)
	}
	if r.app.LeaseHolder() != "" {
		t.Error("lease kept after pre-start cancel")
	}
	r.app.SetPermissionDialogDelay(0)

	// Cancel while steps execute.
	r.adb("config", "key", "KEY_REPLAY_AUTO_START", "value", "true")
	r.mustImport("slow", stepJSON("z1", "SLEEP", "", map[string]string{"text": "60000"}, false))
	r.startReplay("slow", "r-slow")
	slow := r.waitRun("r-slow", "running")
	r.sleep(2500 * time.Millisecond)
	r.adb("harness", "type", "cancel", "runId", str(slow, "runId"))
	st = r.waitRun("r-slow", "cancelled")
	if len(st["results"].([]any)) != 0 {
		t.Errorf("cancelled results: %v", st)
	}
}

func TestReplayConflictsAndRestart(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	r.mustImport("smoke", passingSteps()...)
	r.phone.set(func(f *fakePhone) { f.fg = counterPkg })
	// An Agent session holds the lease: the replay fails visibly with a new runId.
	r.adb("agent", "type", "start", "ownerToken", strings.Repeat("t", 20))
	r.eventually("agent lease", time.Second, func() bool { return strings.HasPrefix(r.app.LeaseHolder(), "agent-lease-") })
	r.startReplay("smoke", "r-lease")
	st := r.waitRun("r-lease", "failed")
	if str(st, "error") != "Another replay or plugin maintenance prevents replay from starting" || st["startedAt"] != nil || st["durationMs"] != nil || num(st, "finishedAt") == 0 {
		t.Errorf("lease conflict: %v", st)
	}
	r.app.Restart()
	r.waitReady()
	if st := r.runStatus(); str(st, "state") != "idle" || st["runId"] != nil || st["requestId"] != nil {
		t.Errorf("after restart: %v", st)
	}
	// Competing client: another requestId on the same case.
	r.startReplay("smoke", "r-mine")
	mine := r.waitRun("r-mine", "running")
	if _, _, err := r.app.StartCompetingReplay("smoke"); err == nil {
		t.Error("competing replay accepted while one runs")
	}
	r.adb("harness", "type", "cancel", "runId", str(mine, "runId"))
	r.waitRun("r-mine", "cancelled")
	reqID, runID, err := r.app.StartCompetingReplay("smoke")
	if err != nil || runID == "" {
		t.Fatal(err)
	}
	if st := r.runStatus(); str(st, "requestId") != reqID || str(st, "runId") != runID || str(st, "caseName") != "smoke" {
		t.Errorf("competing: %v", st)
	}
	// An Agent start during a replay gets lease_conflict.
	wantErr(t, r.mutate("agent", "type", "start", "ownerToken", strings.Repeat("u", 20)), "lease_conflict", "Another replay, Agent session, or maintenance task controls the device")
}

func TestMaintenanceLatch(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	r.mustImport("smoke", passingSteps()...)
	release, err := r.app.BeginMaintenance()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.app.BeginMaintenance(); err == nil {
		t.Error("second maintenance allowed")
	}
	wantErr(t, r.mutate("agent", "type", "start", "ownerToken", token), "lease_conflict", "")
	r.startReplay("smoke", "r-maint")
	if st := r.waitRun("r-maint", "failed"); str(st, "error") != "Another replay or plugin maintenance prevents replay from starting" {
		t.Errorf("replay during maintenance: %v", st)
	}
	release()
	r.startReplay("smoke", "r-after")
	r.waitRun("r-after", "running")
	if _, err := r.app.BeginMaintenance(); err == nil {
		t.Error("maintenance allowed while a replay holds the lease")
	}
}

func TestStatusPageDelay(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	r.phone.set(func(f *fakePhone) { f.fg = counterPkg })
	start := r.clk.Now()
	r.get("status", "type", "page")
	if el := r.clk.Now().Sub(start); el < 500*time.Millisecond {
		t.Errorf("page answered after %v, want ≥ 500 ms", el)
	}
}

// A failing step echoes its decrypted parameter: the ASSERT's encrypted
// expected text comes back in plain in exceptionMessage and running.log.
// This is the leak the host redacts (casefile.Redactor); the test pins the
// device behaviour it is built against.
func TestReplayFailureEchoesDecryptedParams(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{Settings: map[string]string{"KEY_REPLAY_AUTO_START": "true", "KEY_MAX_WAIT_TIME": "300"}})
	const secret = "s3cret-PIN-4711"
	enc := paramcrypt.Encrypt(paramcrypt.DefaultSeed, secret)
	r.mustImport("echo", stepJSON("e1", "ASSERT", `{"resourceId":"com.example.counter:id/counter_value"}`,
		map[string]string{"assertMode": paramcrypt.Encrypt(paramcrypt.DefaultSeed, "assert_accurate"), "assertInputContent": enc}, true))
	r.startReplay("echo", "replay-echo")
	st := r.waitRun("replay-echo", "passed", "failed")
	res := st["results"].([]any)[0].(map[string]any)
	if msg := str(res, "exceptionMessage"); str(st, "state") != "failed" || !strings.Contains(msg, secret) || strings.Contains(msg, enc) {
		t.Fatalf("exceptionMessage %q (state %s)", msg, str(st, "state"))
	}
	log, err := r.phone.ReadFile(str(res, "logFile"))
	if err != nil || !strings.Contains(string(log), secret) {
		t.Fatalf("running.log: %v\n%s", err, log)
	}
}

package main

// End-to-end tests of solopi-ai compatibility and of the hardening items
// that cross command groups: the whole app against a simulated farm,
// faults injected through the simulator's control endpoint, the solopi-ai
// fields and exit codes asserted on the real stdout.

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/casefile/paramcrypt"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/internal/testwait"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
)

// compatRig is an e2eRig plus the simulator's control endpoint.
type compatRig struct {
	*e2eRig
	control string
	// agentSID and agentTok are the Agent session agentSession started.
	agentSID, agentTok, agentObs string
}

// agentSession starts an Agent session on the counter app and keeps its
// id and token file.
func (r *compatRig) agentSession() {
	r.t.Helper()
	if err := r.dev.Phone.LaunchApp("com.example.counter"); err != nil {
		r.t.Fatal(err)
	}
	r.agentTok = filepath.Join(r.t.TempDir(), "owner-token")
	m := r.expect(0, e2ePoll("agent-session-start", "--owner-token-out", r.agentTok, "--max-duration-ms", "600000", "--idle-timeout-ms", "300000")...)
	r.agentSID = cmdtest.Str(m, "sessionId")
	r.agentObs = cmdtest.Str(cmdtest.Obj(m, "observation"), "observationId")
}

func newCompatRig(t *testing.T, o sim.FarmOptions) *compatRig {
	t.Helper()
	r := newE2ERig(t, o)
	srv := httptest.NewServer(r.farm.ControlHandler())
	t.Cleanup(srv.Close)
	return &compatRig{e2eRig: r, control: srv.URL}
}

// fault injects one fault into the rig's device through the control
// endpoint, as a user of `solopi sim serve` would.
func (r *compatRig) fault(name, body string) {
	r.t.Helper()
	code, out := postJSON(r.t, r.control+"/v1/devices/"+r.dev.Serial()+"/"+name, body)
	if code != 200 {
		r.t.Fatalf("fault %s %s: HTTP %d %s", name, body, code, out)
	}
}

// postJSON posts body and returns the HTTP status and the answer.
func postJSON(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// writeFile writes a file under a fresh temporary directory.
func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Hardening 7 and 8: a negative step index and broken case JSON are local
// input errors (exit 3) with stable codes, never a silent append or a
// guessed meaning.
func TestE2ECaseFileInputErrors(t *testing.T) {
	t.Parallel()
	r := newCompatRig(t, sim.FarmOptions{})
	file := cmdtest.WriteCase(t, nil)
	step := writeFile(t, "step.json", []byte(`{"operationMethod":{"actionEnum":"BACK"}}`))
	out := filepath.Join(t.TempDir(), "new.json")
	for _, at := range []string{"-1", "-7"} {
		m := r.expect(3, "case-step-add", "--file", file, "--step-file", step, "--output", out, "--at", at)
		if cmdtest.Str(m, "errorCode") != "step_index_out_of_range" {
			t.Errorf("--at %s: %v", at, m)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused step-add wrote its output")
	}
	m := r.expect(0, "case-step-add", "--file", file, "--step-file", step, "--output", out)
	if cmdtest.Num(m, "affectedIndex") != 7 {
		t.Errorf("append without --at: %v", m)
	}

	// Latin-1 in a case name: refused with the byte offset, by every
	// command that reads a case file (before any device contact).
	latin1 := writeFile(t, "latin1.json", []byte(strings.Replace(string(demoCase), `"counter-smoke"`, "\"caf\xe9\"", 1)))
	for _, args := range [][]string{{"case-validate", "--file", latin1}, {"case-import", "--file", latin1, "--replace"}} {
		m := r.expect(3, args...)
		if cmdtest.Str(m, "errorCode") != "invalid_utf8" || m["offset"] == nil {
			t.Errorf("%s: %v", args[0], m)
		}
	}
	dup := writeFile(t, "dup.json", []byte(strings.Replace(string(demoCase), `"priority": 1,`, `"priority": 1, "priority": 2,`, 1)))
	for _, args := range [][]string{{"case-validate", "--file", dup}, {"case-import", "--file", dup, "--replace"}, {"case-step-list", "--file", dup}} {
		m := r.expect(3, args...)
		if cmdtest.Str(m, "errorCode") != "duplicate_key" || cmdtest.Str(m, "key") != "priority" {
			t.Errorf("%s: %v", args[0], m)
		}
	}
	// Nothing reached the device: the case list is still empty.
	if m := r.expect(0, "cases"); len(m["cases"].([]any)) != 0 {
		t.Errorf("a refused import reached the device: %v", m)
	}
}

// Compatibility 6: exit codes solopi-ai scripts branch on.
func TestE2ECompatExitCodes(t *testing.T) {
	t.Parallel()
	r := newCompatRig(t, sim.FarmOptions{})
	// perf-analyze of a directory without CSV files: 3.
	empty := t.TempDir()
	m := r.expect(3, "perf-analyze", "--input", empty)
	if cmdtest.Str(m, "errorCode") != "no_csv_files" {
		t.Errorf("perf-analyze: %v", m)
	}
	// config-get/config-set of a key SoloPi does not have: 2, as the
	// device's own answer.
	for _, args := range [][]string{{"config-get", "--key", "KEY_NOPE"}, {"config-set", "--key", "KEY_NOPE", "--value", "1"}} {
		m := r.expect(2, args...)
		if cmdtest.Str(m, "errorCode") != "unsupported_config" || cmdtest.Str(m, "key") != "KEY_NOPE" {
			t.Errorf("%s: %v", args[0], m)
		}
	}
	// A refused key carries the config object next to our fields.
	m = r.expect(2, "config-set", "--key", "KEY_CONTROL_PORT", "--value", "23343")
	if cfg := cmdtest.Obj(m, "config"); cmdtest.Str(cfg, "key") != "KEY_CONTROL_PORT" || cfg["writable"] != false {
		t.Errorf("config-set refusal: %v", m)
	}
	// No adb server and no adb executable: 3.
	res := runBinary(t, []string{"ANDROID_ADB_SERVER_PORT=1", "PATH=" + t.TempDir()}, "doctor")
	if res.code != 3 || !strings.Contains(string(res.stdout), `"errorCode":"adb_not_found"`) {
		t.Errorf("no adb: exit %d %s", res.code, res.stdout)
	}
}

// replaying reports whether the device runs a replay (its control lease).
func (r *compatRig) replaying() bool { return strings.HasPrefix(r.dev.App.LeaseHolder(), "harness:") }

// start runs a command in process in the background; wait returns its
// output and exit code, interrupt cancels it as a signal would.
func (r *compatRig) start(args ...string) (interrupt func(), wait func() cliRun) {
	r.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r.t.Cleanup(cancel)
	done := make(chan cmdtest.Result, 1)
	go func() { done <- r.cli.RunCtx(ctx, args...) }()
	return cancel, func() cliRun {
		res := <-done
		return cliRun{stdout: res.Stdout, stderr: res.Stderr, code: res.Code}
	}
}

// Compatibility 1: a CI job that reuses its workspace runs again. Our
// evidence set is replaced (the old manifest's files the new run does not
// write are removed, files of no manifest are kept, the JSON says what
// was replaced); a directory of someone else's files is refused unless
// --overwrite; a symlink is never written through. --output files are
// replaced as solopi-ai replaces them.
func TestE2EOutputsReplacedAsSolopiAi(t *testing.T) {
	t.Parallel()
	r := newCompatRig(t, sim.FarmOptions{Configure: e2eAutoStartOn})
	r.expect(0, "case-import", "--file", cmdtest.WriteCase(t, nil), "--replace")
	dir := filepath.Join(t.TempDir(), "evidence")
	first := r.expect(0, "run", "--case", demoCaseName, "--artifacts", dir)
	// The evidence names its device and renders as report.html, which
	// `solopi report` regenerates from the files alone.
	ev := cmdtest.Obj(first, "artifacts")
	if man := cmdtest.Manifest(t, dir); man.Extra["serial"] != r.dev.Serial() || man.Extra["model"] != "Pixel 7" || man.Extra["deviceUtcOffset"] != "+0000" {
		t.Errorf("manifest extras %v", man.Extra)
	}
	if cmdtest.Str(ev, "report") != filepath.Join(dir, "report.html") || cmdtest.Str(ev, "case") == "" {
		t.Fatalf("artifacts %v", ev)
	}
	os.Remove(filepath.Join(dir, "report.html"))
	if rep := r.expect(0, "report", dir); rep["kind"] != "run" || rep["report"] != filepath.Join(dir, "report.html") {
		t.Errorf("report: %v", rep)
	}
	shot := "device/002-counter-3.png"
	if _, err := os.Stat(filepath.Join(dir, shot)); err != nil {
		t.Fatalf("the passing run's device screenshot: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
	// The failing version stops before its SCREENSHOT step.
	r.expect(0, "case-import", "--file", cmdtest.FailingCase(t), "--replace")
	second := r.expect(2, "run", "--case", demoCaseName, "--artifacts", dir)
	rep := cmdtest.Obj(cmdtest.Obj(second, "artifacts"), "replaced")
	if rep["runId"] != first["runId"] || !slices.Contains(cmdtest.Strs(rep, "removed"), shot) {
		t.Fatalf("replaced %v", rep)
	}
	if _, err := os.Stat(filepath.Join(dir, shot)); err == nil {
		t.Error("the earlier run's screenshot is still there")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "mine" {
		t.Error("a file no manifest names was touched")
	}
	if m := cmdtest.Manifest(t, dir); m.RunID != second["runId"] {
		t.Errorf("manifest of %s, want %s", m.RunID, second["runId"])
	}
	// Someone else's directory: refused before the device is touched.
	foreign := t.TempDir()
	os.WriteFile(filepath.Join(foreign, "report.pdf"), []byte("x"), 0o644)
	if m := r.expect(3, "run", "--case", demoCaseName, "--artifacts", foreign); cmdtest.Str(m, "errorCode") != "artifacts_dir_not_empty" {
		t.Errorf("foreign directory: %v", m)
	}
	r.expect(2, "run", "--case", demoCaseName, "--artifacts", foreign, "--overwrite")
	if _, err := os.Stat(filepath.Join(foreign, "report.pdf")); err != nil {
		t.Error("--overwrite removed a file that is not ours")
	}
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(dir, link)
	if m := r.expect(3, "run", "--case", demoCaseName, "--artifacts", link); cmdtest.Str(m, "errorCode") != "unsafe_artifact_path" {
		t.Errorf("symlinked directory: %v", m)
	}

	// --output files: replaced, and the JSON says so.
	out := t.TempDir()
	for _, c := range []struct {
		file string
		args []string
	}{
		{"s.png", []string{"screenshot"}},
		{"l.txt", []string{"logs"}},
		{"c.json", []string{"case-get", "--case", demoCaseName}},
		{"t.json", []string{"case-template", "--name", "t", "--target-package", "com.example.counter"}},
		{"v.json", []string{"case-validate", "--file", cmdtest.WriteCase(t, nil)}},
	} {
		p := filepath.Join(out, c.file)
		os.WriteFile(p, []byte("old"), 0o644)
		m := r.expect(0, append(c.args, "--output", p)...)
		if !cmdtest.Bool(m, "outputReplaced") {
			t.Errorf("%s over an existing file: %v", c.args[0], m)
		}
		if b, _ := os.ReadFile(p); string(b) == "old" {
			t.Errorf("%s did not replace the file", c.args[0])
		}
		l := filepath.Join(out, "link-"+c.file)
		os.Symlink(p, l)
		if m := r.expect(3, append(c.args, "--output", l)...); cmdtest.Str(m, "errorCode") != "invalid_output_path" {
			t.Errorf("%s through a symlink: %v", c.args[0], m)
		}
	}
}

// Compatibility 3 and 4: a timed-out run is cancelled (ours, exactly) and
// keeps solopi-ai's runId and lastStatus; cancelling it again is
// idempotent; auto-start stays on, so doctor passes after the run.
func TestE2ERunTimeoutCancelAndAutoStart(t *testing.T) {
	t.Parallel()
	r := newCompatRig(t, sim.FarmOptions{})
	r.expect(0, "case-import", "--file", cmdtest.SlowCase(t, 600000), "--replace")
	m := r.expect(124, "run", "--case", demoCaseName, "--run-timeout", "1")
	runID := cmdtest.Str(m, "runId")
	last := cmdtest.Obj(m, "lastStatus")
	if runID == "" || cmdtest.Str(m, "errorCode") != "run_timeout" || last["runId"] != runID {
		t.Fatalf("timeout payload: %v", m)
	}
	if st := r.expect(0, "status"); st["state"] != "cancelled" || st["runId"] != runID {
		t.Fatalf("device after the timeout: %v", st)
	}
	c := r.expect(0, "cancel", "--run-id", runID)
	if c["idempotent"] != true || c["state"] != "cancelled" || c["cancelSent"] != false {
		t.Errorf("cancel of a cancelled run: %v", c)
	}
	// The fresh device had auto-start off: the run turned it on and it
	// stays on (solopi-ai's behaviour), so the device is ready afterwards.
	if as := cmdtest.Obj(m, "autoStart"); as["changed"] != true || as["previous"] != false {
		t.Errorf("autoStart %v", as)
	}
	if cfg := cmdtest.Obj(r.expect(0, "config-get", "--key", "KEY_REPLAY_AUTO_START"), "config"); cfg["value"] != true {
		t.Errorf("auto-start after the run: %v", cfg)
	}
	r.expect(0, "doctor")
}

// Compatibility 5 and the batch report: an early-stopping batch lists the
// runs that ran under results and the others under skipped (JUnit
// <skipped/>); failedRuns counts executed failures; batch.json and
// report.html are written and `solopi report` renders them again.
func TestE2EBatchStopsEarlyWithSkippedAndReport(t *testing.T) {
	t.Parallel()
	r := newCompatRig(t, sim.FarmOptions{Configure: e2eAutoStartOn})
	r.expect(0, "case-import", "--file", cmdtest.FailingCase(t), "--replace")
	root := t.TempDir()
	junit := filepath.Join(t.TempDir(), "junit.xml")
	m := r.expect(2, "run-repeat", "--case", demoCaseName, "--times", "3", "--artifacts", root, "--junit", junit)
	results, _ := m["results"].([]any)
	skipped, _ := m["skipped"].([]any)
	if len(results) != 1 || len(skipped) != 2 || cmdtest.Num(m, "failedRuns") != 1 || cmdtest.Num(m, "completedRuns") != 1 || !cmdtest.Bool(m, "stoppedEarly") {
		t.Fatalf("aggregate %v", m)
	}
	if s := skipped[0].(map[string]any); s["index"] != float64(2) || s["caseName"] != demoCaseName {
		t.Errorf("skipped %v", skipped)
	}
	raw, _ := os.ReadFile(junit)
	var doc artifacts.XMLTestsuites
	if err := xml.Unmarshal(raw, &doc); err != nil || doc.Tests != 3 || doc.Failures != 1 || doc.Skipped != 2 {
		t.Fatalf("junit %s: %v", raw, err)
	}
	batchDir := cmdtest.Str(m, "artifactsRoot")
	var summary map[string]any
	b, err := os.ReadFile(filepath.Join(batchDir, "batch.json"))
	if err != nil || json.Unmarshal(b, &summary) != nil || summary["batchId"] != m["batchId"] {
		t.Fatalf("batch.json: %v %s", err, b)
	}
	schematest.Validate(t, "run-batch", b)
	reportPath := cmdtest.Str(m, "report")
	sub := filepath.Join(batchDir, "001-"+demoCaseName)
	for _, p := range []string{reportPath, filepath.Join(sub, "report.html"), filepath.Join(sub, "case.json")} {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", p, err)
		}
	}
	// The reports regenerate from the evidence alone.
	os.Remove(reportPath)
	os.Remove(filepath.Join(sub, "report.html"))
	rep := r.expect(0, "report", batchDir)
	if rep["report"] != reportPath || rep["kind"] != "batch" {
		t.Errorf("report of the batch: %v", rep)
	}
	if _, err := os.Stat(filepath.Join(sub, "report.html")); err != nil {
		t.Errorf("the sub-run's report was not rewritten: %v", err)
	}
	if rep := r.expect(0, "report", sub); rep["kind"] != "run" {
		t.Errorf("report of the sub-run: %v", rep)
	}
}

// Compatibility 6 and 8: error objects keep solopi-ai's keys beside ours,
// and a recording's live durationMs passes our validator.
func TestE2EErrorPayloadsKeepSolopiAiKeys(t *testing.T) {
	t.Parallel()
	r := newCompatRig(t, sim.FarmOptions{Configure: e2eAutoStartOn})
	// result before any run: the idle snapshot's fields at the top level.
	m := r.expect(2, "result")
	if cmdtest.Str(m, "errorCode") != "no_run" || m["state"] != "idle" || m["active"] != false || m["terminal"] != false || m["results"] == nil {
		t.Errorf("result without a run: %v", m)
	}
	// run while another replay is active: run (solopi-ai) and activeRun.
	r.expect(0, "case-import", "--file", cmdtest.SlowCase(t, 600000), "--replace")
	r.fault("competing-replay", `{"caseName":"`+demoCaseName+`"}`)
	testwait.Until(t, 30*time.Second, "the competing replay", r.replaying)
	m = r.expect(2, "run", "--case", demoCaseName)
	other := cmdtest.Str(cmdtest.Obj(m, "activeRun"), "runId")
	if cmdtest.Str(m, "errorCode") != "replay_active" || cmdtest.Obj(m, "run")["state"] != "running" || other == "" || cmdtest.Obj(m, "run")["runId"] != other {
		t.Errorf("run during another replay: %v", m)
	}
	r.expect(0, e2ePoll("cancel", "--run-id", other)...)
	// perf-start while a recording is active: performance beside
	// latestPerformance.
	r.expect(0, e2ePoll("perf-start", "--global", "--items", "CPU")...)
	m = r.expect(2, e2ePoll("perf-start", "--global", "--items", "CPU")...)
	if cmdtest.Obj(m, "performance")["state"] != "recording" || cmdtest.Obj(m, "latestPerformance") == nil {
		t.Errorf("second perf-start: %v", m)
	}
	// adb-connect refused because more than adb is missing: connected and
	// requiredUserAction as solopi-ai prints them.
	r.fault("permission", `{"name":"accessibility","granted":false}`)
	m = r.expect(2, "adb-connect")
	if cmdtest.Str(m, "errorCode") != "adb_connect_precondition_failed" || m["connected"] != false || cmdtest.Str(m, "requiredUserAction") == "" {
		t.Errorf("adb-connect precondition: %v", m)
	}
	r.fault("permission", `{"name":"accessibility","granted":true}`)
	// screen-record-start that times out on the MediaProjection dialog:
	// top-level userActionRequired and requiredUserAction.
	m = r.expect(124, e2ePoll("screen-record-start", "--ack-timeout", "1")...)
	if cmdtest.Str(m, "userActionRequired") == "" || cmdtest.Str(m, "requiredUserAction") != "Confirm the Android MediaProjection system dialog" {
		t.Errorf("screen-record-start timeout: %v", m)
	}
	// A live recording's durationMs passes the status validator.
	r.dev.App.SetScreenRecordAutoConfirm(true)
	m = r.expect(0, e2ePoll("screen-record-start")...)
	st := r.expect(0, "screen-record-status", "--session-id", cmdtest.Str(m, "sessionId"))
	if st["state"] != "recording" || st["durationMs"] == nil {
		t.Errorf("recording status: %v", st)
	}
	r.expect(0, e2ePoll("screen-record-stop", "--session-id", cmdtest.Str(m, "sessionId"))...)
	// agent-session-start whose session fails at once: the owner token
	// comes with the error, so the script can clean up.
	r.fault("touch-service", `{"available":false}`)
	m = r.expect(2, e2ePoll("agent-session-start")...)
	if cmdtest.Str(m, "ownerToken") == "" || cmdtest.Str(m, "sessionId") == "" {
		t.Errorf("failed agent-session-start: %v", m)
	}
}

// Hardening 1: an output that cannot be written is refused before the
// device is touched (exit 3, output_not_writable). A read-only directory
// binds only users other than root: as root the binary runs as nobody.
func TestE2EUnwritableOutputsRefusedBeforeTheDevice(t *testing.T) {
	t.Parallel()
	r := newCompatRig(t, sim.FarmOptions{Configure: e2eAutoStartOn})
	r.expect(0, "case-import", "--file", cmdtest.WriteCase(t, nil), "--replace")
	base, err := os.MkdirTemp("", "solopi-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(base, "ro"), 0o755); os.RemoveAll(base) })
	ro := filepath.Join(base, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	run := r.run
	if os.Geteuid() == 0 {
		// Root ignores permission bits: the same binary as nobody.
		bin := filepath.Join(base, "solopi")
		data, err := os.ReadFile(binPath)
		if err != nil || os.WriteFile(bin, data, 0o755) != nil || os.Chmod(base, 0o755) != nil {
			t.Fatalf("copy the binary: %v", err)
		}
		run = func(args ...string) cliRun {
			cmd := exec.Command(bin, args...)
			cmd.Env = append(os.Environ(), r.env...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			var out bytes.Buffer
			cmd.Stdout = &out
			err := cmd.Run()
			res := cliRun{stdout: out.Bytes()}
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				res.code = ee.ExitCode()
			} else if err != nil {
				t.Fatalf("run as nobody: %v", err)
			}
			return res
		}
	}
	for _, args := range [][]string{
		{"run", "--case", demoCaseName, "--artifacts", filepath.Join(ro, "evidence")},
		{"run", "--case", demoCaseName, "--artifacts", ro},
		{"run", "--case", demoCaseName, "--junit", filepath.Join(ro, "junit.xml")},
		{"run-batch", "--case", demoCaseName, "--artifacts", ro},
		{"screenshot", "--output", filepath.Join(ro, "s.png")},
		{"logs", "--output", filepath.Join(ro, "sub", "l.txt")},
		{"case-get", "--case", demoCaseName, "--output", filepath.Join(ro, "c.json")},
	} {
		res := run(args...)
		if res.code != 3 || !strings.Contains(string(res.stdout), `"errorCode":"output_not_writable"`) {
			t.Errorf("%v: exit %d %s", args, res.code, res.stdout)
		}
		schematest.Validate(t, args[0], res.stdout)
	}
	if entries, _ := os.ReadDir(ro); len(entries) != 0 {
		t.Errorf("the refused commands left %v", entries)
	}
	// No replay was started: the device has no run at all.
	if st := r.expect(0, "status"); st["state"] != "idle" || st["runId"] != nil {
		t.Errorf("the device was touched: %v", st)
	}
}

// Hardening 2: a stalled screencap costs only its own deadline (the other
// items are collected meanwhile), and Ctrl-C during the collection ends
// the command at once with the verdict and what was collected.
func TestE2EStalledEvidenceCommands(t *testing.T) {
	t.Parallel()
	r := newCompatRig(t, sim.FarmOptions{Configure: e2eAutoStartOn})
	r.expect(0, "case-import", "--file", cmdtest.WriteCase(t, nil), "--replace")
	r.fault("command-stall", `{"command":"screencap","hang":true}`)
	dir := filepath.Join(t.TempDir(), "evidence")
	m := r.expect(0, "run", "--case", demoCaseName, "--artifacts", dir, "--evidence-timeout", "0.5")
	ev := cmdtest.Obj(m, "artifacts")
	errs := strings.Join(cmdtest.Strs(ev, "errors"), "\n")
	if ev["complete"] != false || !strings.Contains(errs, "screen.png: no answer within the evidence deadline") || cmdtest.Str(ev, "logcat") == "" || cmdtest.Str(ev, "screenshot") != "" {
		t.Fatalf("artifacts with a stalled screencap: %v", ev)
	}
	if man := cmdtest.Manifest(t, dir); man.Complete || !slices.ContainsFunc(man.Files, func(f artifacts.FileEntry) bool { return f.Path == "logcat.txt" }) {
		t.Errorf("manifest %+v", man)
	}

	// Ctrl-C while the screenshot hangs (the default 10 s deadline): the
	// run's verdict, the logcat and an incomplete manifest, the screenshot
	// marked interrupted rather than out of its deadline.
	dir = filepath.Join(t.TempDir(), "evidence")
	interrupt, wait := r.start("run", "--case", demoCaseName, "--artifacts", dir)
	testwait.Until(t, 30*time.Second, "the logcat of the collection", func() bool {
		_, err := os.Stat(filepath.Join(dir, "logcat.txt"))
		return err == nil
	})
	interrupt()
	res := wait()
	schematest.Validate(t, "run", res.stdout)
	m = decodeObject(t, res)
	ev = cmdtest.Obj(m, "artifacts")
	if res.code != 0 || m["state"] != "passed" || ev["complete"] != false || !strings.Contains(strings.Join(cmdtest.Strs(ev, "errors"), "\n"), "screen.png: interrupted") {
		t.Fatalf("interrupted collection: exit %d %s", res.code, res.stdout)
	}
	if man := cmdtest.Manifest(t, dir); man.Complete || man.RunID != m["runId"] {
		t.Errorf("manifest %+v", man)
	}
	r.fault("command-stall", `{"command":"screencap","release":true}`)
}

// Hardening 3 and 4: a run that loses its device or its app still writes
// what is known (the last status, the runId, an incomplete manifest). An
// app restart is the run being lost (run_lost, exit 4), never "replaced"
// with a stale state:"running".
func TestE2ERunLostOrUnreachableKeepsEvidence(t *testing.T) {
	t.Parallel()
	r := newCompatRig(t, sim.FarmOptions{Configure: e2eAutoStartOn, TimeScale: 10})
	r.expect(0, "case-import", "--file", cmdtest.SlowCase(t, 600000), "--replace")

	// SoloPi restarts mid-run: once the replay has been running for 2 s of
	// device time (the CLI claims it within tens of milliseconds).
	dir := filepath.Join(t.TempDir(), "restart")
	_, wait := r.start("run", "--case", demoCaseName, "--artifacts", dir)
	testwait.Until(t, 30*time.Second, "the replay", r.replaying)
	r.dev.Clock().Sleep(context.Background(), 2*time.Second)
	r.fault("restart-app", "")
	res := wait()
	schematest.Validate(t, "run", res.stdout)
	m := decodeObject(t, res)
	runID := cmdtest.Str(m, "runId")
	if res.code != 4 || cmdtest.Str(m, "errorCode") != "run_lost" || runID == "" || m["state"] != nil || cmdtest.Obj(m, "lastStatus")["runId"] != runID {
		t.Fatalf("app restart mid-run: exit %d %s", res.code, res.stdout)
	}
	checkLostEvidence(t, dir, runID, "run_lost")

	// The device drops off adb mid-run: after --unreachable-timeout the
	// run ends as a transport failure, evidence written all the same.
	dir = filepath.Join(t.TempDir(), "offline")
	_, wait = r.start("run", "--case", demoCaseName, "--artifacts", dir, "--unreachable-timeout", "1", "--evidence-timeout", "1")
	testwait.Until(t, 30*time.Second, "the replay", r.replaying)
	r.dev.Clock().Sleep(context.Background(), 2*time.Second)
	r.fault("adb-state", `{"state":"offline"}`)
	res = wait()
	r.fault("adb-state", `{"state":"device"}`)
	schematest.Validate(t, "run", res.stdout)
	m = decodeObject(t, res)
	runID = cmdtest.Str(m, "runId")
	if res.code != 4 || runID == "" || cmdtest.Obj(m, "lastStatus")["state"] != "running" || m["state"] != nil {
		t.Fatalf("device offline mid-run: exit %d %s", res.code, res.stdout)
	}
	checkLostEvidence(t, dir, runID, cmdtest.Str(m, "errorCode"))
}

// checkLostEvidence: the last status of runID and a manifest marked
// incomplete with the failure's code.
func checkLostEvidence(t *testing.T, dir, runID, code string) {
	t.Helper()
	man := cmdtest.Manifest(t, dir)
	if man.Complete || man.RunID != runID || man.Extra["errorCode"] != code {
		t.Errorf("manifest %+v", man)
	}
	var st map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil || json.Unmarshal(b, &st) != nil || st["runId"] != runID || st["state"] != "running" {
		t.Errorf("result.json: %v %s", err, b)
	}
}

// Hardening 5: a run while an Agent session holds the device is a lease
// conflict (exit 2, JUnit <error>), not a failure of a case that never ran.
func TestE2ERunDuringAgentSessionIsLeaseConflict(t *testing.T) {
	t.Parallel()
	r := newCompatRig(t, sim.FarmOptions{Configure: e2eAutoStartOn, TimeScale: 5})
	r.expect(0, "case-import", "--file", cmdtest.WriteCase(t, nil), "--replace")
	if err := r.dev.Phone.LaunchApp("com.example.counter"); err != nil {
		t.Fatal(err)
	}
	tok := filepath.Join(t.TempDir(), "owner-token")
	start := r.expect(0, e2ePoll("agent-session-start", "--owner-token-out", tok, "--max-duration-ms", "600000", "--idle-timeout-ms", "300000")...)
	sid := cmdtest.Str(start, "sessionId")
	obs := cmdtest.Str(cmdtest.Obj(start, "observation"), "observationId")
	junit := filepath.Join(t.TempDir(), "junit.xml")
	m := r.expect(2, "run", "--case", demoCaseName, "--junit", junit)
	if cmdtest.Str(m, "errorCode") != "lease_conflict" || cmdtest.Str(m, "userActionRequired") == "" || cmdtest.Str(m, "runId") == "" {
		t.Fatalf("run during an Agent session: %v", m)
	}
	raw, _ := os.ReadFile(junit)
	var doc artifacts.XMLTestsuites
	if err := xml.Unmarshal(raw, &doc); err != nil || doc.Errors != 1 || doc.Failures != 0 {
		t.Fatalf("junit %s: %v", raw, err)
	}
	// Hardening 6: a stepId reused for another action is a conflict, not
	// the first action's receipt; the same action is the stored receipt.
	if err := r.dev.Phone.LaunchApp("com.example.counter"); err != nil {
		t.Fatal(err)
	}
	wait := []string{"agent-act", "--session-id", sid, "--owner-token-file", tok, "--step-id", "s1", "--observation-id", obs, "--action", "wait", "--duration-ms", "100"}
	a := r.expect(0, e2ePoll(wait...)...)
	if cmdtest.Obj(a, "receipt")["status"] != "succeeded" {
		t.Fatalf("agent-act: %v", a)
	}
	if a = r.expect(0, e2ePoll(wait...)...); a["replayed"] != true {
		t.Errorf("retry of the same step: %v", a)
	}
	c := r.expect(2, e2ePoll("agent-act", "--session-id", sid, "--owner-token-file", tok, "--step-id", "s1", "--observation-id", obs, "--action", "back")...)
	if cmdtest.Str(c, "errorCode") != "step_id_conflict" || cmdtest.Str(c, "stepId") != "s1" {
		t.Errorf("reused stepId: %v", c)
	}
	r.expect(0, e2ePoll("agent-end", "--session-id", sid, "--owner-token-file", tok)...)
}

// Hardening 9: the decrypted value of an encrypted parameter, echoed by
// the device in a failing ASSERT's message and its running.log, reaches
// no output: not stdout, result.json, case.json, JUnit, logcat.txt or the
// pulled device log; case-get shows it only with --show-secrets. With
// case-import's record the exact values are hidden; without one, the
// input-bearing parameters.
func TestE2EEncryptedParametersNeverLeak(t *testing.T) {
	t.Parallel()
	r := newCompatRig(t, sim.FarmOptions{Configure: e2eAutoStartOn})
	const secret = "Hunter2-Counting-Secret"
	file := cmdtest.WriteCase(t, func(s string) string {
		return strings.Replace(s, `"operationParam": {"assertMode": "assert_contain", "assertInputContent": "Counting"}, "encrypt": false`,
			`"operationParam": {"assertMode": "assert_contain", "assertInputContent": "`+paramcrypt.Encrypt(paramcrypt.DefaultSeed, secret)+`"}, "encrypt": true`, 1)
	})
	m := r.expect(0, "case-import", "--file", file, "--replace")
	if red := cmdtest.Obj(m, "redaction"); red["encryptedParams"] != float64(2) || cmdtest.Str(red, "record") == "" {
		t.Fatalf("case-import redaction record: %v", m)
	}
	// The device really echoes the secret: the run fails on it.
	check := func(basis string) {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "evidence")
		junit := filepath.Join(t.TempDir(), "junit.xml")
		m := r.expect(2, "run", "--case", demoCaseName, "--artifacts", dir, "--junit", junit)
		if red := cmdtest.Obj(m, "redaction"); red["basis"] != basis || cmdtest.Num(red, "values") < 1 {
			t.Errorf("redaction %v", red)
		}
		if !strings.Contains(string(r.outs[len(r.outs)-1].stdout), casefile.Redacted) {
			t.Errorf("the failing step's message was not redacted: %s", r.outs[len(r.outs)-1].stdout)
		}
		files := []string{junit}
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, p)
			}
			return nil
		})
		sawLog := false
		for _, p := range files {
			b, _ := os.ReadFile(p)
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds the secret", p)
			}
			sawLog = sawLog || strings.HasSuffix(p, ".log") && bytes.Contains(b, []byte(casefile.Redacted))
		}
		if !sawLog {
			t.Errorf("no redacted device log among %v", files)
		}
	}
	check("import_record")
	// status and result print the same snapshot: redacted too.
	for _, cmd := range []string{"status", "result"} {
		if res := r.run(cmd); !bytes.Contains(res.stdout, []byte(casefile.Redacted)) {
			t.Errorf("%s: exit %d %s", cmd, res.code, res.stdout)
		}
	}
	// case-get: every parameter redacted unless --show-secrets.
	if g := r.expect(0, "case-get", "--case", demoCaseName); cmdtest.Num(g, "redactedParams") == 0 {
		t.Errorf("case-get: %v", g)
	}
	r.requireNoOutputContains(secret)
	if g := r.run("case-get", "--case", demoCaseName, "--show-secrets"); g.code != 0 || !bytes.Contains(g.stdout, []byte(secret)) {
		t.Errorf("case-get --show-secrets: exit %d", g.code)
	}
	r.outs = r.outs[:len(r.outs)-1]
	// Without the record (another computer, a case imported elsewhere):
	// the input-bearing parameters, the assertion's content among them.
	r.cli.UseSecrets(filepath.Join(t.TempDir(), "empty-cache"))
	check("input_parameters")
	r.requireNoOutputContains(secret)
}

// upstreamType is the JSON type of v as solopi-ai's error objects are
// described: integer apart from number, null as its own type.
func upstreamType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// upstreamErrorCase is one error path of a device command, run on the
// simulator, with the fields solopi-ai's error object has there (from
// solopi-ai v1.0.2: the fields its error objects carry there) and
// their JSON types. Ours must carry each under that name with that type;
// what we add beside them is free.
type upstreamErrorCase struct {
	name   string
	setup  func(r *compatRig) []string // the command line (after setup)
	exit   int
	fields map[string]string // path → type ("number" accepts integers, "any" any value)
}

// Every device command's error paths, on the simulator: the error
// objects carry solopi-ai's field names with solopi-ai's types.
func TestE2EErrorObjectsCarryUpstreamFields(t *testing.T) {
	t.Parallel()
	// The Agent rows start sessions: SoloPi waits 5 s of device time for
	// a controllable root while the host brings the app back over the
	// scheme activity, so the device's clock must not outrun a loaded
	// host (at 40× those 5 s were 125 ms of wall time).
	r := newCompatRig(t, sim.FarmOptions{Configure: e2eAutoStartOn, TimeScale: 5})
	// A receipt the fault drops never comes: how long the command waits
	// for it changes nothing but the test's time.
	const lostTimeout = "0.3"
	args := func(a ...string) func(*compatRig) []string { return func(*compatRig) []string { return a } }
	dir := t.TempDir()
	csvDir := func(name, content string) string {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if content != "" {
			if err := os.WriteFile(filepath.Join(d, "m.csv"), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	emptyZip := filepath.Join(dir, "empty.zip")
	if err := os.WriteFile(emptyZip, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	const bogusSession = "bogus-session-0001"
	mismatch := func(cmd, latest string) upstreamErrorCase {
		return upstreamErrorCase{cmd + " of another session", args(cmd, "--session-id", bogusSession), 2,
			map[string]string{"expectedSessionId": "string", latest: "object"}}
	}
	cases := []upstreamErrorCase{
		// config-set: value checks (exit 3) and refusals (exit 2).
		{"config-set bad boolean", args("config-set", "--key", "KEY_REPLAY_AUTO_START", "--value", "maybe"), 3, map[string]string{"key": "string"}},
		{"config-set out of range", args("config-set", "--key", "KEY_USE_LANGUAGE", "--value", "7"), 3,
			map[string]string{"key": "string", "min": "integer", "max": "integer"}},
		{"config-set upload key", args("config-set", "--key", "KEY_ADB_SERVER", "--value", "10.0.0.1:5555"), 2, map[string]string{"key": "string"}},
		{"config-set sensitive key", args("config-set", "--key", "KEY_AES_KEY", "--value", "x"), 2,
			map[string]string{"config": "object", "config.key": "string", "config.description": "string", "config.redacted": "boolean", "config.sensitive": "boolean"}},
		{"config-set control port", args("config-set", "--key", "KEY_CONTROL_PORT", "--value", "23343"), 2,
			map[string]string{"config.description": "string", "config.default": "integer", "config.value": "integer", "config.writable": "boolean"}},
		{"config-set migration key", args("config-set", "--key", "KEY_BASE_DIR", "--value", "/sdcard/x"), 2,
			map[string]string{"config.description": "string", "config.default": "string", "config.value": "string", "config.redacted": "boolean"}},
		// perf history, plugins, stress: local checks.
		{"perf-history-list limit", args("perf-history-list", "--limit", "0"), 3, map[string]string{"limit": "integer"}},
		{"perf-history-get id", args("perf-history-get", "--id", "../x"), 3, map[string]string{"kind": "string", "id": "string"}},
		{"plugin-remove id", args("plugin-remove", "--id", "x"), 3, map[string]string{"pluginId": "string"}},
		{"plugin-install not a zip", args("plugin-install", "--file", filepath.Join(dir, "p.txt")), 3, map[string]string{"file": "string"}},
		{"plugin-install empty zip", args("plugin-install", "--file", emptyZip), 3, map[string]string{"sizeBytes": "integer"}},
		{"stress-start cpu percent", args("stress-start", "--cpu-count", "1", "--cpu-percent", "101"), 3, map[string]string{"cpuPercent": "integer"}},
		{"stress-start memory", args("stress-start", "--memory", "5000"), 3, map[string]string{"memory": "integer", "maxMemory": "integer"}},
		{"stress-start duration", args("stress-start", "--memory", "10", "--duration", "4000"), 3, map[string]string{"duration": "integer", "maxDuration": "integer"}},
		{"stress-start cpu count", args("stress-start", "--cpu-count", "999", "--cpu-percent", "50"), 3, map[string]string{"cpuCount": "integer", "maxCpuCount": "integer"}},
		// perf-analyze: the input directory and the CSV files.
		{"perf-analyze missing input", args("perf-analyze", "--input", filepath.Join(dir, "nope")), 3, map[string]string{"input": "string"}},
		{"perf-analyze no CSV", args("perf-analyze", "--input", csvDir("none", "")), 3, map[string]string{"input": "string"}},
		{"perf-analyze duplicate headers", args("perf-analyze", "--input", csvDir("dup", "a,b,a\n1,2,3\n")), 3,
			map[string]string{"file": "string", "duplicateHeaders": "array"}},
		{"perf-analyze long row", args("perf-analyze", "--input", csvDir("long", "a,b\n1,2\n1,2,3\n")), 3,
			map[string]string{"file": "string", "row": "integer", "expectedColumns": "integer", "actualColumns": "integer"}},
		{"perf-analyze NUL", args("perf-analyze", "--input", csvDir("nul", "a,b\n1,\x002\n")), 3, map[string]string{"file": "string"}},
		// startup-time: the launcher cannot be resolved, am start fails.
		{"startup-time no launcher", args("startup-time", "--target-package", "com.example.absent"), 4,
			map[string]string{"targetPackage": "string", "attempts": "array", "attempts.0.command": "array", "attempts.0.returnCode": "integer",
				"attempts.0.stdout": "string", "attempts.0.stderr": "string", "attempts.1.command.0": "string"}},
		{"startup-time launch failure", func(r *compatRig) []string {
			r.fault("command-output", `{"command":"am","args":["start","-W"],"outputs":[{"stdout":"Starting: Intent\n","stderr":"Error: Activity not started","exit":1}]}`)
			return []string{"startup-time", "--target-package", "com.example.counter", "--iterations", "1"}
		}, 4, map[string]string{"targetPackage": "string", "component": "string", "mode": "string", "returnCode": "integer", "stdout": "string", "stderr": "string"}},
		// perf-start of an item the device does not have.
		{"perf-start unsupported item", args(e2ePoll("perf-start", "--global", "--items", "CPU,NOPE")...), 2,
			map[string]string{"unsupportedItems": "array", "availableItems": "array"}},
		// video-analysis-start with a local path.
		{"video-analysis-start local path", args("video-analysis-start", "--video-path", "/tmp/x.mp4", "--action-offset-ms", "0", "--difference-threshold", "0.5"), 3,
			map[string]string{"videoPath": "string"}},
		// status of a session that is not the latest.
		mismatch("perf-status", "latestPerformance"),
		mismatch("perf-display-status", "latestPerformanceDisplay"),
		mismatch("record-status", "latestRecording"),
		mismatch("scan-status", "latestScan"),
		mismatch("screen-record-status", "latestScreenRecording"),
		mismatch("stress-status", "latestStress"),
		// stop of a session that is not the latest.
		{"perf-stop of another session", args(e2ePoll("perf-stop", "--session-id", bogusSession)...), 2,
			map[string]string{"expectedSessionId": "string", "latestPerformance": "object"}},
		{"screen-record-stop of another session", args(e2ePoll("screen-record-stop", "--session-id", bogusSession)...), 2,
			map[string]string{"expectedSessionId": "string", "latestScreenRecording": "object"}},
		{"stress-stop of another session", args(e2ePoll("stress-stop", "--session-id", bogusSession)...), 2,
			map[string]string{"expectedSessionId": "string", "latestStress": "object"}},
		{"record-stop of another session", args(e2ePoll("record-stop", "--session-id", bogusSession)...), 2,
			map[string]string{"expectedSessionId": "string", "latestRecording": "object"}},
		{"scan-cancel of another session", args(e2ePoll("scan-cancel", "--session-id", bogusSession)...), 2,
			map[string]string{"expectedSessionId": "string", "latestScan": "object"}},
		{"perf-display-stop of another session", args(e2ePoll("perf-display-stop", "--session-id", bogusSession)...), 2,
			map[string]string{"expectedSessionId": "string", "latestPerformanceDisplay": "object"}},
		// Bad identifiers and bounds, refused before the device.
		{"video-analysis-start offset", args("video-analysis-start", "--video-path", "/sdcard/Movies/ScreenCaptures/x.mp4", "--action-offset-ms", "4000000", "--difference-threshold", "0.5"), 3,
			map[string]string{"actionOffsetMs": "integer"}},
		{"video-analysis-start threshold", args("video-analysis-start", "--video-path", "/sdcard/Movies/ScreenCaptures/x.mp4", "--action-offset-ms", "0", "--difference-threshold", "1.5"), 3,
			map[string]string{"differenceThreshold": "number"}},
		{"video-analysis-status request id", args("video-analysis-status", "--request-id", "../x"), 3, map[string]string{"requestId": "string"}},
		{"scan-status session id", args("scan-status", "--session-id", "../x"), 3, map[string]string{"sessionId": "string"}},
		{"screen-record-status session id", args("screen-record-status", "--session-id", "../x"), 3, map[string]string{"sessionId": "string"}},
		{"perf-display-status session id", args("perf-display-status", "--session-id", "../x"), 3, map[string]string{"sessionId": "string"}},
		{"screen-record-start bitrate", args("screen-record-start", "--bitrate-kbps", "50"), 3, map[string]string{"field": "string", "value": "integer"}},
		{"perf-display-start unsupported item", args(e2ePoll("perf-display-start", "--global", "--items", "NOPE")...), 2,
			map[string]string{"unsupportedItems": "array", "availableItems": "array"}},
		// Receipts SoloPi never publishes: the mutation timeouts.
		{"perf-history-delete lost", func(r *compatRig) []string {
			r.fault("mutation-fault", `{"action":"history","query":{"action":"deletePerformance"},"drop":true,"times":1}`)
			return e2ePoll("perf-history-delete", "--id", "performance-"+strings.Repeat("0", 64), "--delete-timeout", lostTimeout)
		}, 124, map[string]string{"requestId": "string", "kind": "string", "id": "string", "lastResponse": "any"}},
		{"plugin-remove lost", func(r *compatRig) []string {
			r.fault("mutation-fault", `{"action":"plugin","query":{"action":"remove"},"drop":true,"times":1}`)
			return e2ePoll("plugin-remove", "--id", "plugin-"+strings.Repeat("0", 64), "--remove-timeout", lostTimeout)
		}, 124, map[string]string{"requestId": "string", "action": "string", "lastResponse": "any"}},
		{"record-start lost", func(r *compatRig) []string {
			r.fault("mutation-fault", `{"action":"record","drop":true,"times":1}`)
			return e2ePoll("record-start", "--name", "rec-lost", "--target-package", "com.example.counter", "--ack-timeout", lostTimeout)
		}, 124, map[string]string{"sessionId": "string", "lastStatus": "any"}},
		{"scan-start lost", func(r *compatRig) []string {
			r.fault("mutation-fault", `{"action":"scan","query":{"action":"start"},"drop":true,"times":1}`)
			return e2ePoll("scan-start", "--ack-timeout", lostTimeout)
		}, 124, map[string]string{"sessionId": "string", "lastStatus": "any"}},
		// Outputs that exist already: refused before the device, with
		// the path.
		{"screen-record-stop output exists", args("screen-record-stop", "--session-id", bogusSession, "--output", emptyZip), 3, map[string]string{"output": "string"}},
		{"perf-stop output exists", args("perf-stop", "--session-id", bogusSession, "--output", dir), 3, map[string]string{"output": "string"}},
		// adb output failures: adb's stderr.
		{"screenshot fails", func(r *compatRig) []string {
			r.fault("command-output", `{"command":"screencap","outputs":[{"stderr":"screencap: boom","exit":1}]}`)
			return []string{"screenshot", "--output", filepath.Join(dir, "s.png")}
		}, 4, map[string]string{"stderr": "string"}},
		{"logs fails", func(r *compatRig) []string {
			r.fault("command-output", `{"command":"logcat","outputs":[{"stderr":"logcat: boom","exit":1}]}`)
			return []string{"logs", "--output", filepath.Join(dir, "l.txt")}
		}, 4, map[string]string{"stderr": "string"}},
		// am start refuses the protected activity: the scheme command
		// failed, with am's output (the intent's parameters hidden).
		{"scheme command refused", func(r *compatRig) []string {
			r.fault("command-output", `{"command":"am","args":["start","-W","-n","com.alipay.hulu/com.alipay.hulu.common.scheme.AdbSchemeActivity"],`+
				`"outputs":[{"stdout":"Starting: Intent { dat=solopi://startaction/stress?action=start&sessionId=s-1 }","stderr":"Error: Activity not started, unable to resolve Intent","exit":0}]}`)
			return e2ePoll("stress-start", "--memory", "10")
		}, 4, map[string]string{"action": "string", "stdout": "string", "stderr": "string"}},
		{"startup-time bad package", args("startup-time", "--target-package", "not a package"), 3, map[string]string{"targetPackage": "string"}},
		{"adb-connect lost", func(r *compatRig) []string {
			r.fault("permission", `{"name":"adb","granted":false}`)
			r.fault("mutation-fault", `{"action":"harness","query":{"type":"adb-connect"},"drop":true,"times":1}`)
			return []string{"adb-connect", "--connect-timeout", lostTimeout, "--poll-interval", "0.05"}
		}, 124, map[string]string{"requestId": "string", "lastStatus": "any", "requiredUserAction": "string"}},
		{"video-analysis-start lost", func(r *compatRig) []string {
			r.fault("mutation-fault", `{"action":"video-analysis","drop":true,"times":1}`)
			return e2ePoll("video-analysis-start", "--video-path", "/sdcard/Movies/ScreenCaptures/x.mp4", "--action-offset-ms", "0",
				"--difference-threshold", "0.5", "--ack-timeout", lostTimeout)
		}, 124, map[string]string{"requestId": "string", "phase": "string", "lastResponse": "any"}},
		// A setting SoloPi never confirms.
		{"config-set not confirmed", func(r *compatRig) []string {
			r.dev.App.SetConfigWriteIgnored("KEY_MAX_WAIT_TIME", true)
			return []string{"config-set", "--key", "KEY_MAX_WAIT_TIME", "--value", "30000", "--ack-timeout", "0.5", "--poll-interval", "0.05"}
		}, 2, map[string]string{"key": "string", "expectedValue": "string", "lastConfig": "object", "phase": "string"}},
		// Starts whose intent SoloPi never sees: the ack timeouts.
		{"agent-session-start lost", func(r *compatRig) []string {
			r.fault("mutation-fault", `{"action":"agent","query":{"type":"start"},"drop":true,"times":1}`)
			return e2ePoll("agent-session-start", "--ack-timeout", lostTimeout)
		}, 124, map[string]string{"sessionId": "null", "lastStatus": "object"}},
		{"perf-start lost", func(r *compatRig) []string {
			r.fault("mutation-fault", `{"action":"performance","query":{"action":"start"},"drop":true,"times":1}`)
			return e2ePoll("perf-start", "--global", "--items", "CPU", "--ack-timeout", lostTimeout)
		}, 124, map[string]string{"sessionId": "string", "lastStatus": "any", "lastTransportError": "null"}},
		// adb-connect when more than adb is missing.
		{"adb-connect precondition", func(r *compatRig) []string {
			r.fault("permission", `{"name":"accessibility","granted":false}`)
			return []string{"adb-connect"}
		}, 2, map[string]string{"connected": "boolean", "requiredUserAction": "string"}},
		// Agent: an act and an end whose intents SoloPi never sees.
		{"agent-act lost", func(r *compatRig) []string {
			r.agentSession()
			r.fault("mutation-fault", `{"action":"agent","query":{"type":"act"},"drop":true,"times":1}`)
			return e2ePoll("agent-act", "--session-id", r.agentSID, "--owner-token-file", r.agentTok, "--step-id", "lost-1",
				"--observation-id", r.agentObs, "--action", "wait", "--duration-ms", "100", "--action-timeout", lostTimeout)
		}, 124, map[string]string{"sessionId": "string", "stepId": "string", "lastReceipt": "any"}},
		{"agent-end lost", func(r *compatRig) []string {
			r.agentSession() // the act timeout cancelled the last one
			r.fault("mutation-fault", `{"action":"agent","query":{"type":"end"},"drop":true,"times":1}`)
			return e2ePoll("agent-end", "--session-id", r.agentSID, "--owner-token-file", r.agentTok, "--ack-timeout", lostTimeout)
		}, 124, map[string]string{"sessionId": "string", "lastStatus": "object"}},
		// SoloPi's control service never answers: lastError is text.
		{"control service not ready", func(r *compatRig) []string {
			r.fault("refuse-dial", `{"times":1000000}`)
			return []string{"capabilities"}
		}, 4, map[string]string{"lastError": "string"}},
	}
	for _, c := range cases {
		a := c.setup(r)
		if c.name == "control service not ready" {
			globals := r.cli.Globals
			r.cli.Globals = append(slices.Clone(globals), "--startup-timeout", lostTimeout)
			defer func() { r.cli.Globals = globals }()
		}
		res := r.run(a...)
		if res.code != c.exit {
			t.Errorf("%s: exit %d, want %d: %s", c.name, res.code, c.exit, res.stdout)
			continue
		}
		schematest.Validate(t, a[0], res.stdout)
		m := decodeObject(t, res)
		if m["success"] != false || cmdtest.Str(m, "errorCode") == "" || cmdtest.Str(m, "error") == "" {
			t.Errorf("%s: not an error object: %s", c.name, res.stdout)
		}
		// Put back what a case's setup changed on the phone.
		switch c.name {
		case "config-set not confirmed":
			r.dev.App.SetConfigWriteIgnored("KEY_MAX_WAIT_TIME", false)
		case "adb-connect precondition":
			r.fault("permission", `{"name":"accessibility","granted":true}`)
		case "adb-connect lost":
			r.fault("permission", `{"name":"adb","granted":true}`)
		}
		for path, want := range c.fields {
			at := gjson.GetBytes(res.stdout, path)
			v := at.Value()
			got := upstreamType(v)
			if !at.Exists() {
				t.Errorf("%s: no %s in %s", c.name, path, res.stdout)
			} else if got != want && want != "any" && !(want == "number" && got == "integer") {
				t.Errorf("%s: %s is %s (%v), solopi-ai prints %s", c.name, path, got, v, want)
			}
		}
	}
}

// Issue 21 item 18: agent-session-start while another owner's Agent
// session holds the phone is lease_conflict (exit 2) as soon as SoloPi has
// refused it, not agent_start_timeout after --ack-timeout; the other
// session keeps the phone.
func TestE2EAgentStartDuringForeignSessionIsLeaseConflict(t *testing.T) {
	t.Parallel()
	r := newCompatRig(t, sim.FarmOptions{Configure: e2eAutoStartOn, TimeScale: 5})
	if err := r.dev.Phone.LaunchApp("com.example.counter"); err != nil {
		t.Fatal(err)
	}
	r.fault("foreign-agent-session", `{"ownerToken":"someone-else-0123456789abcdef","idleTimeoutMs":300000}`)
	holder := r.dev.App.LeaseHolder()
	// An ack timeout far beyond the refusal: only the refusal ends it.
	m := r.expect(2, e2ePoll("agent-session-start", "--ack-timeout", "120")...)
	if cmdtest.Str(m, "errorCode") != "lease_conflict" || cmdtest.Str(m, "deviceErrorCode") != "session_conflict" || cmdtest.Str(m, "userActionRequired") == "" {
		t.Errorf("agent-session-start during a foreign session: %v", m)
	}
	if r.dev.App.LeaseHolder() != holder {
		t.Errorf("the foreign session lost the lease: %q → %q", holder, r.dev.App.LeaseHolder())
	}
}

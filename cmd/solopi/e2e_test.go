package main

// End-to-end tests of what only a process shows: the built binary against
// the simulator, reached the way a phone is reached — through an adb server
// (here the simulator's own adb-server front, selected with
// ANDROID_ADB_SERVER_PORT) — for the README's commands, signals and the
// stdout contract.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
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
)

// startFarm runs simulated devices in the test process and returns the
// environment that points the binary at them.
func startFarm(t *testing.T, o sim.FarmOptions) (*sim.Farm, []string) {
	t.Helper()
	if o.TimeScale == 0 {
		o.TimeScale = 20
	}
	f := cmdtest.StartFarm(t, o)
	// A user cache of the test's own: case-import's records of parallel
	// tests never meet.
	return f, []string{fmt.Sprintf("ANDROID_ADB_SERVER_PORT=%d", f.Server().Port()), "ANDROID_SERIAL=", "XDG_CACHE_HOME=" + t.TempDir()}
}

func decodeObject(t *testing.T, r cliRun) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.stdout, &m); err != nil {
		t.Fatalf("stdout is not one JSON object (exit %d): %q\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	return m
}

func TestE2EImportRunPassWithArtifacts(t *testing.T) {
	t.Parallel()
	_, env := startFarm(t, sim.FarmOptions{NoAdbd: true})
	// A fresh SoloPi has auto start off: doctor reports it as upstream
	// does (failedChecks) and as fixed by the run, so the device is ready;
	// config-set turns it on (confirmed by reading it back).
	r := runBinary(t, env, "doctor")
	if r.code != 0 || !strings.Contains(string(r.stdout), `"failedChecks":["autoStart"]`) || !strings.Contains(string(r.stdout), `"fixedByRun":["autoStart","ready"]`) ||
		strings.Contains(string(r.stdout), "complete the setup") {
		t.Fatalf("doctor on a fresh device: exit %d %s", r.code, r.stdout)
	}
	schematest.Validate(t, "doctor", r.stdout)
	r = runBinary(t, env, "config-set", "--key", "KEY_REPLAY_AUTO_START", "--value", "true")
	if r.code != 0 || !strings.Contains(string(r.stdout), `"confirmed":true`) {
		t.Fatalf("config-set exit %d: %s", r.code, r.stdout)
	}
	schematest.Validate(t, "config-set", r.stdout)
	r = runBinary(t, env, "doctor")
	if r.code != 0 {
		t.Fatalf("doctor exit %d: %s", r.code, r.stdout)
	}
	schematest.Validate(t, "doctor", r.stdout)

	r = runBinary(t, env, "case-import", "--file", cmdtest.WriteCase(t, nil), "--replace")
	if r.code != 0 {
		t.Fatalf("case-import exit %d: %s", r.code, r.stdout)
	}
	schematest.Validate(t, "case-import", r.stdout)

	dir := filepath.Join(t.TempDir(), "artifacts")
	r = runBinary(t, env, "run", "--case", demoCaseName, "--artifacts", dir)
	if r.code != 0 {
		t.Fatalf("run exit %d: %s", r.code, r.stdout)
	}
	schematest.Validate(t, "run", r.stdout)
	m := decodeObject(t, r)
	if m["state"] != "passed" || m["runId"] == nil {
		t.Fatalf("run: %s", r.stdout)
	}
	t.Logf("artifacts: %v", m["artifacts"])
	for _, f := range []string{"result.json", "screen.png", "logcat.txt", "manifest.json"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("artifact %s: %v", f, err)
		}
	}
	manifest, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil || !strings.Contains(string(manifest), m["runId"].(string)) {
		t.Errorf("manifest does not name the runId: %s", manifest)
	}
	schematest.Validate(t, "artifacts-manifest", manifest)

	// The directory now holds our evidence set: a second run (a CI job
	// reusing its workspace) replaces it, as solopi-ai overwrites it.
	r = runBinary(t, env, "run", "--case", demoCaseName, "--artifacts", dir)
	if r.code != 0 || !strings.Contains(string(r.stdout), `"replaced":{`) {
		t.Errorf("reused artifacts dir: exit %d %s", r.code, r.stdout)
	}
}

// SIGINT during a run cancels exactly that run, still prints the JSON with
// the runId, and exits 130.
func TestE2EInterruptCancelsTheRun(t *testing.T) {
	t.Parallel()
	f, env := startFarm(t, sim.FarmOptions{NoAdbd: true, TimeScale: 1})
	slow := cmdtest.WriteCase(t, func(s string) string {
		return strings.Replace(s, `"stepId": "reset",`, `"stepId": "reset",`+"\n"+
			`"operationMethod": {"actionEnum": "SLEEP", "operationParam": {"text": "60000"}, "encrypt": false}},`+"\n"+
			`{"stepId": "reset-after-sleep",`, 1)
	})
	if r := runBinary(t, env, "case-import", "--file", slow, "--replace"); r.code != 0 {
		t.Fatalf("import exit %d: %s", r.code, r.stdout)
	}
	cmd := exec.Command(binPath, "run", "--case", demoCaseName)
	cmd.Env = append(os.Environ(), env...)
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the device runs our replay, then interrupt the CLI.
	dev := f.Devices()[0]
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	testwait.Until(t, 20*time.Second, "the replay to start", func() bool { return dev.App.LeaseHolder() != "" })
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if code != 130 {
		t.Fatalf("interrupted run exit %d: %s", code, out.String())
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out.String()), &m); err != nil {
		t.Fatalf("no JSON after interrupt: %q", out.String())
	}
	if m["runId"] == nil || m["errorCode"] == nil {
		t.Errorf("interrupt JSON lacks runId/errorCode: %s", out.String())
	}
	r := runBinary(t, env, "status")
	st := decodeObject(t, r)
	if st["state"] != "cancelled" || st["runId"] != m["runId"] {
		t.Errorf("device state after interrupt: %s", r.stdout)
	}
}

func TestE2ESimServeWithControlEndpoint(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binPath, "sim", "serve", "--time-scale", "50", "--no-adbd")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		t.Fatalf("sim serve printed nothing: %v", err)
	}
	schematest.Validate(t, "sim-serve", line)
	var info simServeInfo
	if err := json.Unmarshal(line, &info); err != nil {
		t.Fatal(err)
	}
	env := []string{info.AdbServer.Env, "ANDROID_SERIAL="}
	// Doctor passes once auto start is on, then fails when the control
	// endpoint revokes a permission.
	if r := runBinary(t, env, "config-set", "--key", "KEY_REPLAY_AUTO_START", "--value", "true"); r.code != 0 {
		t.Fatalf("config-set exit %d: %s", r.code, r.stdout)
	}
	if r := runBinary(t, env, "doctor"); r.code != 0 {
		t.Fatalf("doctor exit %d: %s", r.code, r.stdout)
	}
	serial := info.Devices[0].Serial
	resp, err := http.Post(info.Control.URL+"/v1/devices/"+serial+"/permission", "application/json",
		strings.NewReader(`{"name":"accessibility","granted":false}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("control endpoint: %v %v", err, resp)
	}
	resp.Body.Close()
	r := runBinary(t, env, "doctor")
	if r.code != 2 || !strings.Contains(string(r.stdout), `"missingPermissions":["accessibility"]`) {
		t.Errorf("doctor after revoking accessibility: exit %d %s", r.code, r.stdout)
	}
	schematest.Validate(t, "doctor", r.stdout)
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Errorf("sim serve did not stop cleanly on SIGINT: %v", err)
	}
}

func TestE2EDemo(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "demo")
	r := runBinary(t, nil, "demo", "--artifacts", dir)
	if r.code != 0 {
		t.Fatalf("demo exit %d: %s", r.code, r.stdout)
	}
	schematest.Validate(t, "demo", r.stdout)
	// The demo replaces its own artifacts directory when run again.
	if r := runBinary(t, nil, "demo", "--artifacts", dir); r.code != 0 {
		t.Fatalf("second demo exit %d: %s", r.code, r.stdout)
	}
}

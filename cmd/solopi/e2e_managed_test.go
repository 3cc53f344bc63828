package main

// The device-bound managed commands end to end: the built binary probes
// the simulator's devices with doctor, and its workers run verify-run on
// the leased device through the simulator's adb server, against a SQLite
// store; cancelling the task, losing the lease and a signal stop the device
// work at once.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/managedcmd"
	"github.com/solopi-dev/solopi/internal/testwait"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/replay"
)

const e2eOwnerToken = "e2e-owner-token-0123456789"

// managedFarm is simulated devices and a store the managed commands share:
// the commands run in process against the farm's adb server, the workers
// are processes of the built binary (they are signalled, stopped and
// killed).
type managedFarm struct {
	t    *testing.T
	cli  *cmdtest.CLI
	db   string
	env  []string // the simulator's adb server and the store, for the worker processes
	root string   // the workers' --artifacts-root
}

// newManagedFarm is a farm on database whose devices the adb server of env
// (ANDROID_ADB_SERVER_PORT=…) serves. Its processes share device locks in
// a directory of the test's own (XDG_RUNTIME_DIR): every test's farm has
// a sim-0001, and a worker holds the lock of each phone it drives.
func newManagedFarm(t *testing.T, env []string, database string) *managedFarm {
	cli := cmdtest.New(t, commands, nil)
	locks := t.TempDir()
	cli.Env["XDG_RUNTIME_DIR"] = locks
	env = append(env, "XDG_RUNTIME_DIR="+locks)
	for _, kv := range env {
		if port, ok := strings.CutPrefix(kv, "ANDROID_ADB_SERVER_PORT="); ok {
			cli.Globals = []string{"--adb-server-port", port, "--serial="}
		}
	}
	return &managedFarm{t: t, cli: cli, db: database, env: append(env, managedcmd.DBEnv+"="+database), root: filepath.Join(t.TempDir(), "evidence")}
}

// cmd runs a command (globals first, when any) in process, on the farm's
// store when it is a managed command, and validates its JSON against the
// command's schema.
func (m *managedFarm) cmd(args ...string) (cliRun, map[string]any) {
	m.t.Helper()
	args = append([]string(nil), args...)
	for i, a := range args {
		if strings.HasPrefix(a, "managed-") {
			args = append(args[:i+1], append([]string{"--database", m.db}, args[i+1:]...)...)
			break
		}
	}
	res := m.cli.Run(args...)
	r := cliRun{stdout: res.Stdout, stderr: res.Stderr, code: res.Code}
	for _, a := range args {
		if strings.HasPrefix(a, "managed-") || a == "verify-run" {
			schematest.Validate(m.t, a, r.stdout)
			break
		}
	}
	return r, decodeObject(m.t, r)
}

// ready sets SoloPi up on serial (auto start on) and registers the device
// through the doctor: healthy.
func (m *managedFarm) ready(serial string) {
	m.t.Helper()
	if r, _ := m.cmd("--serial", serial, "config-set", "--key", "KEY_REPLAY_AUTO_START", "--value", "true"); r.code != 0 {
		m.t.Fatalf("config-set on %s: exit %d %s", serial, r.code, r.stdout)
	}
	if r, p := m.cmd("--serial", serial, "managed-device-probe"); r.code != 0 || p["device"].(map[string]any)["health"] != "healthy" {
		m.t.Fatalf("probe %s: exit %d %s", serial, r.code, r.stdout)
	}
}

// submit submits plan against a matrix of one target with replicas and
// returns the taskId.
func (m *managedFarm) submit(plan, key string, replicas int, flags ...string) string {
	m.t.Helper()
	b, _ := json.Marshal([]any{map[string]any{"id": "counter", "replicas": replicas}})
	matrix := cmdtest.WriteFile(m.t, "matrix.json", b)
	r, task := m.cmd(append([]string{"managed-submit", "--plan", plan, "--matrix", matrix, "--idempotency-key", key,
		"--owner-token", e2eOwnerToken}, flags...)...)
	if r.code != 0 {
		m.t.Fatalf("submit exit %d %s", r.code, r.stdout)
	}
	return task["taskId"].(string)
}

// report is managed-report of a task: its exit code and object.
func (m *managedFarm) report(task string) (int, map[string]any) {
	m.t.Helper()
	r, rep := m.cmd("managed-report", "--task-id", task)
	return r.code, rep
}

// noDeviceLeased fails when the store still leases a device.
func (m *managedFarm) noDeviceLeased() {
	m.t.Helper()
	_, list := m.cmd("managed-device-list")
	for _, d := range list["devices"].([]any) {
		if d := d.(map[string]any); d["leased"] != false {
			m.t.Errorf("device %s is still leased: %v", d["deviceId"], d)
		}
	}
}

// workerProc is a managed-worker-loop process.
type workerProc struct {
	t         *testing.T
	cmd       *exec.Cmd
	out, errb bytes.Buffer
	done      chan struct{}
	err       error
}

// startWorker starts managed-worker-loop with the worker id and extra
// flags; it polls every 0.2 s.
func (m *managedFarm) startWorker(id string, flags ...string) *workerProc {
	m.t.Helper()
	args := append([]string{"managed-worker-loop", "--worker-id", id, "--artifacts-root", m.root, "--idle-interval", "0.2"}, flags...)
	w := &workerProc{t: m.t, cmd: exec.Command(binPath, args...), done: make(chan struct{})}
	w.cmd.Env = append(os.Environ(), m.env...)
	w.cmd.Stdout, w.cmd.Stderr = &w.out, &w.errb
	if err := w.cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	go func() { w.err = w.cmd.Wait(); close(w.done) }()
	m.t.Cleanup(func() {
		select {
		case <-w.done:
		default:
			_ = w.cmd.Process.Kill()
			<-w.done
		}
	})
	return w
}

func (w *workerProc) signal(sig os.Signal) {
	w.t.Helper()
	if err := w.cmd.Process.Signal(sig); err != nil {
		w.t.Fatalf("signal %v: %v", sig, err)
	}
}

// exited reports whether the process has ended.
func (w *workerProc) exited() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// wait waits for the worker to exit and returns its exit code and its
// JSON, validated against the schema.
func (w *workerProc) wait(timeout time.Duration) (int, map[string]any) {
	w.t.Helper()
	select {
	case <-w.done:
	case <-time.After(timeout):
		_ = w.cmd.Process.Kill()
		<-w.done
		w.t.Fatalf("the worker did not exit within %v; stdout %s stderr %s", timeout, w.out.String(), w.errb.String())
	}
	r := cliRun{stdout: w.out.Bytes(), stderr: w.errb.Bytes(), code: exitCode(w.t, w.cmd.Args, w.err)}
	schematest.Validate(w.t, "managed-worker-loop", r.stdout)
	return r.code, decodeObject(w.t, r)
}

// attemptOf is the only attempt of a report's only shard.
func attemptOf(t *testing.T, rep map[string]any) (shard, attempt map[string]any) {
	t.Helper()
	shards := rep["shards"].([]any)
	if len(shards) != 1 {
		t.Fatalf("report has %d shards", len(shards))
	}
	shard = shards[0].(map[string]any)
	attempts := shard["attempts"].([]any)
	if len(attempts) != 1 {
		t.Fatalf("shard has %d attempts: %v", len(attempts), attempts)
	}
	return shard, attempts[0].(map[string]any)
}

// runningShard starts one slow shard (ten minutes of device time at the
// farm's time scale) on a worker loop and waits until the device runs its
// replay; it returns the taskId, the worker and the device.
func runningShard(t *testing.T, scale float64, submitFlags []string, workerFlags ...string) (*managedFarm, string, *workerProc, *sim.Device) {
	t.Helper()
	f, env := startFarm(t, sim.FarmOptions{NoAdbd: true, TimeScale: scale})
	m := newManagedFarm(t, env, filepath.Join(t.TempDir(), "managed.sqlite"))
	m.ready("sim-0001")
	// The replay lasts 60 s of wall time whatever the scale.
	task := m.submit(cmdtest.SlowPlan(t, int(12*scale)), "slow", 1, submitFlags...)
	w := m.startWorker("host-a", workerFlags...)
	dev := f.Devices()[0]
	testwait.Until(t, 30*time.Second, "the shard's replay to hold the device", func() bool { return dev.App.LeaseHolder() != "" || w.exited() })
	if w.exited() {
		code, out := w.wait(0)
		t.Fatalf("the worker exited %d before the replay started: %v\nstderr %s", code, out, w.errb.String())
	}
	return m, task, w, dev
}

// deviceRunCancelled checks that the device's last replay is the
// attempt's own, cancelled, and that nothing holds the device.
func deviceRunCancelled(t *testing.T, m *managedFarm, dev *sim.Device, attemptDir string) {
	t.Helper()
	var runID any
	cmdtest.EachFileUnder(t, attemptDir, func(path string, b []byte) {
		if filepath.Base(path) == "run-response.json" {
			var resp map[string]any
			_ = json.Unmarshal(b, &resp)
			runID = resp["runId"]
		}
	})
	// The worker holds the phone's lock until its executor has returned,
	// a moment after the attempt's report is written: the probe waits for
	// it as a user's command would.
	_, st := m.cmd("status", "--device-wait", "30")
	if runID == nil || st["state"] != "cancelled" || st["runId"] != runID {
		t.Errorf("the device's run: %v; the attempt's run: %v", st, runID)
	}
	if h := dev.App.LeaseHolder(); h != "" {
		t.Errorf("the device is still held by %s", h)
	}
}

// attemptDir is where the report's only attempt wrote its evidence.
func (m *managedFarm) attemptDir(task string, rep map[string]any) string {
	shard, at := attemptOf(m.t, rep)
	return filepath.Join(m.root, task, shard["shardId"].(string), at["attemptId"].(string))
}

// TestE2EManagedCancelStopsDeviceWork: cancelling the task stops the
// replay on the device at once (not after ten minutes of device time), the
// shard ends cancelled and the device is released.
func TestE2EManagedCancelStopsDeviceWork(t *testing.T) {
	t.Parallel()
	m, task, w, dev := runningShard(t, 10, nil)
	if r, _ := m.cmd("managed-cancel", "--task-id", task, "--owner-token", e2eOwnerToken); r.code != 0 {
		t.Fatalf("cancel exit %d %s", r.code, r.stdout)
	}
	testwait.Until(t, 15*time.Second, "the device work to stop", func() bool { return dev.App.LeaseHolder() == "" })
	code, rep := m.report(task)
	shard, at := attemptOf(t, rep)
	if code != 130 || shard["status"] != "cancelled" || at["status"] != "cancelled" || at["failureCategory"] != "cancelled_by_owner" {
		t.Errorf("report exit %d: %v", code, rep)
	}
	// The partial report is the worker's last write of the attempt.
	dir := m.attemptDir(task, rep)
	testwait.Until(t, 15*time.Second, "the attempt's partial report", func() bool {
		_, err := os.Stat(filepath.Join(dir, "report.json"))
		return err == nil
	})
	deviceRunCancelled(t, m, dev, dir)
	w.signal(syscall.SIGINT)
	if code, out := w.wait(30 * time.Second); code != 130 || out["interrupted"] != true || out["processed"] != float64(1) || out["failures"] != float64(1) {
		t.Errorf("worker exit %d %v", code, out)
	}
	m.noDeviceLeased()
}

// TestE2EManagedLostLeaseStopsDeviceWork: a worker that stalls (SIGSTOP)
// past its lease is fenced by recovery; when it resumes, its first
// heartbeat is refused and it cancels its replay on the device at once,
// writing nothing for the attempt.
func TestE2EManagedLostLeaseStopsDeviceWork(t *testing.T) {
	t.Parallel()
	m, task, w, dev := runningShard(t, 10, []string{"--lease-duration-ms", "2000"}, "--max-assignments", "1")
	w.signal(syscall.SIGSTOP)
	// Recovery takes the shard once the lease has expired.
	testwait.Until(t, 30*time.Second, "recovery to expire the lease", func() bool {
		_, rec := m.cmd("managed-recover")
		return rec["requeued"] == float64(1)
	})
	if dev.App.LeaseHolder() == "" {
		t.Fatal("the replay ended while the worker was stopped: the test proves nothing")
	}
	w.signal(syscall.SIGCONT)
	testwait.Until(t, 15*time.Second, "the device work to stop", func() bool { return dev.App.LeaseHolder() == "" })
	// --max-assignments 1: the loop ends with that shard, a failure.
	if code, out := w.wait(30 * time.Second); code != 2 || out["processed"] != float64(1) || out["failures"] != float64(1) {
		t.Errorf("worker exit %d %v", code, out)
	}
	code, rep := m.report(task)
	shard, at := attemptOf(t, rep)
	if code != 4 || shard["status"] != "queued" || at["status"] != "expired" || at["failureCategory"] != "lease_expired" || at["reportPath"] != nil {
		t.Errorf("report exit %d: %v", code, rep)
	}
	deviceRunCancelled(t, m, dev, m.attemptDir(task, rep))
	m.noDeviceLeased()
}

// TestE2EManagedWorkerLoopInterruptHandsBack: SIGINT during a shard cancels
// its replay, hands the shard back without using a retry (max-retries 0,
// and it is queued again), releases the device and exits 130.
func TestE2EManagedWorkerLoopInterruptHandsBack(t *testing.T) {
	t.Parallel()
	m, task, w, dev := runningShard(t, 10, []string{"--max-retries", "0"})
	w.signal(syscall.SIGINT)
	code, out := w.wait(30 * time.Second)
	if code != 130 || out["interrupted"] != true || out["processed"] != float64(0) || out["failures"] != float64(0) || out["success"] != false {
		t.Errorf("worker exit %d %v", code, out)
	}
	code, rep := m.report(task)
	shard, at := attemptOf(t, rep)
	if code != 4 || shard["status"] != "queued" || at["status"] != "retryable_failed" || at["failureCategory"] != "worker_stopped" {
		t.Errorf("report exit %d: %v", code, rep)
	}
	deviceRunCancelled(t, m, dev, m.attemptDir(task, rep))
	m.noDeviceLeased()
	_, evs := m.cmd("managed-events", "--task-id", task)
	var types []string
	for _, e := range evs["events"].([]any) {
		types = append(types, e.(map[string]any)["type"].(string))
	}
	if !slices.Contains(types, "attempt_released") || slices.Contains(types, "attempt_failed") {
		t.Errorf("events %v", types)
	}
}

// TestE2EManagedWorkerLoopStatusLine: on a terminal the worker's line
// counts its shards as they end (i/N of --max-assignments, the verdicts,
// the last task/shard) and is cleared before the JSON.
func TestE2EManagedWorkerLoopStatusLine(t *testing.T) {
	t.Parallel()
	_, env := startFarm(t, sim.FarmOptions{NoAdbd: true})
	m := newManagedFarm(t, env, filepath.Join(t.TempDir(), "managed.sqlite"))
	m.ready("sim-0001")
	task := m.submit(cmdtest.FixturePlan(t, "counter-success"), "line", 2)
	r := runOnTerminal(t, append(m.env, "NO_COLOR=1"), "managed-worker-loop", "--worker-id", "host-a", "--artifacts-root", m.root,
		"--idle-interval", "0.2", "--max-assignments", "2")
	if r.code != 0 {
		t.Fatalf("worker exit %d %s\n%q", r.code, r.stdout, r.stderr)
	}
	schematest.Validate(t, "managed-worker-loop", r.stdout)
	if out := oneJSONObject(t, r.stdout); out["processed"] != float64(2) {
		t.Errorf("worker %v", out)
	}
	term := string(r.stderr)
	for _, want := range []string{"[2/2]", "2 passed · 0 failed", task + "/shard-"} {
		if !strings.Contains(term, want) {
			t.Errorf("the terminal never showed %q: %q", want, term)
		}
	}
	if !strings.HasSuffix(term, clearStatusLine) {
		t.Errorf("the line is not cleared at the end: %q", term)
	}
}

// TestE2EManagedKilledWorkerLeavesNoFalseFailures: a worker SIGKILLed
// mid-replay leaves its replay running on the phone; its lease expires and
// the phone goes back into rotation. The next task's eight shards all land
// on that phone: the first cancels the orphan replay (exactly its runId)
// before it begins, and every shard passes on its first attempt, none meets
// replay_active. The killed shard itself ends not_tested (lease_expired),
// never failed. managed-report --wait blocks until the task ends and writes
// its JUnit.
func TestE2EManagedKilledWorkerLeavesNoFalseFailures(t *testing.T) {
	t.Parallel()
	// At the default scale: the eight shards after the kill are the test's
	// length.
	m, slow, w, dev := runningShard(t, 50, []string{"--lease-duration-ms", "2000", "--max-retries", "0"})
	// The replay's runId, asked of the simulated phone directly (the
	// phone belongs to the worker while it runs: no solopi command).
	st, err := replay.FetchReplayStatus(context.Background(), device.NewDevice(dev, device.DeviceOptions{}))
	if err != nil || !st.Active || st.RunID == "" {
		t.Fatalf("the running replay: %+v %v", st, err)
	}
	orphan := st.RunID
	w.signal(syscall.SIGKILL)
	testwait.Until(t, 30*time.Second, "the killed worker to exit", w.exited)
	if dev.App.LeaseHolder() == "" {
		t.Fatal("no replay outlived the worker: the test proves nothing")
	}
	task := m.submit(cmdtest.FixturePlan(t, "counter-success"), "after-kill", 8)
	w2 := m.startWorker("host-b")
	junit := filepath.Join(t.TempDir(), "junit.xml")
	r, rep := m.cmd("managed-report", "--task-id", task, "--wait", "--timeout", "600", "--poll-interval", "0.2", "--junit", junit)
	if r.code != 0 || rep["status"] != "passed" {
		t.Errorf("managed-report --wait exit %d: %s", r.code, r.stdout)
	}
	for _, s := range rep["shards"].([]any) {
		s := s.(map[string]any)
		if attempts := s["attempts"].([]any); s["status"] != "passed" || len(attempts) != 1 {
			t.Errorf("shard %s: %s after %d attempts", s["shardId"], s["status"], len(attempts))
		}
	}
	if got := dev.MutationsWith("type=cancel", "runId="+url.QueryEscape(orphan)); len(got) != 1 {
		t.Errorf("cancels of the orphan run %s: %v", orphan, got)
	}
	b, err := os.ReadFile(junit)
	if err != nil || bytes.Count(b, []byte("<testcase ")) != 8 || bytes.Contains(b, []byte("<failure")) || bytes.Contains(b, []byte("<error")) {
		t.Errorf("junit %v:\n%s", err, b)
	}
	code, killed := m.report(slow)
	shard, at := attemptOf(t, killed)
	if code != 3 || shard["status"] != "not_tested" || at["status"] != "expired" || at["failureCategory"] != "lease_expired" {
		t.Errorf("the killed shard: exit %d %v", code, killed)
	}
	w2.signal(syscall.SIGINT)
	if code, out := w2.wait(30 * time.Second); code != 130 || out["processed"] != float64(8) || out["failures"] != float64(0) {
		t.Errorf("worker exit %d %v", code, out)
	}
	m.noDeviceLeased()
}

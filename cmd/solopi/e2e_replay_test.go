package main

// The "must-nots" of replay, end to end against the simulated device
// through the full command path (flags, session, polling, JSON, exit code).
// A transport wrapper lets a test act on the device at the exact moment the
// CLI sends its replay mutation, which is when races happen in practice.

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/internal/testwait"
	"github.com/solopi-dev/solopi/schemas"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
)

// hookedTransport runs onReplay once, just before the first replay mutation
// reaches the device.
type hookedTransport struct {
	*sim.Device
	once     sync.Once
	onReplay func()
}

func (h *hookedTransport) Shell(ctx context.Context, cmd string) ([]byte, []byte, int, error) {
	if strings.Contains(cmd, "solopi://startaction/replay?") && h.onReplay != nil {
		h.once.Do(h.onReplay)
	}
	return h.Device.Shell(ctx, cmd)
}

func (h *hookedTransport) DialTCP(ctx context.Context, port int) (net.Conn, error) {
	return h.Device.DialTCP(ctx, port)
}

func (h *hookedTransport) Stat(ctx context.Context, p string) (fs.FileInfo, error) {
	return h.Device.Stat(ctx, p)
}

// replayDevice is a fresh simulated device with the demo case imported.
func replayDevice(t *testing.T, scale float64) *sim.Device {
	t.Helper()
	d := sim.New(sim.Options{Serial: "sim-replay", TimeScale: scale})
	t.Cleanup(func() { d.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := d.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if r := cliOn(t, d, "case-import", "--file", writeCase(t, nil), "--replace"); r.code != 0 {
		t.Fatalf("import: %s", r.stdout)
	}
	return d
}

// cliOn runs the CLI in-process against a transport.
func cliOn(t *testing.T, tr device.Transport, args ...string) cliRun {
	t.Helper()
	return cliOnCtx(t, context.Background(), tr, args...)
}

func cliOnCtx(t *testing.T, ctx context.Context, tr device.Transport, args ...string) cliRun {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(ctx, append([]string{"solopi"}, args...), cmdutil.Env{Stdout: &stdout, Stderr: &stderr,
		Getenv:    func(string) string { return "" },
		Transport: func(context.Context) (device.Transport, error) { return tr, nil }})
	return cliRun{stdout: stdout.Bytes(), stderr: stderr.Bytes(), code: code}
}

func field(t *testing.T, r cliRun, key string) any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.stdout, &m); err != nil {
		t.Fatalf("not JSON: %q", r.stdout)
	}
	return m[key]
}

// The case rewritten after preflight ends failed, never passed.
func TestE2ECaseChangedAfterPreflightFails(t *testing.T) {
	d := replayDevice(t, 20)
	h := &hookedTransport{Device: d, onReplay: func() {
		if err := d.App.TouchCase(demoCaseName); err != nil {
			t.Error(err)
		}
	}}
	r := cliOn(t, h, "run", "--case", demoCaseName)
	schemas.Validate(t, "run", r.stdout)
	if r.code != 2 || field(t, r, "state") != "failed" {
		t.Fatalf("exit %d: %s", r.code, r.stdout)
	}
	if !strings.Contains(string(r.stdout), "Case changed after CLI safety validation") {
		t.Errorf("error does not say the case changed: %s", r.stdout)
	}
}

// Another client's same-name run is an ownership conflict, never adopted.
func TestE2ECompetingRunIsAConflict(t *testing.T) {
	d := replayDevice(t, 5)
	h := &hookedTransport{Device: d, onReplay: func() {
		if _, _, err := d.App.StartCompetingReplay(demoCaseName); err != nil {
			t.Error(err)
		}
	}}
	r := cliOn(t, h, "run", "--case", demoCaseName)
	schemas.Validate(t, "run", r.stdout)
	if r.code != 2 {
		t.Fatalf("exit %d: %s", r.code, r.stdout)
	}
	if code := field(t, r, "errorCode"); code != "ownership_conflict" {
		t.Errorf("errorCode %v: %s", code, r.stdout)
	}
	// The other client's run was left alone.
	st := cliOn(t, d, "status")
	if s := field(t, st, "state"); s == "cancelled" {
		t.Errorf("the competing run was cancelled: %s", st.stdout)
	}
}

// A late cancel of an old run does not stop a new one.
func TestE2ELateCancelDoesNotTouchANewRun(t *testing.T) {
	d := replayDevice(t, 20)
	first := cliOn(t, d, "run", "--case", demoCaseName)
	if first.code != 0 {
		t.Fatalf("first run: %s", first.stdout)
	}
	oldRun := field(t, first, "runId").(string)
	second := cliOn(t, d, "run", "--case", demoCaseName, "--no-wait")
	if second.code != 0 {
		t.Fatalf("second run: %s", second.stdout)
	}
	newRun := field(t, second, "runId").(string)
	r := cliOn(t, d, "cancel", "--run-id", oldRun)
	schemas.Validate(t, "cancel", r.stdout)
	if r.code != 2 {
		t.Fatalf("stale cancel exit %d: %s", r.code, r.stdout)
	}
	var res cliRun
	testwait.Until(t, 10*time.Second, "the new run to end", func() bool {
		res = cliOn(t, d, "result", "--run-id", newRun)
		return field(t, res, "terminal") == true
	})
	if field(t, res, "state") != "passed" {
		t.Errorf("the new run did not pass after a stale cancel: %s", res.stdout)
	}
}

// A cancel that arrives before the permission callback publishes cancelled
// for the same runId.
func TestE2ECancelBeforePermissionCallback(t *testing.T) {
	d := replayDevice(t, 5)
	d.App.SetPermissionDialogDelay(30 * time.Second)
	started := cliOn(t, d, "run", "--case", demoCaseName, "--no-wait")
	if started.code != 0 {
		t.Fatalf("start: %s", started.stdout)
	}
	runID := field(t, started, "runId").(string)
	r := cliOn(t, d, "cancel", "--run-id", runID)
	if r.code != 0 || field(t, r, "state") != "cancelled" || field(t, r, "runId") != runID {
		t.Fatalf("cancel exit %d: %s", r.code, r.stdout)
	}
}

// An app restart mid-run gives a clear error, not a hang.
func TestE2EAppRestartMidRun(t *testing.T) {
	d := replayDevice(t, 5)
	d.App.SetPermissionDialogDelay(30 * time.Second)
	go func() {
		for d.App.LeaseHolder() == "" {
			d.Clock().Sleep(context.Background(), 100*time.Millisecond)
		}
		d.Clock().Sleep(context.Background(), time.Second) // device time: the run is under way
		d.App.Restart()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	r := cliOnCtx(t, ctx, d, "--startup-timeout", "20", "run", "--case", demoCaseName, "--run-timeout", "40")
	if time.Since(start) > 30*time.Second {
		t.Errorf("the CLI took %s to notice the restart", time.Since(start))
	}
	if r.code == 0 || r.code == 124 {
		t.Fatalf("exit %d after an app restart: %s", r.code, r.stdout)
	}
	schemas.Validate(t, "run", r.stdout)
	if code, _ := field(t, r, "errorCode").(string); code == "" {
		t.Errorf("no errorCode: %s", r.stdout)
	}
	t.Logf("after an app restart: exit %d %s", r.code, r.stdout)
}

package managedcmd

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/verifycmd"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/managed/worker"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/progress"
	"github.com/solopi-dev/solopi/schemas"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/devicefake"
)

// fakeDevices stands for the host's adb server, doctor and verify-run;
// without probes every device passes the doctor.
type fakeDevices struct {
	serials []string
	probes  map[string]worker.ProbeReport
	run     func(ctx context.Context, r worker.ShardRun) (worker.ShardVerdict, error)
	runs    atomic.Int32
}

func (f *fakeDevices) OnlineSerials(context.Context) ([]string, error) { return f.serials, nil }

func (f *fakeDevices) ProbeDevice(_ context.Context, serial string) (worker.ProbeReport, error) {
	if f.probes == nil {
		return worker.ProbeReport{APILevel: 34, Installed: true, Ready: true}, nil
	}
	p, ok := f.probes[serial]
	if !ok {
		return p, fault.New(fault.Transport, "adb_failed", "no such device")
	}
	return p, nil
}

func (f *fakeDevices) Executor(verifycmd.RunBudgets) worker.ShardExecutor { return f }

func (f *fakeDevices) ExecuteShard(ctx context.Context, r worker.ShardRun) (worker.ShardVerdict, error) {
	f.runs.Add(1)
	return f.run(ctx, r)
}

func passedRun(_ context.Context, r worker.ShardRun) (worker.ShardVerdict, error) {
	os.MkdirAll(r.ArtifactsDir, 0o755)
	report := []byte(`{"status":"passed","outcomeFingerprint":"` + strings.Repeat("b", 64) + `","scenarios":[]}`)
	path := filepath.Join(r.ArtifactsDir, "report.json")
	os.WriteFile(path, report, 0o644)
	return worker.ShardVerdict{Status: "passed", ReportPath: path, Report: report}, nil
}

// validate encodes a command result as the CLI prints it and checks it
// against the command's schema.
func validate(t *testing.T, name string, run func() (outcome.Result, error)) (map[string]any, int) {
	t.Helper()
	res, err := run()
	var buf strings.Builder
	code := outcome.Print(&buf, res, err, false)
	schemas.Validate(t, name, []byte(buf.String()))
	var m map[string]any
	json.Unmarshal([]byte(buf.String()), &m)
	return m, code
}

func workerStore(t *testing.T, replicas int) (managed.Store, string) {
	t.Helper()
	ctx := context.Background()
	s, err := managed.Open(ctx, filepath.Join(t.TempDir(), "m.sqlite"), managed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.RegisterDevice(ctx, managed.DeviceSpec{DeviceID: "sim-0001", Serial: "sim-0001", APILevel: 34}); err != nil {
		t.Fatal(err)
	}
	sub := managed.NewSubmission()
	sub.Plan = map[string]any{"schemaVersion": managed.PlanSchema, "planFingerprint": strings.Repeat("a", 64)}
	sub.Matrix = []any{map[string]any{"id": "t", "replicas": replicas}}
	sub.IdempotencyKey, sub.OwnerToken, sub.MaxRetries = "k", "owner-token-1234567890", 0
	task, err := s.Submit(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	return s, task.TaskID
}

func workerOptions(t *testing.T) managedWorkerOptions {
	return managedWorkerOptions{workerID: "host-a-1", host: "host-a", artifactsRoot: t.TempDir(), concurrency: 1,
		idleInterval: 100 * time.Millisecond, probeInterval: time.Hour}
}

func TestManagedWorkerOnce(t *testing.T) {
	ctx := context.Background()
	s, taskID := workerStore(t, 1)
	d := &fakeDevices{serials: []string{"sim-0001"}, probes: map[string]worker.ProbeReport{"sim-0001": {APILevel: 34, Installed: true, Ready: true}}, run: passedRun}
	m, code := validate(t, "managed-worker-once", func() (outcome.Result, error) { return runManagedWorkerOnce(ctx, s, d, workerOptions(t)) })
	if code != 0 || m["claimed"] != true || m["result"].(map[string]any)["taskStatus"] != "passed" {
		t.Fatalf("exit %d %v", code, m)
	}
	if !strings.HasSuffix(m["report"].(string), "report.json") || m["assignment"].(map[string]any)["taskId"] != taskID {
		t.Fatalf("once %v", m)
	}
	// Nothing left: claimed:false, exit 0.
	m, code = validate(t, "managed-worker-once", func() (outcome.Result, error) { return runManagedWorkerOnce(ctx, s, d, workerOptions(t)) })
	if code != 0 || m["claimed"] != false || d.runs.Load() != 1 {
		t.Fatalf("exit %d %v", code, m)
	}
}

func TestManagedWorkerOnceFailures(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		code int
	}{
		{"transport", fault.New(fault.Transport, "adb_failed", "adb went away"), 4},
		{"worker error", fault.New(fault.Invalid, "plan_invalid", "bad"), 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _ := workerStore(t, 1)
			d := &fakeDevices{serials: []string{"sim-0001"}, run: func(context.Context, worker.ShardRun) (worker.ShardVerdict, error) {
				return worker.ShardVerdict{}, c.err
			}}
			m, code := validate(t, "managed-worker-once", func() (outcome.Result, error) {
				return runManagedWorkerOnce(context.Background(), s, d, workerOptions(t))
			})
			if code != c.code || m["assignmentFailure"].(map[string]any)["shardStatus"] != "not_tested" {
				t.Fatalf("exit %d %v", code, m)
			}
		})
	}
}

func TestManagedWorkerLoop(t *testing.T) {
	s, taskID := workerStore(t, 3)
	var n atomic.Int32
	d := &fakeDevices{serials: []string{"sim-0001"}, run: func(ctx context.Context, r worker.ShardRun) (worker.ShardVerdict, error) {
		if n.Add(1) == 2 {
			v, _ := passedRun(ctx, r)
			v.Status, v.Report = "failed", json.RawMessage(`{"status":"failed","scenarios":[{"status":"failed","failure":{"category":"oracle_mismatch"}}]}`)
			return v, nil
		}
		return passedRun(ctx, r)
	}}
	o := workerOptions(t)
	o.maxIdlePolls = 10
	var terminal strings.Builder
	o.progress = progress.NewTo(&terminal, true, false, nil)
	m, code := validate(t, "managed-worker-loop", func() (outcome.Result, error) { return runManagedWorkerLoop(context.Background(), s, d, o) })
	if code != 2 || m["processed"] != float64(3) || m["failures"] != float64(1) || m["success"] != false {
		t.Fatalf("exit %d %v", code, m)
	}
	o.progress.Done()
	// The status line counted the shards as they ended.
	if got := terminal.String(); !strings.Contains(got, "2 passed · 1 failed · "+taskID+"/") {
		t.Errorf("status line %q", got)
	}
	r, _ := s.Report(context.Background(), taskID)
	if r.Status != "failed" || *r.Shards[1].FailureCategory != "oracle_mismatch" {
		t.Fatalf("report %+v", r)
	}

	// A signal hands the running shard back: exit 130.
	s2, _ := workerStore(t, 1)
	started := make(chan struct{})
	d2 := &fakeDevices{serials: []string{"sim-0001"}, run: func(ctx context.Context, _ worker.ShardRun) (worker.ShardVerdict, error) {
		close(started)
		<-ctx.Done()
		return worker.ShardVerdict{}, ctx.Err()
	}}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	m, code = validate(t, "managed-worker-loop", func() (outcome.Result, error) { return runManagedWorkerLoop(ctx, s2, d2, workerOptions(t)) })
	if code != 130 || m["interrupted"] != true {
		t.Fatalf("exit %d %v", code, m)
	}
}

func TestManagedDeviceProbe(t *testing.T) {
	s, _ := workerStore(t, 1)
	d := &fakeDevices{probes: map[string]worker.ProbeReport{
		"emulator-5554": {APILevel: 34, Installed: true, Ready: true, Doctor: map[string]any{"success": true}},
		"emulator-5556": {APILevel: 30, Installed: true, Doctor: map[string]any{"success": false}},
	}}
	ctx := context.Background()
	m, code := validate(t, "managed-device-probe", func() (outcome.Result, error) {
		return runManagedDeviceProbe(ctx, s, d, worker.ProbeRequest{Serial: "emulator-5554"}, []string{"rack=r1"})
	})
	if code != 0 || m["device"].(map[string]any)["health"] != "healthy" {
		t.Fatalf("exit %d %v", code, m)
	}
	m, code = validate(t, "managed-device-probe", func() (outcome.Result, error) {
		return runManagedDeviceProbe(ctx, s, d, worker.ProbeRequest{Serial: "emulator-5556"}, nil)
	})
	if code != 2 || m["device"].(map[string]any)["health"] != "degraded" {
		t.Fatalf("exit %d %v", code, m)
	}
	_, code = validate(t, "managed-device-probe", func() (outcome.Result, error) {
		return runManagedDeviceProbe(ctx, s, d, worker.ProbeRequest{Serial: "gone"}, nil)
	})
	if code != 4 {
		t.Fatalf("errored probe exit %d", code)
	}
	if _, err := runManagedDeviceProbe(ctx, s, d, worker.ProbeRequest{Serial: "emulator-5554"}, []string{"bad"}); fault.CodeOf(err) != "invalid_label" {
		t.Fatalf("bad label: %v", err)
	}
}

// The probe reads the API level with getprop on exactly the probed serial:
// a device that prints no integer is a transport failure (exit 4) and is
// not registered.
func TestManagedProbeAPILevel(t *testing.T) {
	ctx := context.Background()
	tr := devicefake.New(t, http.NotFoundHandler())
	tr.OnShell = func(_ context.Context, cmd string, _ []string) (devicefake.Reply, bool) {
		if strings.Contains(cmd, "ro.build.version.sdk") {
			return devicefake.Reply{Stdout: "unknown\n"}, true
		}
		return devicefake.Reply{}, false
	}
	h := hostDevices{g: &cmdutil.Globals{Env: cmdutil.Env{Transport: func(context.Context) (device.Transport, error) { return tr, nil }}}}
	if serials, err := h.OnlineSerials(ctx); err != nil || len(serials) != 1 || serials[0] != "fake-1" {
		t.Fatalf("online %v %v", serials, err)
	}
	if _, err := h.ProbeDevice(ctx, "fake-2"); fault.CodeOf(err) != cmdutil.CodeDeviceNotFound {
		t.Errorf("a probe of another serial: %v", err)
	}
	s, _ := workerStore(t, 1)
	_, code := validate(t, "managed-device-probe", func() (outcome.Result, error) {
		return runManagedDeviceProbe(ctx, s, h, worker.ProbeRequest{Serial: "fake-1"}, nil)
	})
	if code != 4 {
		t.Errorf("unreadable API level: exit %d", code)
	}
	if _, err := s.DeviceBySerial(ctx, "fake-1"); fault.CodeOf(err) != managed.CodeDeviceNotFound {
		t.Errorf("the device was registered: %v", err)
	}
}

// A leased device that is gone from the adb server when the shard starts
// is a transport failure (retried within the task's budget), not the
// usage error device selection reports to a person.
func TestManagedShardOnAVanishedDevice(t *testing.T) {
	plan, err := os.ReadFile(fixturePlan(t, "counter-success"))
	if err != nil {
		t.Fatal(err)
	}
	gone := fault.New(fault.Invalid, cmdutil.CodeDeviceOffline, "the device is offline")
	h := hostDevices{g: &cmdutil.Globals{Env: cmdutil.Env{Transport: func(context.Context) (device.Transport, error) { return nil, gone }}}}
	a := &managed.Assignment{Serial: "sim-0001", Plan: plan, Decisions: []byte(`{}`)}
	_, err = h.Executor(verifycmd.RunBudgets{}).ExecuteShard(context.Background(), worker.ShardRun{Assignment: a, ArtifactsDir: filepath.Join(t.TempDir(), "a")})
	if fault.KindOf(err) != fault.Transport || fault.CodeOf(err) != cmdutil.CodeDeviceOffline {
		t.Fatalf("got %v (%s)", err, fault.KindOf(err))
	}
}

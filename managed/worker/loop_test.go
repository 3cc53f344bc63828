package worker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/pgtest"
	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/managed/storetest"
	"github.com/solopi-dev/solopi/managed/worker"
)

// backends opens a store on each backend; PostgreSQL needs
// SOLOPI_TEST_POSTGRES.
var backends = []struct {
	name string
	open func(t *testing.T) managed.Store
}{
	{"sqlite", func(t *testing.T) managed.Store { s, _ := openSQLite(t, nil); return s }},
	{"postgres", func(t *testing.T) managed.Store {
		s, err := managed.Open(context.Background(), pgtest.Schema(t), managed.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}},
}

func loopConfig(s managed.Store, exec worker.ShardExecutor, devices []string, root string) worker.LoopConfig {
	return worker.LoopConfig{
		Config: worker.Config{Store: s, Executor: exec, Devices: serials(devices), WorkerID: "worker-1",
			Host: "host-a", ArtifactsRoot: root},
		Concurrency:  2,
		IdleInterval: 100 * time.Millisecond,
		MaxIdlePolls: 40,
	}
}

func TestRunRetriesThroughRiver(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s := b.open(t)
			devices := register(t, s, 2)
			task := submit(t, s, "loop-1", 4, 1)
			exec := script(failing(fault.New(fault.Transport, "adb_failed", "adb went away")), verdict("passed"))
			res, err := worker.Run(context.Background(), loopConfig(s, exec, devices, t.TempDir()))
			if err != nil {
				t.Fatal(err)
			}
			if res.Processed != 5 || res.Failures != 1 || res.Interrupted {
				t.Fatalf("loop result %+v", res)
			}
			r, err := s.Report(context.Background(), task.TaskID)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != "passed" || r.ExitCode != 0 {
				t.Fatalf("report %+v", r)
			}
			retried := 0
			for _, sh := range r.Shards {
				if len(sh.Attempts) == 2 {
					retried++
					if gap := sh.Attempts[1].CreatedAt - *sh.Attempts[0].FinishedAt; gap < 1000 {
						t.Fatalf("the retry came %d ms after the failure, before its 1 s backoff", gap)
					}
				}
			}
			if retried != 1 {
				t.Fatalf("%d shards retried, want 1", retried)
			}
			for _, d := range mustDevices(t, s) {
				if d.Leased {
					t.Fatalf("device %s still leased", d.DeviceID)
				}
			}
		})
	}
}

// Cancelling a task reaches a running worker through River's job cancel
// at once, long before the next heartbeat (every 20 s with the default
// lease).
func TestCancelStopsRunningWorkerThroughRiver(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s := b.open(t)
			devices := register(t, s, 1)
			task := submit(t, s, "loop-cancel", 1, 1)
			started, stopped := make(chan worker.ShardRun, 1), make(chan error, 1)
			exec := script(blocking(started, stopped))
			cfg := loopConfig(s, exec, devices, t.TempDir())
			cfg.MaxIdlePolls = 5
			done := make(chan worker.LoopResult, 1)
			go func() {
				res, err := worker.Run(context.Background(), cfg)
				if err != nil {
					t.Error(err)
				}
				done <- res
			}()
			<-started
			begin := time.Now()
			if _, err := s.Cancel(context.Background(), task.TaskID, storetest.Owner); err != nil {
				t.Fatal(err)
			}
			select {
			case <-stopped:
			case <-time.After(10 * time.Second):
				t.Fatal("the executor was not stopped within 10 s of the cancel")
			}
			t.Logf("device work stopped %v after the cancel", time.Since(begin))
			res := <-done
			if res.Processed != 1 {
				t.Fatalf("loop result %+v", res)
			}
			if r, _ := s.Report(context.Background(), task.TaskID); r.Status != "cancelled" || r.ExitCode != 130 {
				t.Fatalf("report %+v", r)
			}
		})
	}
}

func TestRunInterruptHandsBack(t *testing.T) {
	t.Parallel()
	s, _ := openSQLite(t, nil)
	devices := register(t, s, 1)
	task := submit(t, s, "loop-interrupt", 1, 0)
	started, stopped := make(chan worker.ShardRun, 1), make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan worker.LoopResult, 1)
	go func() {
		res, err := worker.Run(ctx, loopConfig(s, script(blocking(started, stopped)), devices, t.TempDir()))
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	<-started
	cancel() // SIGINT
	<-stopped
	res := <-done
	// A hand-back is neither processed nor failed.
	if !res.Interrupted || res.Processed != 0 || res.Failures != 0 || res.Last == nil || !res.Last.HandedBack {
		t.Fatalf("loop result %+v", res)
	}
	r, _ := s.Report(context.Background(), task.TaskID)
	sh := r.Shards[0]
	if sh.Status != "queued" || *sh.Attempts[0].FailureCategory != managed.CategoryWorkerStopped {
		t.Fatalf("shard after the interrupt: %+v", sh)
	}
}

func TestRunMaxAssignments(t *testing.T) {
	t.Parallel()
	s, _ := openSQLite(t, nil)
	devices := register(t, s, 3)
	task := submit(t, s, "loop-max", 3, 0)
	cfg := loopConfig(s, script(verdict("passed")), devices, t.TempDir())
	cfg.Concurrency, cfg.MaxAssignments = 3, 1
	res, err := worker.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Processed != 1 || res.Last == nil || res.Last.Status != "passed" {
		t.Fatalf("loop result %+v", res)
	}
	st, _ := s.Status(context.Background(), task.TaskID)
	if st.ShardCounts["passed"] != 1 || st.ShardCounts["queued"] != 2 {
		t.Fatalf("shards %+v", st.ShardCounts)
	}
}

// A worker that vanished holding a lease: River's leader runs expiry
// recovery, a new job carries the shard, and a live worker finishes it.
func TestLeaderRecoversAVanishedWorker(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s := b.open(t)
			devices := register(t, s, 1)
			sub := managed.NewSubmission()
			sub.Plan, sub.Matrix = storetest.Plan(strings.Repeat("a", 64)), storetest.Matrix(1, nil)
			sub.IdempotencyKey, sub.OwnerToken, sub.LeaseDurationMs = "vanished", storetest.Owner, 1000
			task, err := s.Submit(context.Background(), sub)
			if err != nil {
				t.Fatal(err)
			}
			jobs, _ := s.ShardJobs(context.Background(), task.TaskID)
			// The vanished worker: it claimed and then never wrote again.
			if res, err := s.Claim(context.Background(), managed.ClaimRequest{JobID: jobs[0].JobID, TaskID: task.TaskID,
				ShardID: jobs[0].ShardID, WorkerID: "vanished", Serials: devices}); err != nil || res.Assignment == nil {
				t.Fatalf("claim %+v %v", res, err)
			}
			// The loop ends with the recovered shard; the idle bound only
			// stops a test that never sees it (River's leader election and
			// its periodic recovery run on their own cadence, which a
			// loaded host stretches).
			cfg := loopConfig(s, script(verdict("passed")), devices, t.TempDir())
			cfg.MaxAssignments, cfg.MaxIdlePolls = 1, 600
			res, err := worker.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			r, _ := s.Report(context.Background(), task.TaskID)
			if res.Processed != 1 || r.Status != "passed" || len(r.Shards[0].Attempts) != 2 ||
				r.Shards[0].Attempts[0].Status != "expired" {
				t.Fatalf("loop %+v, report %+v", res, r.Shards[0])
			}
		})
	}
}

func mustDevices(t *testing.T, s managed.Store) []managed.Device {
	t.Helper()
	ds, err := s.Devices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func TestRefreshDevices(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openSQLite(t, nil)
	register(t, s, 4) // sim-a .. sim-d
	if _, err := s.SetDeviceHealth(ctx, "device-sim-d", managed.HealthQuarantined); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{"sim-c": true}
	p := prober{"sim-a": {APILevel: 34, Installed: true, Ready: true}, "sim-b": {APILevel: 34, Installed: true, Ready: false}}
	// sim-c vanished; sim-d is quarantined; sim-e is not registered.
	if err := worker.RefreshDevices(ctx, s, serials{"sim-a", "sim-b", "sim-d", "sim-e"}, p, nil, seen); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"device-sim-a": "healthy", "device-sim-b": "degraded", "device-sim-c": "offline", "device-sim-d": "quarantined"}
	for _, d := range mustDevices(t, s) {
		if d.Health != want[d.DeviceID] {
			t.Errorf("%s is %s, want %s", d.DeviceID, d.Health, want[d.DeviceID])
		}
	}
	// A probe that errors degrades the device.
	if err := worker.RefreshDevices(ctx, s, serials{"sim-a", "sim-f"}, prober{}, nil, seen); err != nil {
		t.Fatal(err)
	}
	if d, _ := s.Device(ctx, "device-sim-a"); d.Health != managed.HealthDegraded {
		t.Fatalf("sim-a after an errored probe: %s", d.Health)
	}
}

func TestProbeAndRegister(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openSQLite(t, nil)
	p := prober{"emulator-5554": {APILevel: 34, Installed: true, Ready: true}, "usb:1-2": {APILevel: 30, Installed: true}}
	d, _, err := worker.ProbeAndRegister(ctx, s, p, worker.ProbeRequest{Serial: "emulator-5554", Capabilities: []string{"camera"},
		Labels: map[string]string{"rack": "r1"}})
	if err != nil {
		t.Fatal(err)
	}
	if d.DeviceID != "emulator-5554" || d.Health != "healthy" || d.APILevel != 34 || len(d.Capabilities) != 5 || d.Labels["rack"] != "r1" {
		t.Fatalf("registered %+v", d)
	}
	d, _, err = worker.ProbeAndRegister(ctx, s, p, worker.ProbeRequest{Serial: "usb:1-2"})
	if err != nil || d.Health != "degraded" || d.DeviceID != "usb:1-2" {
		t.Fatalf("not ready: %+v %v", d, err)
	}
	if got := worker.DefaultDeviceID("192.168.1.5:5555 x"); got != "192.168.1.5:5555-x" {
		t.Fatalf("DefaultDeviceID = %s", got)
	}
	// An errored probe degrades a registered device and registers nothing new.
	d, _, err = worker.ProbeAndRegister(ctx, s, prober{}, worker.ProbeRequest{Serial: "emulator-5554"})
	if err == nil || d.Health != "degraded" {
		t.Fatalf("errored probe: %+v %v", d, err)
	}
	if _, _, err := worker.ProbeAndRegister(ctx, s, prober{}, worker.ProbeRequest{Serial: "new-1"}); err == nil {
		t.Fatal("an errored probe of a new device succeeded")
	}
	if len(mustDevices(t, s)) != 2 {
		t.Fatal("an errored probe registered a device")
	}
}

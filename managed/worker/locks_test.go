package worker_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/managed/devicehost"
	"github.com/solopi-dev/solopi/managed/worker"
	"github.com/solopi-dev/solopi/solopi/devicelock"
)

// hostLocks are the host-wide phone locks a worker process takes
// (devicehost.Host over solopi/devicelock) in dir. A second Locker on the
// same dir is "another process": flock(2) locks belong to an open file, so
// two of them conflict inside one process too.
func hostLocks(dir string) devicehost.Host {
	return devicehost.Host{Locks: &devicelock.Locker{Dir: dir, Args: []string{"solopi", "managed-worker"}}}
}

func shardJob(f *workerFixture) *river.Job[managed.ShardArgs] {
	j := f.jobs[0]
	return &river.Job[managed.ShardArgs]{JobRow: &rivertype.JobRow{ID: j.JobID},
		Args: managed.ShardArgs{TaskID: f.task.TaskID, ShardID: j.ShardID}}
}

// A phone another process holds (a local `solopi run`) is not offered to a
// claim: the job snoozes and the shard stays queued; once it is free the
// worker runs the shard on it, holding its lock meanwhile.
func TestWorkerLeavesAPhoneAnotherProcessHolds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	locks := hostLocks(dir)
	var heldDuringRun atomic.Bool
	other := devicelock.Locker{Dir: dir}
	exec := script(func(ctx context.Context, run worker.ShardRun) (worker.ShardVerdict, error) {
		// The worker holds the phone while it drives it.
		if l, err := other.Acquire(ctx, run.Assignment.Serial, 0); err != nil {
			heldDuringRun.Store(true)
		} else {
			l.Release()
		}
		return verdict("passed")(ctx, run)
	})
	f := newWorkerFixture(t, exec, 1)
	w := worker.NewShardWorker(worker.Config{Store: f.s, Executor: exec, Devices: serials{"sim-a"}, Locks: locks,
		WorkerID: "worker-1", Host: "host-a", ArtifactsRoot: t.TempDir(), Clock: f.clock, IdleWait: 2 * time.Second})
	held, err := other.Acquire(f.ctx, "sim-a", 0)
	if err != nil {
		t.Fatal(err)
	}
	err = w.Work(f.ctx, shardJob(f))
	var snooze *rivertype.JobSnoozeError
	if !errors.As(err, &snooze) || snooze.Duration < 2*time.Second {
		t.Fatalf("work on a phone another process holds: %v, want a snooze", err)
	}
	if r := f.report(t); r.Shards[0].Status != "queued" || len(r.Shards[0].Attempts) != 0 || exec.count() != 0 {
		t.Fatalf("shard after the snooze: %+v (executor ran %d times)", r.Shards[0], exec.count())
	}
	held.Release()
	if err := w.Work(f.ctx, shardJob(f)); err != nil {
		t.Fatal(err)
	}
	if r := f.report(t); r.Status != "passed" || exec.count() != 1 || !heldDuringRun.Load() {
		t.Fatalf("task %s, executor ran %d times, lock held during the run: %v", r.Status, exec.count(), heldDuringRun.Load())
	}
	// Released after the shard: another process can take it again.
	l, err := other.Acquire(f.ctx, "sim-a", 0)
	if err != nil {
		t.Fatalf("the worker kept the phone: %v", err)
	}
	l.Release()
}

// racingLocks offers a free phone and lets another process take it right
// after the offer, before the worker locks it for the claimed shard.
type racingLocks struct {
	devicehost.Host
	other  devicelock.Locker
	mu     sync.Mutex
	taken  *devicelock.Lock
	offers int
}

func (r *racingLocks) LockDevice(ctx context.Context, serial string) (func(), error) {
	unlock, err := r.Host.LockDevice(ctx, serial)
	if err != nil {
		return nil, err
	}
	return func() {
		unlock()
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.offers++; r.offers == 1 {
			r.taken, _ = r.other.Acquire(ctx, serial, 0)
		}
	}, nil
}

// A phone taken by another process between the offer and the claim's lock
// is handed back untouched: no retry used, the shard queued again, the job
// snoozed.
func TestWorkerHandsBackAPhoneTakenAfterTheClaim(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	exec := script(verdict("passed"))
	f := newWorkerFixture(t, exec, 0)
	locks := &racingLocks{Host: hostLocks(dir), other: devicelock.Locker{Dir: dir}}
	w := worker.NewShardWorker(worker.Config{Store: f.s, Executor: exec, Devices: serials{"sim-a"}, Locks: locks,
		WorkerID: "worker-1", Host: "host-a", ArtifactsRoot: t.TempDir(), Clock: f.clock, IdleWait: time.Second})
	err := w.Work(f.ctx, shardJob(f))
	var snooze *rivertype.JobSnoozeError
	if !errors.As(err, &snooze) {
		t.Fatalf("work: %v, want a snooze", err)
	}
	if locks.taken == nil {
		t.Fatal("the other process did not get the phone")
	}
	r := f.report(t)
	sh := r.Shards[0]
	if exec.count() != 0 || sh.Status != "queued" || len(sh.Attempts) != 1 || *sh.Attempts[0].FailureCategory != managed.CategoryWorkerStopped {
		t.Fatalf("shard after the hand-back: %+v (executor ran %d times)", sh, exec.count())
	}
	locks.taken.Release()
	// With no retry budget, the shard still runs: a hand-back used none.
	if err := w.Work(f.ctx, shardJob(f)); err != nil {
		t.Fatal(err)
	}
	if r := f.report(t); r.Status != "passed" || exec.count() != 1 {
		t.Fatalf("task %s after the phone came back, executor ran %d times", r.Status, exec.count())
	}
}

// The re-probe leaves a phone another process holds alone (probing would
// disturb its run): its health does not change.
func TestRefreshDevicesLeavesALockedPhone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openSQLite(t, nil)
	register(t, s, 2) // sim-a, sim-b
	dir := t.TempDir()
	held, err := (&devicelock.Locker{Dir: dir}).Acquire(ctx, "sim-b", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	// sim-b would be degraded by a probe (the prober errors for it).
	p := prober{"sim-a": {APILevel: 34, Installed: true, Ready: true}}
	if err := worker.RefreshDevices(ctx, s, serials{"sim-a", "sim-b"}, p, hostLocks(dir), map[string]bool{}); err != nil {
		t.Fatal(err)
	}
	for _, d := range mustDevices(t, s) {
		switch {
		case d.DeviceID == "device-sim-a" && d.Health != managed.HealthHealthy:
			t.Errorf("the free phone was not probed: %s", d.Health)
		case d.DeviceID == "device-sim-b" && d.Health == managed.HealthDegraded:
			t.Errorf("the locked phone was probed: %s", d.Health)
		}
	}
}

// blockingProber holds its first probe until release is closed.
type blockingProber struct {
	probing chan struct{}
	release chan struct{}
	once    sync.Once
	done    atomic.Bool
}

func (p *blockingProber) ProbeDevice(ctx context.Context, serial string) (worker.ProbeReport, error) {
	first := false
	p.once.Do(func() { first = true })
	if first {
		close(p.probing)
		select {
		case <-p.release:
		case <-ctx.Done():
		}
		p.done.Store(true)
	}
	return worker.ProbeReport{APILevel: 34, Installed: true, Ready: true}, nil
}

// In a worker loop with locks, a claim waits for this process's own
// re-probe of the phone to end instead of failing: the shard never runs
// while the phone is probed, and it runs once the probe ends.
func TestRunShardWaitsForTheReprobe(t *testing.T) {
	t.Parallel()
	s, _ := openSQLite(t, nil)
	devices := register(t, s, 1)
	p := &blockingProber{probing: make(chan struct{}), release: make(chan struct{})}
	var ranDuringProbe atomic.Bool
	exec := script(func(ctx context.Context, run worker.ShardRun) (worker.ShardVerdict, error) {
		if !p.done.Load() {
			ranDuringProbe.Store(true)
		}
		return verdict("passed")(ctx, run)
	})
	cfg := loopConfig(s, exec, devices, t.TempDir())
	cfg.Locks, cfg.Prober, cfg.ProbeInterval, cfg.MaxAssignments = hostLocks(t.TempDir()), p, time.Hour, 1
	done := make(chan error, 1)
	var res worker.LoopResult
	go func() {
		var err error
		res, err = worker.Run(context.Background(), cfg)
		done <- err
	}()
	<-p.probing
	task := submit(t, s, "loop-reprobe", 1, 0)
	// Let the claim meet the probe (a wait, not an assertion: the claim
	// waits for the probe however long it takes).
	time.Sleep(300 * time.Millisecond)
	close(p.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ranDuringProbe.Load() {
		t.Fatal("the shard ran while the worker probed its phone")
	}
	r, _ := s.Report(context.Background(), task.TaskID)
	if res.Processed != 1 || r.Status != "passed" {
		t.Fatalf("loop %+v, task %s", res, r.Status)
	}
}

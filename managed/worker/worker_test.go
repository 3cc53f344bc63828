package worker_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/managed/storetest"
	"github.com/solopi-dev/solopi/managed/worker"
)

// workerFixture runs ShardWorker.Work directly on the jobs of one task, on
// a fake clock, so that heartbeats and expiry are driven by the test.
type workerFixture struct {
	ctx     context.Context
	clock   *clock.Fake
	s       managed.Store
	task    managed.Task
	jobs    []managed.ShardJob
	exec    *scripted
	reports chan worker.ShardReport
	w       *worker.ShardWorker
}

func newWorkerFixture(t *testing.T, exec *scripted, retries int) *workerFixture {
	f := &workerFixture{ctx: context.Background(), clock: clock.NewFake(storetest.Start), exec: exec,
		reports: make(chan worker.ShardReport, 8)}
	f.s, _ = openSQLite(t, f.clock)
	devices := register(t, f.s, 1)
	f.task = submit(t, f.s, "worker-test", 1, retries)
	var err error
	if f.jobs, err = f.s.ShardJobs(f.ctx, f.task.TaskID); err != nil {
		t.Fatal(err)
	}
	f.w = worker.NewShardWorker(worker.Config{Store: f.s, Executor: exec, Devices: serials(devices),
		WorkerID: "worker-1", Host: "host-a", ArtifactsRoot: t.TempDir(), Clock: f.clock,
		Observe: func(r worker.ShardReport) { f.reports <- r }})
	return f
}

func (f *workerFixture) work(ctx context.Context) error {
	j := f.jobs[0]
	return f.w.Work(ctx, &river.Job[managed.ShardArgs]{JobRow: &rivertype.JobRow{ID: j.JobID},
		Args: managed.ShardArgs{TaskID: f.task.TaskID, ShardID: j.ShardID}})
}

// blocked runs the fixture's job on a blocking executor in the background:
// started says the executor runs, stopped gives the cause that ended its
// context, done the job's result.
type blocked struct {
	started chan worker.ShardRun
	stopped chan error
	done    chan error
}

func newBlockedFixture(t *testing.T, retries int) (*workerFixture, *blocked) {
	b := &blocked{started: make(chan worker.ShardRun, 1), stopped: make(chan error, 1), done: make(chan error, 1)}
	return newWorkerFixture(t, script(blocking(b.started, b.stopped)), retries), b
}

func (f *workerFixture) start(ctx context.Context, b *blocked) {
	go func() { b.done <- f.work(ctx) }()
	<-b.started
}

func (f *workerFixture) report(t *testing.T) managed.Report {
	t.Helper()
	r, err := f.s.Report(f.ctx, f.task.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestWorkerCompletesWithVerdictAndEvidence(t *testing.T) {
	t.Parallel()
	f := newWorkerFixture(t, script(verdict("failed",
		map[string]any{"status": "not_tested", "failure": map[string]any{"category": "checkpoint_not_reached"}},
		map[string]any{"status": "failed", "failure": map[string]any{"category": "oracle_mismatch"}},
	)), 3)
	if err := f.work(f.ctx); err != nil {
		t.Fatalf("work: %v", err)
	}
	rep := <-f.reports
	if rep.Err != nil || rep.Status != "failed" || rep.Outcome.ShardStatus != "failed" || rep.Outcome.TaskStatus != "failed" {
		t.Fatalf("report: %+v", rep)
	}
	r := f.report(t)
	a := r.Shards[0].Attempts
	// A Judge verdict is final even with retries left, and the category
	// is the failed scenario's, not the earlier not_tested one's.
	if len(a) != 1 || *r.Shards[0].FailureCategory != "oracle_mismatch" {
		t.Fatalf("shard: %+v", r.Shards[0])
	}
	run := f.exec.runs[0]
	want, err := worker.EvidenceDigest(run.ArtifactsDir)
	if err != nil {
		t.Fatal(err)
	}
	if *a[0].EvidenceDigest != want || *a[0].VerificationOutcomeFingerprint != strings.Repeat("f", 64) {
		t.Fatalf("attempt: %+v", a[0])
	}
	if !strings.HasSuffix(run.ArtifactsDir, "/"+f.task.TaskID+"/"+rep.Assignment.ShardID+"/"+rep.Assignment.AttemptID) {
		t.Fatalf("artifacts dir %s", run.ArtifactsDir)
	}
	if run.Assignment.Serial != "sim-a" || string(run.Assignment.Decisions) != "{}" {
		t.Fatalf("assignment %+v", run.Assignment)
	}
	// The job is done: running it again finds the shard terminal.
	if err := f.work(f.ctx); err != nil {
		t.Fatal(err)
	}
	if f.exec.count() != 1 {
		t.Fatalf("the executor ran %d times", f.exec.count())
	}
}

func TestWorkerFailureClassification(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		err        error
		shard      string
		category   string
		retried    bool
		cancelled  bool
		executions int
	}{
		{"transport error is retried", fault.New(fault.Transport, "adb_failed", "adb went away"), "queued", "transport_error", true, false, 1},
		{"worker error is final", fault.New(fault.Invalid, "plan_invalid", "bad plan"), "not_tested", "worker_error", false, true, 1},
		{"timeout is final", fault.New(fault.Timeout, "timeout", "run timed out"), "not_tested", "worker_error", false, true, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newWorkerFixture(t, script(failing(c.err)), 1)
			err := f.work(f.ctx)
			var cancel *rivertype.JobCancelError
			if c.retried && (err == nil || errors.As(err, &cancel)) {
				t.Fatalf("a retryable failure must return an error for River to retry, got %v", err)
			}
			if c.cancelled && !errors.As(err, &cancel) {
				t.Fatalf("a final failure must not be retried by River, got %v", err)
			}
			rep := <-f.reports
			if rep.Outcome == nil || rep.Outcome.ShardStatus != c.shard {
				t.Fatalf("report %+v", rep)
			}
			if got := *f.report(t).Shards[0].FailureCategory; got != c.category {
				t.Fatalf("category %s, want %s", got, c.category)
			}
		})
	}
}

func TestWorkerSnoozesWithoutADevice(t *testing.T) {
	t.Parallel()
	f := newWorkerFixture(t, script(verdict("passed")), 1)
	w := worker.NewShardWorker(worker.Config{Store: f.s, Executor: f.exec, Devices: serials{"elsewhere"},
		WorkerID: "w2", Clock: f.clock, IdleWait: 3 * time.Second})
	j := f.jobs[0]
	err := w.Work(f.ctx, &river.Job[managed.ShardArgs]{JobRow: &rivertype.JobRow{ID: j.JobID},
		Args: managed.ShardArgs{TaskID: f.task.TaskID, ShardID: j.ShardID}})
	var snooze *rivertype.JobSnoozeError
	if !errors.As(err, &snooze) || snooze.Duration < 3*time.Second || snooze.Duration > 4*time.Second {
		t.Fatalf("got %v, want a snooze of about 3s", err)
	}
	if f.exec.count() != 0 {
		t.Fatal("the executor ran without a device")
	}
}

// A cancelled task stops the executor through the heartbeat even before
// River's own cancellation arrives.
func TestWorkerStopsDeviceWorkWhenTaskIsCancelled(t *testing.T) {
	t.Parallel()
	f, b := newBlockedFixture(t, 1)
	f.start(f.ctx, b)
	if _, err := f.s.Cancel(f.ctx, f.task.TaskID, storetest.Owner); err != nil {
		t.Fatal(err)
	}
	if err := f.clock.WaitForSleepers(f.ctx, 1); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(20 * time.Second) // the next heartbeat (every lease/3) is refused
	if cause := <-b.stopped; cause == nil {
		t.Fatal("the executor's context ended without a cause")
	}
	var cancel *rivertype.JobCancelError
	if err := <-b.done; !errors.As(err, &cancel) {
		t.Fatalf("work returned %v, want a River cancel", err)
	}
	r := f.report(t)
	if r.Status != "cancelled" || r.Shards[0].Attempts[0].Status != "cancelled" {
		t.Fatalf("report %+v", r)
	}
}

// River cancelling the running job (the owner's cancel) stops the device
// work at once.
func TestWorkerStopsOnRiverCancel(t *testing.T) {
	t.Parallel()
	f, b := newBlockedFixture(t, 1)
	ctx, cancel := context.WithCancelCause(f.ctx)
	f.start(ctx, b)
	if _, err := f.s.Cancel(f.ctx, f.task.TaskID, storetest.Owner); err != nil {
		t.Fatal(err)
	}
	cancel(river.ErrJobCancelledRemotely)
	if cause := <-b.stopped; !errors.Is(cause, river.ErrJobCancelledRemotely) {
		t.Fatalf("executor stopped by %v", cause)
	}
	<-b.done
	if f.report(t).Status != "cancelled" {
		t.Fatal("task not cancelled")
	}
	d, _ := f.s.Device(f.ctx, "device-sim-a")
	if d.Leased {
		t.Fatal("device still leased")
	}
}

// An operator cancelling the job in River's UI ends the shard not_tested.
func TestWorkerOperatorCancel(t *testing.T) {
	t.Parallel()
	f, b := newBlockedFixture(t, 1)
	ctx, cancel := context.WithCancelCause(f.ctx)
	f.start(ctx, b)
	cancel(river.ErrJobCancelledRemotely)
	<-b.stopped
	<-b.done
	r := f.report(t)
	if r.Status != "not_tested" || *r.Shards[0].FailureCategory != managed.CategoryJobCancelled {
		t.Fatalf("report %+v", r.Shards[0])
	}
}

// A stopping worker hands the shard back without using a retry.
func TestWorkerHandsBackOnStop(t *testing.T) {
	t.Parallel()
	f, b := newBlockedFixture(t, 0)
	ctx, cancel := context.WithCancel(f.ctx)
	f.start(ctx, b)
	cancel()
	<-b.stopped
	if err := <-b.done; !errors.Is(err, context.Canceled) {
		t.Fatalf("work returned %v", err)
	}
	r := f.report(t)
	if r.Shards[0].Status != "queued" || r.Shards[0].Attempts[0].Status != "retryable_failed" ||
		*r.Shards[0].Attempts[0].FailureCategory != managed.CategoryWorkerStopped {
		t.Fatalf("shard %+v", r.Shards[0])
	}
}

// A worker whose heartbeats stop being accepted (its lease expired and was
// taken over) stops its device work and writes nothing.
func TestWorkerStopsWhenLeaseIsLost(t *testing.T) {
	t.Parallel()
	f, b := newBlockedFixture(t, 1)
	f.start(f.ctx, b)
	if err := f.clock.WaitForSleepers(f.ctx, 1); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(2 * time.Minute) // far past the 60 s lease
	<-b.stopped
	if err := <-b.done; err == nil {
		t.Fatal("a lost lease must be reported to River")
	}
	rep := <-f.reports
	if rep.Outcome != nil {
		t.Fatalf("a fenced worker wrote %+v", rep.Outcome)
	}
	rec, err := f.s.Recover(f.ctx)
	if err != nil || rec.Requeued != 1 {
		t.Fatalf("recovery %+v %v", rec, err)
	}
}

func TestFailureCategory(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		report, status, want string
	}{
		{`{}`, "passed", ""},
		{`{"scenarios":[]}`, "failed", "verification_failed"},
		{`not json`, "not_tested", "verification_not_tested"},
		{`{"scenarios":[{"status":"not_tested","failure":{"category":"checkpoint_not_reached"}}]}`, "not_tested", "checkpoint_not_reached"},
		{`{"scenarios":[{"status":"not_tested","failure":{"category":"checkpoint_not_reached"}},{"status":"failed","failure":{"category":"cleanup_failure"}}]}`, "failed", "cleanup_failure"},
		{`{"scenarios":[{"status":"not_tested","failure":{"category":"dependency_not_passed"}}]}`, "failed", "dependency_not_passed"},
		{`{"scenarios":[{"status":"failed","failure":{"category":"bad category!"}}]}`, "failed", "verification_failed"},
	} {
		if got := worker.FailureCategory([]byte(c.report), c.status); got != c.want {
			t.Errorf("FailureCategory(%s, %s) = %q, want %q", c.report, c.status, got, c.want)
		}
	}
}

// A transport failure on the last attempt the task allows ends the shard
// not_tested, and its attempt too: an infrastructure fault never leaves an
// attempt "failed". The device is blamed (its failure counter).
func TestWorkerTransportFailureWithoutARetryIsNotTested(t *testing.T) {
	t.Parallel()
	f := newWorkerFixture(t, script(failing(fault.New(fault.Transport, "adb_failed", "adb went away"))), 0)
	var cancel *rivertype.JobCancelError
	if err := f.work(f.ctx); !errors.As(err, &cancel) {
		t.Fatalf("a final failure must not be retried by River, got %v", err)
	}
	rep := <-f.reports
	if rep.Outcome == nil || rep.Outcome.ShardStatus != "not_tested" || rep.Outcome.TaskStatus != "not_tested" {
		t.Fatalf("report %+v", rep)
	}
	sh := f.report(t).Shards[0]
	if a := sh.Attempts[0]; a.Status != "not_tested" || *a.FailureCategory != managed.CategoryTransport {
		t.Fatalf("attempt %s (%v)", a.Status, *a.FailureCategory)
	}
	devices, err := f.s.Devices(f.ctx)
	if err != nil || devices[0].ConsecutiveFailures != 1 || devices[0].Leased {
		t.Fatalf("device %+v %v", devices, err)
	}
}

// infraVerdict is a not_tested report whose reason is the
// infrastructure's (what devicehost hands back when the phone, adb or
// another owner kept the plan from running).
func infraVerdict(reason string) step {
	return func(ctx context.Context, run worker.ShardRun) (worker.ShardVerdict, error) {
		v, err := verdict("not_tested")(ctx, run)
		v.Infrastructure = reason
		return v, err
	}
}

// An infrastructure not_tested is retried while the task's retries last
// (the attempt retryable_failed under its reason), and ends not_tested
// with its report, never failed, when none is left.
func TestWorkerInfrastructureVerdict(t *testing.T) {
	t.Parallel()
	retried := newWorkerFixture(t, script(infraVerdict("replay_not_started")), 1)
	if err := retried.work(retried.ctx); err == nil {
		t.Fatal("a retried attempt must tell River to retry")
	}
	rep := <-retried.reports
	if rep.Outcome == nil || managed.Terminal(rep.Outcome.ShardStatus) {
		t.Fatalf("the shard ended at its first infrastructure fault: %+v", rep)
	}
	if a := retried.report(t).Shards[0].Attempts[0]; a.Status != "retryable_failed" || *a.FailureCategory != "replay_not_started" {
		t.Fatalf("attempt %s (%v)", a.Status, *a.FailureCategory)
	}

	final := newWorkerFixture(t, script(infraVerdict("replay_not_started")), 0)
	_ = final.work(final.ctx)
	rep = <-final.reports
	if rep.Outcome == nil || rep.Outcome.ShardStatus != "not_tested" || rep.Outcome.TaskStatus != "not_tested" {
		t.Fatalf("report %+v", rep)
	}
	if a := final.report(t).Shards[0].Attempts[0]; a.Status != "not_tested" || a.ReportPath == nil {
		t.Fatalf("attempt %s, report %v", a.Status, a.ReportPath)
	}
}

package worker

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"time"

	"github.com/riverqueue/river"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/managed"
)

// verdicts are the Result Judge's verdicts an executor may return.
var verdicts = map[string]bool{"passed": true, "failed": true, "not_tested": true}

// storeFault types an error of River's client (the store's own are typed
// already).
func storeFault(err error) error {
	if err == nil || errors.As(err, new(*fault.Error)) {
		return err
	}
	return fault.Wrap(fault.Transport, fault.CodeDatabaseError, "River failed: "+err.Error(), err)
}

// Why a worker stopped an attempt's device work.
var (
	errLeaseLost     = errors.New("the lease was lost: another worker may own the shard now")
	errTaskCancelled = errors.New("the task was cancelled")
	errExecutorDone  = errors.New("the executor returned")
)

// Config is what a shard worker needs on this host.
type Config struct {
	Store    managed.Store
	Executor ShardExecutor
	// Devices lists the serials this host's adb server sees: only they
	// are leased here.
	Devices DeviceLister
	// Locks, when set, holds each phone's host-wide lock while this
	// worker drives it (a claim, its run, its writes): a phone another
	// process holds (a local `solopi run`) is not offered to claims, and
	// one taken between the offer and the claim is handed back at once.
	Locks    DeviceLocker
	WorkerID string
	// Host names this machine (the retention purge uses it).
	Host          string
	ArtifactsRoot string
	Clock         clock.Clock
	// IdleWait is how long a job waits (River snooze) when no device fits
	// here, so that another host can take it; 0 means managed.NoDeviceWait.
	IdleWait time.Duration
	// Admit, when set, is asked before each claim and told whether the
	// claim produced an assignment; it lets a loop cap its assignments.
	Admit func() bool
	// Unadmit returns an admission that claimed nothing.
	Unadmit func()
	// Observe is told how every claimed shard ended.
	Observe func(ShardReport)
}

// ShardReport is how one claimed shard ended on this worker.
type ShardReport struct {
	Assignment *managed.Assignment
	// Outcome is where the store left shard and task; nil when the attempt
	// ended without a write of this worker (lease lost, task cancelled).
	Outcome    *managed.Outcome
	Status     string // the verdict, when there was one
	ReportPath string
	// HandedBack: the worker was stopping and gave the shard back
	// untouched (it counts as neither processed nor failed).
	HandedBack bool
	Err        error
}

// ShardWorker is the River worker of shard jobs: it claims the job's shard
// on a device this host reaches (or snoozes the job for another host), runs
// it with the executor while heartbeating the lease, and reports the
// verdict or failure through the fence.
type ShardWorker struct {
	river.WorkerDefaults[managed.ShardArgs]
	cfg Config
}

// NewShardWorker returns the worker for cfg.
func NewShardWorker(cfg Config) *ShardWorker {
	cfg.Clock = clock.Or(cfg.Clock)
	if cfg.IdleWait <= 0 {
		cfg.IdleWait = managed.NoDeviceWait
	}
	return &ShardWorker{cfg: cfg}
}

// Timeout disables River's job timeout: the lease bounds an attempt, and the
// executor has its own device budgets.
func (w *ShardWorker) Timeout(*river.Job[managed.ShardArgs]) time.Duration { return -1 }

// Work implements river.Worker.
func (w *ShardWorker) Work(ctx context.Context, job *river.Job[managed.ShardArgs]) error {
	if w.cfg.Admit != nil && !w.cfg.Admit() {
		return river.JobSnooze(w.jitter(w.cfg.IdleWait))
	}
	claimed := false
	defer func() {
		if !claimed && w.cfg.Unadmit != nil {
			w.cfg.Unadmit()
		}
	}()
	serials, err := w.cfg.Devices.OnlineSerials(ctx)
	if err != nil {
		// The adb server is not the shard's fault: let another host try.
		return river.JobSnooze(w.jitter(w.cfg.IdleWait))
	}
	serials = freeSerials(ctx, w.cfg.Locks, serials)
	if len(serials) == 0 {
		return river.JobSnooze(w.jitter(w.cfg.IdleWait))
	}
	res, err := w.cfg.Store.Claim(ctx, managed.ClaimRequest{JobID: job.ID, TaskID: job.Args.TaskID, ShardID: job.Args.ShardID,
		WorkerID: w.cfg.WorkerID, Serials: serials, Host: w.cfg.Host, ArtifactsRoot: w.cfg.ArtifactsRoot})
	switch {
	case err != nil:
		return err
	case res.Finished:
		return nil
	case res.Assignment == nil:
		wait := res.Wait
		if res.Reason == managed.ReasonNoDevice {
			wait = w.cfg.IdleWait
		}
		return river.JobSnooze(w.jitter(wait))
	}
	unlock, err := w.lockDevice(ctx, res.Assignment)
	if err != nil {
		return err
	}
	defer unlock()
	claimed = true
	rep := w.run(ctx, res.Assignment)
	if w.cfg.Observe != nil {
		w.cfg.Observe(rep)
	}
	return w.jobResult(ctx, rep)
}

// freeSerials are the serials of online whose host-wide lock no other
// process holds (all of them without locks). A phone this process drives
// already is left out too: it is leased.
func freeSerials(ctx context.Context, locks DeviceLocker, online []string) []string {
	if locks == nil {
		return online
	}
	free := make([]string, 0, len(online))
	for _, serial := range online {
		if unlock, err := locks.LockDevice(ctx, serial); err == nil {
			unlock()
			free = append(free, serial)
		}
	}
	return free
}

// lockDevice takes the claimed phone's host-wide lock. A phone another
// process took since it was offered is handed back untouched (no retry
// used, no blame on the phone) and the job snoozes.
func (w *ShardWorker) lockDevice(ctx context.Context, a *managed.Assignment) (func(), error) {
	if w.cfg.Locks == nil {
		return func() {}, nil
	}
	unlock, err := w.cfg.Locks.LockDevice(ctx, a.Serial)
	if err == nil {
		return unlock, nil
	}
	if _, rerr := w.cfg.Store.Release(ctx, a.Identity()); rerr != nil && !managed.IsStale(rerr) {
		return nil, rerr
	}
	return nil, river.JobSnooze(w.jitter(w.cfg.IdleWait))
}

// jitter spreads snoozes by up to a fifth so that hosts do not poll in step.
func (w *ShardWorker) jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return d + time.Duration(rand.Int64N(int64(d)/5+1))
}

// jobResult tells River how the job ended: nil when the shard is terminal,
// an error to retry it (a retryable failure or a lost lease: the store has
// requeued the shard), a cancel when it must not run again here.
func (w *ShardWorker) jobResult(ctx context.Context, rep ShardReport) error {
	switch {
	case rep.Err == nil:
		return nil
	case errors.Is(rep.Err, errTaskCancelled):
		return river.JobCancel(rep.Err)
	case rep.Outcome != nil && managed.Terminal(rep.Outcome.ShardStatus):
		return river.JobCancel(rep.Err)
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return rep.Err
}

// run executes one assignment and writes its end through the fence.
func (w *ShardWorker) run(ctx context.Context, a *managed.Assignment) ShardReport {
	id := a.Identity()
	rep := ShardReport{Assignment: a}
	if err := w.cfg.Store.Start(ctx, id); err != nil {
		rep.Err = w.lost(err)
		return rep
	}
	runCtx, stop := context.WithCancelCause(ctx)
	beat := make(chan struct{})
	go func() {
		defer close(beat)
		w.heartbeat(runCtx, stop, a)
	}()
	dir := filepath.Join(w.cfg.ArtifactsRoot, a.TaskID, a.ShardID, a.AttemptID)
	verdict, execErr := w.cfg.Executor.ExecuteShard(runCtx, ShardRun{Assignment: a, ArtifactsDir: dir})
	stop(errExecutorDone)
	<-beat
	cause := context.Cause(runCtx)

	// The job's own context may be cancelled: the store writes that end
	// the attempt still need a little time.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	switch {
	case errors.Is(cause, errLeaseLost):
		rep.Err = errLeaseLost
	case errors.Is(cause, errTaskCancelled):
		rep.Err = errTaskCancelled
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), river.ErrJobCancelledRemotely):
		rep.Err = w.remotelyCancelled(wctx, a, &rep)
	case ctx.Err() != nil:
		// This worker is stopping: hand the shard back untouched.
		out, err := w.cfg.Store.Release(wctx, id)
		rep.Outcome, rep.Err, rep.HandedBack = outcomeOrNil(out, err), errors.Join(context.Cause(ctx), w.lost(err)), err == nil
	case execErr != nil && fault.KindOf(execErr) == fault.Transport:
		// The phone, adb or SoloPi failed before a verdict: retried, then
		// not_tested (its attempt too), never failed.
		out, err := w.failInfrastructure(wctx, a, managed.CategoryTransport, managed.Completion{})
		if rep.Outcome, rep.Err = out, execErr; out == nil {
			rep.Err = errors.Join(execErr, err)
		}
	case execErr != nil:
		out, err := w.cfg.Store.Fail(wctx, id, managed.CategoryWorker, false)
		rep.Outcome, rep.Err = outcomeOrNil(out, err), errors.Join(execErr, w.lost(err))
	case verdict.Status == "not_tested" && verdict.Infrastructure != "":
		rep.Status, rep.ReportPath = verdict.Status, verdict.ReportPath
		rep.Outcome, rep.Err = w.infrastructure(wctx, a, dir, verdict)
	default:
		rep.Status, rep.ReportPath = verdict.Status, verdict.ReportPath
		rep.Outcome, rep.Err = w.complete(wctx, a, dir, verdict)
	}
	return rep
}

// infrastructure ends an attempt whose plan could not run to a verdict for
// a reason of the infrastructure: while the task's retries last, a
// retryable failure under that reason (attempt retryable_failed, the
// shard requeued for any free phone, this one blamed); with none left,
// not_tested with the attempt's report, never failed.
func (w *ShardWorker) infrastructure(ctx context.Context, a *managed.Assignment, dir string, v ShardVerdict) (*managed.Outcome, error) {
	// The report and digest are evidence of the attempt, not its verdict:
	// one that cannot be read is left out rather than turned into a
	// worker error.
	c := managed.Completion{ReportPath: v.ReportPath}
	var err error
	if c.EvidenceDigest, err = EvidenceDigest(dir); err != nil {
		c.EvidenceDigest = ""
	}
	if len(v.Report) > 0 {
		if c.Report, err = canonjson.Decode(v.Report); err != nil {
			c.Report = nil
		}
	}
	return w.failInfrastructure(ctx, a, v.Infrastructure, c)
}

// failInfrastructure fails an attempt for a reason of the infrastructure
// (managed.InfraFailer; a store without it gets a retryable Fail). The
// error says the shard was retried; a shard that ended not_tested because
// no retry was left returns none: not_tested is its verdict.
func (w *ShardWorker) failInfrastructure(ctx context.Context, a *managed.Assignment, category string, c managed.Completion) (*managed.Outcome, error) {
	var out managed.Outcome
	var err error
	if f, ok := w.cfg.Store.(managed.InfraFailer); ok {
		out, err = f.FailInfrastructure(ctx, a.Identity(), category, c)
	} else {
		out, err = w.cfg.Store.Fail(ctx, a.Identity(), category, true)
	}
	if err != nil {
		return nil, w.lost(err)
	}
	if managed.Terminal(out.ShardStatus) {
		return &out, nil
	}
	return &out, noVerdict(category)
}

// noVerdict is the error of a shard's run that met an infrastructure
// fault and is retried: a transport failure (exit 4 for
// managed-worker-once).
func noVerdict(reason string) error {
	return fault.New(fault.Transport, reason, "the shard's run met a fault of the phone, adb or another owner on the phone ("+
		reason+"), not a product verdict; it is retried on the task's budget")
}

// remotelyCancelled handles River cancelling the running job: the owner
// cancelled the task (the store has fenced the attempt already), or an
// operator cancelled the job in River's UI (the shard ends not_tested).
func (w *ShardWorker) remotelyCancelled(ctx context.Context, a *managed.Assignment, rep *ShardReport) error {
	st, err := w.cfg.Store.Status(ctx, a.TaskID)
	if err == nil && st.CancelRequested {
		return errTaskCancelled
	}
	out, err := w.cfg.Store.Fail(ctx, a.Identity(), managed.CategoryJobCancelled, false)
	rep.Outcome = outcomeOrNil(out, err)
	return errors.Join(river.ErrJobCancelledRemotely, w.lost(err))
}

func (w *ShardWorker) complete(ctx context.Context, a *managed.Assignment, dir string, v ShardVerdict) (*managed.Outcome, error) {
	if !verdicts[v.Status] {
		out, err := w.cfg.Store.Fail(ctx, a.Identity(), managed.CategoryWorker, false)
		return outcomeOrNil(out, err), errors.Join(fmt.Errorf("the executor returned the unsupported verdict %q", v.Status), w.lost(err))
	}
	digest, err := EvidenceDigest(dir)
	if err != nil {
		out, ferr := w.cfg.Store.Fail(ctx, a.Identity(), managed.CategoryTransport, true)
		return outcomeOrNil(out, ferr), errors.Join(fmt.Errorf("digest the evidence: %w", err), w.lost(ferr))
	}
	var report any
	if len(v.Report) > 0 {
		if report, err = canonjson.Decode(v.Report); err != nil {
			out, ferr := w.cfg.Store.Fail(ctx, a.Identity(), managed.CategoryWorker, false)
			return outcomeOrNil(out, ferr), errors.Join(fmt.Errorf("the verification report is not JSON: %w", err), w.lost(ferr))
		}
	}
	out, err := w.cfg.Store.Complete(ctx, a.Identity(), managed.Completion{Status: v.Status, FailureCategory: FailureCategory(v.Report, v.Status),
		ReportPath: v.ReportPath, Report: report, EvidenceDigest: digest})
	return outcomeOrNil(out, err), w.lost(err)
}

// lost marks a fencing refusal as a lost lease.
func (w *ShardWorker) lost(err error) error {
	if err != nil && managed.IsStale(err) {
		return errors.Join(errLeaseLost, err)
	}
	return err
}

func outcomeOrNil(o managed.Outcome, err error) *managed.Outcome {
	if err != nil {
		return nil
	}
	return &o
}

// heartbeat renews the lease every third of its duration (at least every
// 200 ms) until ctx ends. A refused renewal stops the executor at once: the
// lease is lost, or the task was cancelled. A renewal that fails for another
// reason (the database is unreachable) is retried until the lease would have
// expired, and then the executor is stopped too. The lease's expiry is in
// the database's time, which this host's clock may not agree with, so the
// host measures the lease from its last renewal on its own clock: a host
// running ahead or behind neither gives up a live lease nor keeps a dead one.
func (w *ShardWorker) heartbeat(ctx context.Context, stop context.CancelCauseFunc, a *managed.Assignment) {
	lease := time.Duration(a.LeaseDurationMs) * time.Millisecond
	interval := max(200*time.Millisecond, lease/3)
	deadline := w.cfg.Clock.Now().Add(lease)
	for {
		if w.cfg.Clock.Sleep(ctx, interval) != nil {
			return
		}
		_, err := w.cfg.Store.Heartbeat(ctx, a.Identity())
		switch {
		case err == nil:
			deadline = w.cfg.Clock.Now().Add(lease)
		case fault.CodeOf(err) == fault.CodeTaskCancelled:
			stop(errTaskCancelled)
			return
		case managed.IsStale(err):
			// Cancelling a task fences its attempts: tell the two apart.
			cause := errLeaseLost
			if st, err := w.cfg.Store.Status(ctx, a.TaskID); err == nil && st.CancelRequested {
				cause = errTaskCancelled
			}
			stop(cause)
			return
		case ctx.Err() != nil:
			return
		case !w.cfg.Clock.Now().Before(deadline):
			stop(errLeaseLost)
			return
		}
	}
}

// recoverWorker is the River worker of the periodic recovery job.
type recoverWorker struct {
	river.WorkerDefaults[managed.RecoverArgs]
	Store managed.Store
}

// Work implements river.Worker.
func (w *recoverWorker) Work(ctx context.Context, _ *river.Job[managed.RecoverArgs]) error {
	_, err := w.Store.Recover(ctx)
	return err
}

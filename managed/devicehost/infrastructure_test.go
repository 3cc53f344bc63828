package devicehost

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/internal/pgtest"
	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/managed/farmreport"
	"github.com/solopi-dev/solopi/managed/worker"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/sim/adbd"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/devicelock"
	"github.com/solopi-dev/solopi/suitereport"
	"github.com/solopi-dev/solopi/verify"
	"github.com/solopi-dev/solopi/verify/onphone"
)

// A fault of the phone, the adb link or another owner on a farm phone is
// never a product verdict: the attempt it hit is retryable_failed under
// the fault's reason and the shard is retried on whichever phone is free;
// with no retry left it ends not_tested, never failed. These tests run
// real shards (verify-run in process) on simulated phones through the
// worker loop, the store and River.

// simFarm is n simulated phones behind the simulator's adb server front,
// each with auto start on, and the host that reaches them through our adb
// client (as a worker on a real host does), with device locks in a
// directory of the test's own.
func simFarm(t *testing.T, n int, scale float64) (*sim.Farm, Host) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The phones and the host share one scaled clock, so that the host's
	// waits on a phone (a replay polls an unreachable phone for 30 s) take
	// the simulated time too. The start-up wait is long in device time, so
	// that a loaded host still has seconds to see SoloPi come up.
	clk := clock.NewScaled(scale)
	f, err := sim.StartFarm(ctx, sim.FarmOptions{Devices: n, NoAdbd: true,
		SerialPrefix: strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())),
		Configure: func(_ int, o *sim.Options) {
			o.Clock = clk
			o.App.Settings = map[string]string{"KEY_REPLAY_AUTO_START": "true"}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := f.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	h := Host{Devices: device.Selector{AdbPath: "adb", AdbServerPort: f.Server().Port()},
		Session: device.SessionOptions{Device: device.DeviceOptions{Package: protocol.DefaultPackage, Port: protocol.DefaultDevicePort,
			RequestTimeout: 5 * time.Second, Clock: clk}, StartupTimeout: 120 * time.Second},
		Budgets: onphone.Budgets{Phone: onphone.Options{PollInterval: 20 * time.Millisecond}},
		Locks:   &devicelock.Locker{Dir: t.TempDir()}}
	return f, h
}

// farmRun is a task of plan on the farm's phones, worked by one worker
// loop (two shards at once, its devices re-probed all along) until the
// task is terminal.
type farmRun struct {
	store managed.Store
	task  string
}

// runTask registers the farm's phones, submits plan (the named fixture)
// with replicas shards and maxRetries, and works it to its end; before,
// when set, runs after the submission and before the worker starts.
func runTask(t *testing.T, f *sim.Farm, h Host, fixture string, replicas, maxRetries int, before func()) farmRun {
	t.Helper()
	return runTaskOn(t, filepath.Join(t.TempDir(), "managed.sqlite"), f, h, fixture, replicas, maxRetries, before)
}

// backends are the stores a farm test runs on: SQLite, and PostgreSQL
// when SOLOPI_TEST_POSTGRES names a server.
var backends = []struct {
	name string
	db   func(t *testing.T) string
}{
	{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "managed.sqlite") }},
	{"postgres", func(t *testing.T) string { return pgtest.Schema(t) }},
}

// runTaskOn is runTask on the store database names.
func runTaskOn(t *testing.T, database string, f *sim.Farm, h Host, fixture string, replicas, maxRetries int, before func()) farmRun {
	t.Helper()
	ctx := context.Background()
	s, err := managed.Open(ctx, database, managed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for _, d := range f.Devices() {
		if _, err := s.RegisterDevice(ctx, managed.DeviceSpec{DeviceID: d.Serial(), Serial: d.Serial(), APILevel: 34,
			Capabilities: []string{"agent", "verification"}}); err != nil {
			t.Fatal(err)
		}
	}
	plan, err := canonjson.Decode(fixturePlan(t, fixture))
	if err != nil {
		t.Fatal(err)
	}
	sub := managed.NewSubmission()
	sub.Plan, sub.Matrix = plan, []any{map[string]any{"id": "counter", "replicas": replicas}}
	sub.IdempotencyKey, sub.OwnerToken, sub.MaxRetries = "infra", "infra-owner-token-0123456789", maxRetries
	task, err := s.Submit(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	if before != nil {
		before()
	}
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var loopErr error
	wg.Go(func() {
		_, loopErr = worker.Run(wctx, worker.LoopConfig{
			Config: worker.Config{Store: s, Executor: h, Devices: h, Locks: h, WorkerID: "infra-worker",
				ArtifactsRoot: t.TempDir(), IdleWait: 100 * time.Millisecond},
			// The re-probe runs beside the shards, on the same phone locks.
			Prober: h, ProbeInterval: 300 * time.Millisecond,
			Concurrency: 2, IdleInterval: 100 * time.Millisecond,
		})
	})
	deadline := time.Now().Add(3 * time.Minute)
	for {
		st, err := s.Status(ctx, task.TaskID)
		if err != nil {
			t.Fatal(err)
		}
		if managed.Terminal(st.Status) {
			break
		}
		if time.Now().After(deadline) {
			stop()
			wg.Wait()
			t.Fatalf("the task never ended: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	wg.Wait()
	if loopErr != nil {
		t.Fatal(loopErr)
	}
	return farmRun{store: s, task: task.TaskID}
}

func (r farmRun) report(t *testing.T) managed.Report {
	t.Helper()
	rep, err := r.store.Report(context.Background(), r.task)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// noFailedAttempt fails unless no attempt of the report is failed: an
// infrastructure fault is never a product verdict, on a shard or on an
// attempt.
func noFailedAttempt(t *testing.T, rep managed.Report) {
	t.Helper()
	if rep.Status == verify.Failed {
		t.Errorf("the task failed")
	}
	for _, sh := range rep.Shards {
		if sh.Status == verify.Failed {
			t.Errorf("shard %s failed (%v)", sh.ShardID, deref(sh.FailureCategory))
		}
		for _, a := range sh.Attempts {
			if a.Status == verify.Failed {
				t.Errorf("attempt %d of %s on %s failed (%s)", a.AttemptNumber, sh.ShardID, a.Serial, deref(a.FailureCategory))
			}
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// A leased phone goes offline in the middle of its shard's replay: that
// attempt is retryable_failed under the replay's transport failure, the
// shard is retried on the other phone and passes there.
func TestFarmPhoneOfflineMidShardIsRetriedElsewhere(t *testing.T) {
	t.Parallel()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			phoneOfflineMidShard(t, be.db(t))
		})
	}
}

func phoneOfflineMidShard(t *testing.T, database string) {
	f, h := simFarm(t, 2, 20)
	var dropped sync.Map
	r := runTaskOn(t, database, f, h, "counter-success", 1, 1, func() {
		go func() {
			for {
				for _, d := range f.Devices() {
					if d.App.LeaseHolder() != "" {
						if err := f.Server().SetState(d.Serial(), adbd.StateOffline); err != nil {
							t.Error(err)
						}
						dropped.Store(d.Serial(), true)
						return
					}
				}
				time.Sleep(time.Millisecond)
			}
		}()
	})
	rep := r.report(t)
	noFailedAttempt(t, rep)
	sh := rep.Shards[0]
	if rep.Status != verify.Passed || sh.Status != verify.Passed || len(sh.Attempts) != 2 {
		t.Fatalf("task %s, shard %s with %d attempts: %+v", rep.Status, sh.Status, len(sh.Attempts), sh)
	}
	first, second := sh.Attempts[0], sh.Attempts[1]
	if _, ok := dropped.Load(first.Serial); !ok || first.Status != "retryable_failed" || !verify.Infrastructure(deref(first.FailureCategory)) {
		t.Errorf("the attempt on the dropped phone: %s on %s (%s)", first.Status, first.Serial, deref(first.FailureCategory))
	}
	if second.Serial == first.Serial || second.Status != verify.Passed {
		t.Errorf("the retry: %s on %s (first on %s)", second.Status, second.Serial, first.Serial)
	}
	// In the suite model (managed-report --junit) the case passed: the
	// first attempt is the phone's error, not the case's failure.
	suite := farmreport.Suite(rep)
	if c := suite.Cases[0]; c.Verdict != suitereport.Passed || c.Attempts[0].Verdict != suitereport.Error || len(suite.Devices) != 2 ||
		suite.Failure() != nil {
		t.Errorf("suite %+v", suite)
	}
}

// Another owner's Agent session holds the only farm phone when its shard
// starts (someone's agent-session-start, a verify-run killed mid
// exploration): no replay can start. Without a retry left the shard is
// not_tested under replay_not_started with the attempt's report, never
// failed. (With retries, the attempt is retryable_failed and retried like
// any infrastructure fault: TestFarmPhoneOfflineMidShardIsRetriedElsewhere.)
func TestFarmPhoneHeldByAnotherOwnersSessionIsNotTested(t *testing.T) {
	t.Parallel()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			phoneHeldByAnotherOwner(t, be.db(t))
		})
	}
}

func phoneHeldByAnotherOwner(t *testing.T, database string) {
	f, h := simFarm(t, 1, 5)
	d := f.Devices()[0]
	r := runTaskOn(t, database, f, h, "counter-success", 1, 0, func() {
		ctx := context.Background()
		if _, _, code, err := d.Shell(ctx, "monkey -p com.example.counter 1"); err != nil || code != 0 {
			t.Fatalf("launch the counter: %d %v", code, err)
		}
		if _, err := d.App.StartForeignAgentSession("someone-else-0123456789abcdef", 300_000); err != nil {
			t.Fatal(err)
		}
	})
	rep := r.report(t)
	noFailedAttempt(t, rep)
	sh := rep.Shards[0]
	if rep.Status != verify.NotTested || sh.Status != verify.NotTested || len(sh.Attempts) != 1 {
		t.Fatalf("task %s, shard %s with %d attempts", rep.Status, sh.Status, len(sh.Attempts))
	}
	if a := sh.Attempts[0]; a.Status != verify.NotTested || deref(a.FailureCategory) != verify.ReasonReplayNotStarted ||
		a.ReportPath == nil || a.VerificationOutcomeFingerprint == nil {
		t.Errorf("the attempt: %s (%s), report %v", a.Status, deref(a.FailureCategory), a.ReportPath)
	}
	if deref(sh.FailureCategory) != verify.ReasonReplayNotStarted {
		t.Errorf("shard category %s", deref(sh.FailureCategory))
	}
}

// orphanRequirement is a case that replays for two minutes of device time:
// the replay a worker killed mid-replay leaves running on its phone.
const orphanRequirement = `{"id":"orphan","title":"orphan","targetAppPackage":"com.example.counter","acceptanceCriteria":["a"],
 "scenarios":[{"id":"orphan","acceptanceCriteria":["AC-001"],"steps":[` +
	`{"id":"w01","action":{"type":"wait","durationMs":5000}},{"id":"w02","action":{"type":"wait","durationMs":5000}},` +
	`{"id":"w03","action":{"type":"wait","durationMs":5000}},{"id":"w04","action":{"type":"wait","durationMs":5000}},` +
	`{"id":"w05","action":{"type":"wait","durationMs":5000}},{"id":"w06","action":{"type":"wait","durationMs":5000}},` +
	`{"id":"w07","action":{"type":"wait","durationMs":5000}},{"id":"w08","action":{"type":"wait","durationMs":5000}},` +
	`{"id":"w09","action":{"type":"wait","durationMs":5000}},{"id":"w10","action":{"type":"wait","durationMs":5000}},` +
	`{"id":"w11","action":{"type":"wait","durationMs":5000}},{"id":"w12","action":{"type":"wait","durationMs":5000}},` +
	`{"id":"w13","action":{"type":"wait","durationMs":5000}},{"id":"w14","action":{"type":"wait","durationMs":5000}},` +
	`{"id":"w15","action":{"type":"wait","durationMs":5000}},{"id":"w16","action":{"type":"wait","durationMs":5000}},` +
	`{"id":"w17","action":{"type":"wait","durationMs":5000}},{"id":"w18","action":{"type":"wait","durationMs":5000}},` +
	`{"id":"w19","action":{"type":"wait","durationMs":5000}},{"id":"w20","action":{"type":"wait","durationMs":5000}},` +
	`{"id":"w21","action":{"type":"wait","durationMs":5000}},{"id":"w22","action":{"type":"wait","durationMs":5000}},` +
	`{"id":"w23","action":{"type":"wait","durationMs":5000}},{"id":"w24","action":{"type":"wait","durationMs":5000}},` +
	`{"id":"reset","action":{"type":"click","selector":{"resourceId":"com.example.counter:id/reset_button"}}}],
  "checkpoints":[{"id":"zero","afterStep":"reset","oracle":{"type":"ui","selector":{"resourceId":"com.example.counter:id/counter_value"},"expected":"0"}}]}]}`

// A worker killed mid-replay leaves its replay running on the phone, and
// its lease expires: the phone goes back into rotation with a replay
// nobody owns. The next shard placed there cancels that orphan (exactly
// its runId) before it begins, and every shard passes on its first
// attempt instead of meeting replay_active.
func TestFarmOrphanReplayIsCancelledBeforeTheShard(t *testing.T) {
	t.Parallel()
	f, h := simFarm(t, 1, 10)
	d := f.Devices()[0]
	var orphan string
	r := runTask(t, f, h, "counter-success", 3, 0, func() {
		ctx := context.Background()
		doc, err := verify.ParseRequirement([]byte(orphanRequirement))
		if err != nil {
			t.Fatal(err)
		}
		plan, err := verify.Compile(doc)
		if err != nil {
			t.Fatal(err)
		}
		c := plan.Scenarios[0].Segments[0].Case
		tr, err := h.Devices.Bind(ctx, d.Serial())
		if err != nil {
			t.Fatal(err)
		}
		s, err := device.OpenSession(ctx, tr, h.sessionOptions(true))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		p := onphone.New(s.Device, onphone.Options{PollInterval: 20 * time.Millisecond})
		defer p.Close()
		if imp, err := p.ImportCase(ctx, c, ""); err != nil || !imp.OK {
			t.Fatalf("import the orphan's case: %+v %v", imp, err)
		}
		if _, orphan, err = d.App.StartCompetingReplay(c.Name); err != nil || orphan == "" {
			t.Fatalf("the orphan replay: %q %v", orphan, err)
		}
	})
	rep := r.report(t)
	noFailedAttempt(t, rep)
	if rep.Status != verify.Passed {
		t.Errorf("task %s", rep.Status)
	}
	for _, sh := range rep.Shards {
		if sh.Status != verify.Passed || len(sh.Attempts) != 1 {
			t.Errorf("shard %s: %s after %d attempts", sh.ShardID, sh.Status, len(sh.Attempts))
		}
	}
	if got := d.MutationsWith("type="+protocol.HarnessCancel, "runId="+url.QueryEscape(orphan)); len(got) != 1 {
		t.Errorf("cancels of the orphan run %s: %v", orphan, got)
	}
}

// A phone another process holds (a local `solopi run`, which takes the
// same host-wide lock) is never leased by a worker while it is held; once
// it is released, the task's shard runs on it: its only attempt was
// claimed after the release, and nothing reached the phone before.
func TestFarmWorkerLeavesALockedPhoneAlone(t *testing.T) {
	t.Parallel()
	f, h := simFarm(t, 1, 20)
	d := f.Devices()[0]
	other := &devicelock.Locker{Dir: h.Locks.Dir, Args: []string{"solopi", "run", "--case", "local"}}
	held, err := other.Acquire(context.Background(), d.Serial(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var releasedAt time.Time
	var mutationsHeld int
	released := make(chan struct{})
	r := runTask(t, f, h, "counter-success", 1, 0, func() {
		go func() {
			defer close(released)
			// Let the worker poll a while with the phone held.
			time.Sleep(500 * time.Millisecond)
			mutationsHeld = len(d.Mutations())
			releasedAt = time.Now()
			if err := held.Release(); err != nil {
				t.Error(err)
			}
		}()
	})
	<-released
	rep := r.report(t)
	if rep.Status != verify.Passed || len(rep.Shards[0].Attempts) != 1 {
		t.Fatalf("task %s, %d attempts", rep.Status, len(rep.Shards[0].Attempts))
	}
	if a := rep.Shards[0].Attempts[0]; a.CreatedAt < releasedAt.UnixMilli() {
		t.Errorf("the attempt was claimed at %d, before the phone was released at %d", a.CreatedAt, releasedAt.UnixMilli())
	}
	if mutationsHeld != 0 {
		t.Errorf("%d scheme intents reached the phone while another process held it", mutationsHeld)
	}
}

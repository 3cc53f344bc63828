package onphone

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/sim/adbd"
	"github.com/solopi-dev/solopi/solopi/adb"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/replay"
	"github.com/solopi-dev/solopi/verify"
	"github.com/solopi-dev/solopi/verify/execution"
)

// A fault of the phone, the adb link or another owner on the phone is never
// a product verdict: the segments it hits are not_tested, a cleanup it
// prevents is not a cleanup that failed, and nothing in the report says
// failed.

// farmPhone is a simulated phone behind the simulator's adb server front,
// reached through our adb client as verify-run reaches a real one, so that
// the adb link itself can fail.
func farmPhone(t *testing.T, o Options) (*sim.Farm, *sim.Device, *Phone) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := sim.StartFarm(ctx, sim.FarmOptions{TimeScale: 20, NoAdbd: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := f.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := adb.NewClient(adb.WithPort(f.Server().Port()), adb.WithoutServerStart())
	if err != nil {
		t.Fatal(err)
	}
	d := f.Devices()[0]
	ad, err := c.Device(ctx, d.Serial())
	if err != nil {
		t.Fatal(err)
	}
	s, err := device.OpenSession(ctx, ad, device.SessionOptions{StartupTimeout: 30 * time.Second, PreserveForeground: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	o.Foreground, o.PollInterval = s.Foreground, 20*time.Millisecond
	p := New(s.Device, o)
	t.Cleanup(p.Close)
	return f, d, p
}

// hookedRunner is the real phone with a hook before each replay.
type hookedRunner struct {
	*Phone
	runs      int
	beforeRun func(n int, req execution.RunRequest)
}

func (h *hookedRunner) RunCase(ctx context.Context, r execution.RunRequest) (execution.RunResult, error) {
	h.runs++
	if h.beforeRun != nil {
		h.beforeRun(h.runs, r)
	}
	return h.Phone.RunCase(ctx, r)
}

// foreignSession leaves an Agent session of another owner on the phone
// (the simulator's foreign-agent-session fault), holding its control lease:
// what a verify-run killed mid-exploration, or someone's
// agent-session-start, leaves behind.
// foreignScale is the time scale of tests with a foreign Agent session:
// the session's longest idle timeout (5 minutes of device time) must
// outlast the whole run even on a loaded machine (a minute of real time
// here; at scale 20 it was 15 s and expired under load, so the cleanup ran).
const foreignScale = 5

func foreignSession(t *testing.T, d *sim.Device, p *Phone) {
	t.Helper()
	if err := p.LaunchTarget(context.Background(), "com.example.counter"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.App.StartForeignAgentSession("someone-else-0123456789abcdef", 300_000); err != nil {
		t.Fatal(err)
	}
}

// runFaulted runs requirement (with decisions) on the ports and reads its
// report, which must hold no failure.
func runFaulted(t *testing.T, requirement []byte, decisions string, e execution.Engine) *verify.Report {
	t.Helper()
	s, err := runOn(t, requirement, decisions, e)
	if err != nil {
		t.Fatalf("no verdict: %v", err)
	}
	r := readReport(t, s.Report)
	noFailure(t, r)
	return r
}

// wantSegment checks a segment's state and reason.
func wantSegment(t *testing.T, seg verify.SegmentResult, state, reason string) {
	t.Helper()
	if seg.State != state || seg.Reason != reason {
		t.Errorf("segment %s: %s/%s, want %s/%s", seg.SegmentID, seg.State, seg.Reason, state, reason)
	}
}

func noFailure(t *testing.T, r *verify.Report) {
	t.Helper()
	if r.Status == verify.Failed {
		t.Errorf("an infrastructure fault became the verdict failed")
	}
	for _, sc := range r.Scenarios {
		if sc.Status == verify.Failed || sc.Cleanup.Status == verify.Failed {
			t.Errorf("scenario %s: %s, cleanup %s", sc.ScenarioID, sc.Status, sc.Cleanup.Status)
		}
		for _, seg := range sc.Segments {
			if seg.State == verify.Failed {
				t.Errorf("segment %s failed", seg.SegmentID)
			}
		}
	}
}

// The phone goes offline (adb) while a replay segment runs: the replay is
// replay_transport_failed, the cleanup cannot even be imported
// (adapter_error), and the scenario is not_tested, never failed.
func TestPhoneOfflineMidReplayIsNotTested(t *testing.T) {
	t.Parallel()
	f, d, phone := farmPhone(t, Options{})
	h := &hookedRunner{Phone: phone, beforeRun: func(n int, _ execution.RunRequest) {
		if n != 1 {
			return
		}
		go func() {
			for d.App.LeaseHolder() == "" {
				time.Sleep(time.Millisecond)
			}
			if err := f.Server().SetState(d.Serial(), adbd.StateOffline); err != nil {
				t.Error(err)
			}
		}()
	}}
	r := runFaulted(t, readFixture(t, "counter-success"), "", execution.Engine{Phones: []execution.Ports{{Runner: h, Agent: phone}}})
	sc := r.Scenarios[0]
	if sc.Status != verify.NotTested || sc.Failure == nil || sc.Failure.Category != verify.ReasonCheckpointNotReached {
		t.Errorf("scenario %s %+v", sc.Status, sc.Failure)
	}
	wantSegment(t, sc.Segments[0], verify.NotTested, verify.ReasonReplayTransport)
	if sc.Cleanup.Status != verify.NotTested {
		t.Errorf("cleanup %s", sc.Cleanup.Status)
	}
}

// Another owner's Agent session holds the phone when a replay starts (a
// verify-run killed mid-exploration left it): the device publishes a
// failed run that never started; the segment is not_tested
// (replay_not_started), and the next run on that phone, the golden matrix
// with solopi-ai's decisions, is not_tested throughout, never failed.
func TestReplayBlockedByAnotherOwnersSessionIsNotTested(t *testing.T) {
	t.Parallel()
	d, phone := newPhone(t, foreignScale)
	foreignSession(t, d, phone)
	dir := filepath.Join(t.TempDir(), "run")
	s, err := prepareMatrix(t, dir).Run(context.Background(), execution.Engine{Phones: []execution.Ports{{Runner: phone, Agent: phone}}})
	if err != nil {
		t.Fatalf("no verdict: %v", err)
	}
	r := readReport(t, s.Report)
	noFailure(t, r)
	if s.Status != verify.NotTested {
		t.Errorf("status %s", s.Status)
	}
	sc := r.Scenarios[0]
	wantSegment(t, sc.Segments[0], verify.NotTested, verify.ReasonReplayNotStarted)
	if cp := sc.Checkpoints[0]; cp.Status != verify.NotTested || cp.Reason != verify.ReasonReplayNotStarted {
		t.Errorf("checkpoint %s/%s", cp.Status, cp.Reason)
	}
	if sc.Cleanup.Status != verify.NotTested {
		t.Errorf("cleanup %s", sc.Cleanup.Status)
	}
}

// The checkpoints passed, then another owner's Agent session takes the
// phone before the cleanup replays: the cleanup did not run, so it did not
// fail, and the scenario cannot pass either: not_tested,
// cleanup_not_tested.
func TestCleanupThatCouldNotRunIsNotTested(t *testing.T) {
	t.Parallel()
	d, phone := newPhone(t, foreignScale)
	h := &hookedRunner{Phone: phone, beforeRun: func(n int, _ execution.RunRequest) {
		if n == 2 {
			foreignSession(t, d, phone)
		}
	}}
	r := runFaulted(t, readFixture(t, "counter-success"), "", execution.Engine{Phones: []execution.Ports{{Runner: h, Agent: phone}}})
	sc := r.Scenarios[0]
	for _, cp := range sc.Checkpoints {
		if cp.Status != verify.Passed {
			t.Errorf("checkpoint %s %s/%s", cp.CheckpointID, cp.Status, cp.Reason)
		}
	}
	if sc.Status != verify.NotTested || sc.Cleanup.Status != verify.NotTested ||
		sc.Failure == nil || sc.Failure.Category != verify.CategoryCleanupNotTested || sc.Failure.Reason != verify.ReasonReplayNotStarted {
		t.Errorf("scenario %s cleanup %s failure %+v", sc.Status, sc.Cleanup.Status, sc.Failure)
	}
}

// Another client's replay is running when ours should start (a competing
// replay): ours never started, replay_not_started.
func TestCompetingReplayIsNotTested(t *testing.T) {
	t.Parallel()
	d, phone := newPhone(t, 20)
	h := &hookedRunner{Phone: phone, beforeRun: func(n int, req execution.RunRequest) {
		if n != 1 {
			return
		}
		if _, run, err := d.App.StartCompetingReplay(req.CaseName); err != nil || run == "" {
			t.Errorf("competing replay: %q %v", run, err)
		}
	}}
	r := runFaulted(t, []byte(slowCase), "", execution.Engine{Phones: []execution.Ports{{Runner: h, Agent: phone}}})
	wantSegment(t, r.Scenarios[0].Segments[0], verify.NotTested, verify.ReasonReplayNotStarted)
}

// Another owner's Agent session holds the phone when an explore segment
// starts its own: the session cannot start (agent_start_failed), the
// scenario is not_tested.
func TestAgentStartBlockedByAnotherOwnerIsNotTested(t *testing.T) {
	t.Parallel()
	d, phone := newPhone(t, foreignScale)
	phone.o.AgentStartTimeout = 2 * time.Second
	decisions := `{"s":{"explore":[` + clickIncrement + `,` + done + `]}}`
	foreign := &launchHook{Phone: phone, before: func() { foreignSession(t, d, phone) }}
	r := runFaulted(t, exploreRequirement(`{}`), decisions, execution.Engine{Phones: []execution.Ports{{Runner: phone, Agent: foreign}}})
	sc := r.Scenarios[0]
	wantSegment(t, sc.Segments[1], verify.NotTested, verify.ReasonAgentStartFailed)
}

// launchHook runs before on the explore segment's first call to the phone.
type launchHook struct {
	*Phone
	before func()
}

func (l *launchHook) LaunchTarget(ctx context.Context, pkg string) error {
	l.before()
	return l.Phone.LaunchTarget(ctx, pkg)
}

// Someone else cancels our replay on the phone: the run ended without a
// verdict, not_tested/replay_not_terminal, as solopi-ai says (not an
// interrupt of the verification, which goes on to the cleanup).
func TestReplayCancelledElsewhereIsNotTerminal(t *testing.T) {
	t.Parallel()
	d, phone := newPhone(t, 5)
	h := &hookedRunner{Phone: phone, beforeRun: func(n int, _ execution.RunRequest) {
		if n != 1 {
			return
		}
		go func() {
			ctx := context.Background()
			for d.App.LeaseHolder() == "" {
				time.Sleep(time.Millisecond)
			}
			st, err := replay.FetchReplayStatus(ctx, phone.dev)
			if err == nil {
				_, err = replay.CancelRun(ctx, phone.dev, st.RunID, 10*time.Second, 20*time.Millisecond)
			}
			if err != nil {
				t.Error(err)
			}
		}()
	}}
	r := runFaulted(t, []byte(slowCase), "", execution.Engine{Phones: []execution.Ports{{Runner: h, Agent: phone}}})
	if r.Interrupted {
		t.Error("someone else's cancel interrupted the verification")
	}
	wantSegment(t, r.Scenarios[0].Segments[0], verify.NotTested, verify.ReasonReplayNotTerminal)
}

package onphone

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/replay"
	"github.com/solopi-dev/solopi/verify"
	"github.com/solopi-dev/solopi/verify/execution"
)

// The matrix's outcome fingerprint as solopi-ai computes it on the
// simulator with its static decisions.
const outcomeMatrixDecisions = "61e3753994ad27d965fd556d4dd7aef201ccd686c435390e489577bbe519a91a"

const fixtures = "../testdata/solopi-ai/"

// newPhone starts a simulated phone and opens the ports on it.
func newPhone(t testing.TB, scale float64) (*sim.Device, *Phone) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d := sim.New(sim.Options{Serial: "sim-onphone", TimeScale: scale})
	t.Cleanup(func() { d.Close() })
	if err := d.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := device.OpenSession(ctx, d, device.SessionOptions{StartupTimeout: 30 * time.Second, PreserveForeground: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	p := New(s.Device, Options{Foreground: s.Foreground, PollInterval: 20 * time.Millisecond})
	t.Cleanup(p.Close)
	return d, p
}

func compile(t testing.TB, requirement []byte) *verify.Plan {
	t.Helper()
	doc, err := verify.ParseRequirement(requirement)
	if err != nil {
		t.Fatal(err)
	}
	p, err := verify.Compile(doc)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(fixtures + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// prepareMatrix prepares the outcome matrix with solopi-ai's decisions.
func prepareMatrix(t testing.TB, dir string) *execution.Prepared {
	t.Helper()
	b, err := verify.MarshalPlan(compile(t, readFixture(t, "counter-outcome-matrix")))
	if err != nil {
		t.Fatal(err)
	}
	p, err := execution.Prepare(execution.RunOptions{Plan: b, Artifacts: dir,
		DecisionsFile: fixtures + "counter-agent-decisions.json"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The ports reach solopi-ai's verdicts on the simulator, and no owner
// token reaches a file.
func TestPortsReachTheGoldenMatrix(t *testing.T) {
	t.Parallel()
	_, phone := newPhone(t, 20)
	dir := filepath.Join(t.TempDir(), "run")
	s, err := prepareMatrix(t, dir).Run(context.Background(), execution.Engine{Phones: []execution.Ports{{Runner: phone, Agent: phone}}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != verify.Failed || s.OutcomeFingerprint != outcomeMatrixDecisions {
		t.Fatalf("summary %+v", s)
	}
	if len(phone.tokens) == 0 {
		t.Fatal("no Agent session was started")
	}
	tok := regexp.MustCompile(`verification-[0-9a-f]{32}`)
	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if tok.Match(b) {
			t.Errorf("%s holds an owner token", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A slow case: a minute of waiting.
const slowCase = `{"id":"slow","title":"slow","targetAppPackage":"com.example.counter","acceptanceCriteria":["a"],
 "scenarios":[{"id":"slow","acceptanceCriteria":["AC-001"],"steps":[
  {"id":"w1","action":{"type":"wait","durationMs":5000}},{"id":"w2","action":{"type":"wait","durationMs":5000}},
  {"id":"w3","action":{"type":"wait","durationMs":5000}},{"id":"w4","action":{"type":"wait","durationMs":5000}},
  {"id":"reset","action":{"type":"click","selector":{"resourceId":"com.example.counter:id/reset_button"}}}],
  "checkpoints":[{"id":"zero","afterStep":"reset","oracle":{"type":"ui","selector":{"resourceId":"com.example.counter:id/counter_value"},"expected":"0"}}]}]}`

// A replay that someone else cancels is a replay that did not finish, not
// an interrupt of the verification; one whose context is cancelled is,
// and exactly our run is cancelled.
func TestRunCancelledElsewhereIsNotAnInterrupt(t *testing.T) {
	t.Parallel()
	d, phone := newPhone(t, 20)
	seg := compile(t, []byte(slowCase)).Scenarios[0].Segments[0]
	dir := t.TempDir()
	casePath := filepath.Join(dir, "case.json")
	if err := os.WriteFile(casePath, mustJSON(t, seg.Case.Tree()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	imp, err := phone.ImportCase(ctx, seg.Case, casePath)
	if err != nil || !imp.OK || imp.Receipt["requestId"] == nil {
		t.Fatalf("import %+v %v", imp, err)
	}
	run := func(ctx context.Context, name string) (execution.RunResult, error) {
		return phone.RunCase(ctx, execution.RunRequest{CaseName: seg.Case.Name, TargetPackage: "com.example.counter",
			ArtifactsDir: filepath.Join(dir, name)})
	}
	waitHeld := func() string {
		deadline := time.Now().Add(20 * time.Second)
		for d.App.LeaseHolder() == "" {
			if time.Now().After(deadline) {
				t.Fatal("the replay never started")
			}
			time.Sleep(10 * time.Millisecond)
		}
		st, err := replay.FetchReplayStatus(ctx, phone.dev)
		if err != nil {
			t.Fatal(err)
		}
		return st.RunID
	}

	done := make(chan struct{})
	var res execution.RunResult
	go func() {
		defer close(done)
		res, err = run(ctx, "elsewhere")
	}()
	if _, cerr := replay.CancelRun(ctx, phone.dev, waitHeld(), 10*time.Second, 20*time.Millisecond); cerr != nil {
		t.Fatal(cerr)
	}
	<-done
	if err == nil || fault.IsInterrupt(err) || res.Response["state"] != "cancelled" {
		t.Fatalf("cancelled elsewhere: %v %v", res.Response["state"], err)
	}

	cctx, cancel := context.WithCancel(ctx)
	done = make(chan struct{})
	go func() {
		defer close(done)
		res, err = run(cctx, "interrupted")
	}()
	runID := waitHeld()
	cancel()
	<-done
	if !fault.IsInterrupt(err) || res.Response["runId"] != runID || res.Files["result"] == "" {
		t.Fatalf("interrupted: %v %v %v", res.Response, res.Files, err)
	}
	if st, _ := replay.FetchReplayStatus(ctx, phone.dev); st.State != "cancelled" || st.RunID != runID {
		t.Errorf("device state %s %s", st.State, st.RunID)
	}
}

// Screenshots need only the session ID (the vision provider has no
// token); cancel accepts a session already terminal; a session this phone
// did not start is refused; an app without a launcher cannot be brought
// to the front.
func TestAgentPorts(t *testing.T) {
	t.Parallel()
	_, phone := newPhone(t, 10)
	ctx := context.Background()
	if err := phone.LaunchTarget(ctx, "com.example.counter"); err != nil {
		t.Fatal(err)
	}
	if err := phone.LaunchTarget(ctx, "com.example.absent"); err == nil || fault.IsInterrupt(err) {
		t.Errorf("an absent app was launched: %v", err)
	}
	tok := redact.NewSecret("verification-0123456789abcdef0123456789abcdef")
	b := verify.Budget{MaxSteps: 5, MaxDurationMs: 600000, IdleTimeoutMs: 300000, MaxRepeatedActions: 5, MaxNoProgressSteps: 3}
	st, err := phone.Start(ctx, execution.StartRequest{OwnerToken: tok, Budget: b})
	if err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(t.TempDir(), "shot.png")
	if err := phone.Screenshot(ctx, execution.SessionRef{SessionID: st.SessionID}, st.Observation, shot); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(shot); err != nil || fi.Size() == 0 {
		t.Fatalf("screenshot %v", err)
	}
	ref := execution.SessionRef{SessionID: st.SessionID, OwnerToken: tok}
	if res, err := phone.Cancel(ctx, ref); err != nil || res["state"] != "cancelled" {
		t.Fatalf("cancel %v %v", res, err)
	}
	if res, err := phone.Cancel(ctx, ref); err != nil || res["state"] != "cancelled" {
		t.Errorf("a second cancel: %v %v", res, err)
	}
	if _, err := phone.End(ctx, ref); fault.KindOf(err) != fault.Failed {
		t.Errorf("ending a cancelled session: %v", err)
	}
	if err := phone.Screenshot(ctx, execution.SessionRef{SessionID: "session-other"}, st.Observation, shot); fault.CodeOf(err) != fault.CodeUnknownSession {
		t.Errorf("another session's screenshot: %v", err)
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := canonjson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

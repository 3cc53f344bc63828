package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/sim/android"
	"github.com/solopi-dev/solopi/sim/android/ui"
	"github.com/solopi-dev/solopi/solopi/device"
)

// The apps of these tests, as the simulator installs them.
const (
	loginPkg   = "com.example.login"
	counterPkg = "com.example.counter"
)

// newAgentFixture starts a simulated phone (the simulator is the device of
// every test: SoloPi's Agent resolver with its real root, settle and
// receipt rules) with the login app in front, and an Agent client on a
// session to it; everything is closed when the test ends.
func newAgentFixture(t *testing.T) (*sim.Device, *AgentClient) {
	t.Helper()
	return simAgentClient(t, loginPkg)
}

func simAgentClient(t *testing.T, pkg string) (*sim.Device, *AgentClient) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dev := sim.New(sim.Options{Serial: "sim-agent", TimeScale: 10})
	t.Cleanup(func() { dev.Close() })
	if err := dev.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if err := dev.Phone.LaunchApp(pkg); err != nil {
		t.Fatal(err)
	}
	s, err := device.OpenSession(ctx, dev, device.SessionOptions{PreserveForeground: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c := NewAgentClient(s.Device, AgentOptions{Foreground: s.Foreground, PollInterval: 20 * time.Millisecond})
	t.Cleanup(c.Close)
	return dev, c
}

// foreground is the package of the focused window.
func foreground(dev *sim.Device) string {
	pkg, _ := dev.Phone.Foreground()
	return pkg
}

// agentMutations lists the Agent mutations of one type the device received,
// decoded as SoloPi decodes them.
func agentMutations(dev *sim.Device, typ string) []map[string]string {
	var out []map[string]string
	for _, m := range dev.Mutations() {
		u := protocol.ParseMutationURI(m)
		if len(u.Segments) == 1 && u.Segments[0] == protocol.ActionAgent && (typ == "" || u.Params[protocol.ParamType] == typ) {
			out = append(out, u.Params)
		}
	}
	return out
}

// simBudget keeps the device's idle and duration limits far from the wall
// time a slow (-race) run needs: the simulator scales them with its clock.
func simBudget() AgentBudget {
	b := DefaultAgentBudget()
	b.IdleTimeoutMs, b.MaxDurationMs = 300_000, 1_800_000
	return b
}

func testStart(t *testing.T, c *AgentClient, tok OwnerToken) *startResult {
	t.Helper()
	res, err := c.Start(context.Background(), StartOptions{OwnerToken: tok, Budget: simBudget(), AckTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	return res
}

func errCode(t *testing.T, err error) (string, fault.Kind) {
	t.Helper()
	var e *fault.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not an *fault.Error", err)
	}
	return e.Code, e.Kind
}

func wantErr(t *testing.T, err error, code string, exit fault.Kind) *fault.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("want %s (exit %v), got success", code, exit)
	}
	c, x := errCode(t, err)
	if c != code || x != exit {
		t.Fatalf("want %s (exit %v), got %s (exit %v): %v", code, exit, c, x, err)
	}
	var e *fault.Error
	errors.As(err, &e)
	return e
}

func strp(s string) *string { return &s }

func countMutations(dev *sim.Device, typ string) int { return len(agentMutations(dev, typ)) }

// The whole happy path: start → observe → act (click by selector) →
// settled observation → end, with the foreground restored after every
// mutation and a complete, contiguous timeline.
func TestAgentFullSession(t *testing.T) {
	t.Parallel()
	dev, c := simAgentClient(t, counterPkg)
	ctx := context.Background()
	tok := NewOwnerToken()
	st := testStart(t, c, tok)
	if st.Session.State != "active" || st.Observation == nil || st.Observation.Page == nil {
		t.Fatalf("start result %+v", st.Session)
	}
	if !strings.HasSuffix(st.TimelinePath, "/agent-sessions/"+st.Session.SessionID+"/timeline.jsonl") {
		t.Errorf("timelinePath %q", st.TimelinePath)
	}
	if foreground(dev) != counterPkg || !st.Foreground.Restored {
		t.Errorf("foreground after start: %q %+v", foreground(dev), st.Foreground)
	}
	id := st.Identity(tok)

	ob, err := c.Observe(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if ob.Observation.ObservationID == st.Observation.ObservationID {
		t.Fatal("observe did not create a new observation")
	}
	nodeID, err := ResolveSelector(ob.Observation, Selector{ResourceID: counterPkg + ":id/increment_button"})
	if err != nil {
		t.Fatal(err)
	}
	if n := ob.Observation.Page.Find(nodeID); n == nil || n.Text != "+1" || n.ClassName != "android.widget.Button" {
		t.Fatalf("resolved %s to %+v", nodeID, n)
	}
	ar, err := c.Act(ctx, ActRequest{Identity: id, StepID: "step-001", ObservationID: ob.Observation.ObservationID,
		Action: protocol.ActClick, Args: protocol.ActionArgs{NodeID: &nodeID}})
	if err != nil {
		t.Fatal(err)
	}
	if ar.Receipt.Status != receiptSucceeded || ar.Replayed || ar.Foreground == nil || !ar.Foreground.Restored {
		t.Fatalf("act result receipt=%+v replayed=%v fg=%+v", ar.Receipt.Summary(), ar.Replayed, ar.Foreground)
	}
	settled := ar.SettledObservation()
	if _, err := ResolveSelector(settled, Selector{ResourceID: counterPkg + ":id/counter_value", Text: "1"}); err != nil {
		t.Fatalf("settled observation does not show the new count: %v", err)
	}
	if ar.Session.ObservationID != settled.ObservationID || ar.Session.AcceptedSteps != 1 {
		t.Errorf("session after act: %+v", ar.Session.Summary())
	}

	// The screenshot of the settled observation, checked against its hash.
	dir := t.TempDir()
	shot, err := c.SaveScreenshot(ctx, id, settled, filepath.Join(dir, "settled.png"), false)
	if err != nil {
		t.Fatal(err)
	}
	if shot.SHA256 != settled.ScreenshotSHA256 {
		t.Errorf("screenshot sha %s != %s", shot.SHA256, settled.ScreenshotSHA256)
	}
	_, err = c.SaveScreenshot(ctx, id, settled, filepath.Join(dir, "settled.png"), false)
	wantErr(t, err, fault.CodeOutputExists, fault.Invalid)

	end, err := c.End(ctx, id, ControlOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if end.Session.State != "ended" || end.Session.TerminalReason != "client_end" || end.Session.LeaseHeld || !end.Changed {
		t.Fatalf("after end: %+v", end.Session.Summary())
	}
	if foreground(dev) != counterPkg {
		t.Errorf("foreground after end: %q", foreground(dev))
	}

	tl, err := c.Timeline(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range tl.Events {
		types = append(types, e.Type)
	}
	want := []string{eventSessionStarted, eventObservationCreated, eventObservationCreated, eventActionAccepted,
		eventActionSettled, eventSessionTerminal, eventLeaseReleased}
	if strings.Join(types, ",") != strings.Join(want, ",") {
		t.Fatalf("events %v, want %v", types, want)
	}
	ck := tl.Check
	if !ck.Complete || !ck.SequenceContiguous || ck.FirstSequence != 1 || ck.LastSequence != 7 || ck.LeaseReleased != 1 || ck.TerminalEvents != 1 {
		t.Fatalf("timeline check %+v", ck)
	}
	// The settled observation can be found again by id without observing.
	if o, err := tl.FindObservation(settled.ObservationID); err != nil || o.TreeSHA256 != settled.TreeSHA256 {
		t.Fatalf("find settled observation: %v", err)
	}

	saved, err := c.SaveTimeline(ctx, id, tl.TimelinePath, filepath.Join(dir, "timeline.jsonl"), false)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := dev.Phone.FS().ReadFile(tl.TimelinePath)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	if saved.SHA256 != hex.EncodeToString(sum[:]) || !saved.Check.Complete {
		t.Fatalf("saved timeline %+v", saved)
	}
	local, _ := os.ReadFile(saved.Path)
	if strings.Contains(string(local), tok.Reveal()) {
		t.Fatal("owner token in the saved timeline")
	}
	// Every mutation carried exactly this session and token.
	for _, m := range agentMutations(dev, "") {
		if m[protocol.ParamType] != protocol.AgentStart && (m["sessionId"] != id.SessionID || m["ownerToken"] != tok.Reveal()) {
			t.Errorf("mutation %s with foreign identity", m[protocol.ParamType])
		}
	}
}

// Rejections the device makes before acting come back as exit 2 with the
// device's code; identity errors are caught before anything is sent.
func TestAgentRejectionsBeforeActing(t *testing.T) {
	t.Parallel()
	dev, c := newAgentFixture(t)
	ctx := context.Background()
	tok := NewOwnerToken()
	st := testStart(t, c, tok)
	id := st.Identity(tok)
	first := st.Observation
	node, err := ResolveSelector(first, Selector{ResourceID: loginPkg + ":id/sign_in_button"})
	if err != nil {
		t.Fatal(err)
	}
	click := func(stepID, obsID string, who AgentIdentity) (*actResult, error) {
		return c.Act(ctx, ActRequest{Identity: who, StepID: stepID, ObservationID: obsID, Action: protocol.ActClick,
			Args: protocol.ActionArgs{NodeID: &node}, Timeout: 5 * time.Second})
	}

	// Stale: a newer observation exists.
	ob, err := c.Observe(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	ar, err := click("stale-1", first.ObservationID, id)
	wantErr(t, err, protocol.ErrStaleObservation, fault.Failed)
	if ar == nil || ar.Receipt.Status != ReceiptRejected {
		t.Fatalf("stale receipt %+v", ar)
	}

	// Consumed: the current observation was already acted upon.
	if _, err := click("ok-1", ob.Observation.ObservationID, id); err != nil {
		t.Fatal(err)
	}
	_, err = click("consumed-1", ob.Observation.ObservationID, id)
	wantErr(t, err, protocol.ErrStaleObservation, fault.Failed)

	// Another owner and another session: refused before any act is sent.
	acts := countMutations(dev, protocol.AgentAct)
	cur, err := c.Status(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	_, err = click("owner-1", cur.ObservationID, AgentIdentity{SessionID: id.SessionID, OwnerToken: NewOwnerToken()})
	e := wantErr(t, err, protocol.ErrOwnerMismatch, fault.Failed)
	if e.Details["sessionId"] != id.SessionID {
		t.Errorf("details %v", e.Details)
	}
	_, err = click("session-1", cur.ObservationID, AgentIdentity{SessionID: "agent-session-other", OwnerToken: tok})
	wantErr(t, err, protocol.ErrSessionNotFound, fault.Failed)
	if got := countMutations(dev, protocol.AgentAct); got != acts {
		t.Errorf("identity rejections sent %d act mutations", got-acts)
	}

	// Paused: rejected by the device; resume makes it usable again.
	if _, err := c.Pause(ctx, id, ControlOptions{}); err != nil {
		t.Fatal(err)
	}
	if r, err := c.Pause(ctx, id, ControlOptions{}); err != nil || r.Changed {
		t.Fatalf("second pause: %v changed=%v", err, r != nil && r.Changed)
	}
	_, err = click("paused-1", cur.ObservationID, id)
	wantErr(t, err, protocol.ErrSessionPaused, fault.Failed)
	rs, err := c.Resume(ctx, id, ControlOptions{})
	if err != nil || rs.Session.State != "active" {
		t.Fatalf("resume: %v", err)
	}
	if _, err := click("after-resume", cur.ObservationID, id); err != nil {
		t.Fatalf("act after resume: %v", err)
	}

	// A terminal session refuses control at once.
	if _, err := c.Cancel(ctx, id, ControlOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = c.End(ctx, id, ControlOptions{})
	wantErr(t, err, protocol.ErrTerminalSession, fault.Failed)
}

// Resubmitting a stepId returns the stored receipt and never acts twice.
func TestAgentStepReplay(t *testing.T) {
	t.Parallel()
	dev, c := newAgentFixture(t)
	ctx := context.Background()
	tok := NewOwnerToken()
	st := testStart(t, c, tok)
	id := st.Identity(tok)
	node, _ := ResolveSelector(st.Observation, Selector{ResourceID: loginPkg + ":id/sign_in_button"})
	req := ActRequest{Identity: id, StepID: "step-replay", ObservationID: st.Observation.ObservationID,
		Action: protocol.ActClick, Args: protocol.ActionArgs{NodeID: &node}}
	a1, err := c.Act(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := c.Act(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !a2.Replayed || string(a2.Receipt.Raw) != string(a1.Receipt.Raw) {
		t.Fatalf("replay: replayed=%v\n%s\n%s", a2.Replayed, a1.Receipt.Raw, a2.Receipt.Raw)
	}
	if n := countMutations(dev, protocol.AgentAct); n != 1 {
		t.Fatalf("%d act mutations, want 1", n)
	}
	// The same stepId for another action (or other arguments) is a
	// conflict: nothing is sent, the stored receipt is not passed off as
	// the new action's.
	text := "hello"
	for _, other := range []ActRequest{
		{Identity: id, StepID: "step-replay", ObservationID: st.Observation.ObservationID, Action: protocol.ActBack},
		{Identity: id, StepID: "step-replay", ObservationID: st.Observation.ObservationID, Action: protocol.ActInput, Args: protocol.ActionArgs{NodeID: &node, Text: &text}},
	} {
		r, err := c.Act(ctx, other)
		if e := fault.From(err); r != nil || e.Code != fault.CodeStepIDConflict || e.Kind != fault.Failed || e.Details["receipt"] == nil {
			t.Fatalf("%s under a used stepId: %v %v", other.Action, r, err)
		}
	}
	if n := countMutations(dev, protocol.AgentAct); n != 1 {
		t.Fatalf("%d act mutations after the conflicts, want 1", n)
	}
	// Even when the mutation reaches the device twice, it acts once.
	dev2, c2 := newAgentFixture(t)
	st2 := testStart(t, c2, tok)
	id2 := st2.Identity(tok)
	node2, _ := ResolveSelector(st2.Observation, Selector{ResourceID: loginPkg + ":id/sign_in_button"})
	p := ActRequest{Identity: id2, StepID: "dup", ObservationID: st2.Observation.ObservationID, Action: protocol.ActClick,
		Args: protocol.ActionArgs{NodeID: &node2}}.params()
	for range 2 {
		if err := c2.Device().Mutate(ctx, protocol.ActionAgent, append(device.P(protocol.ParamType, protocol.AgentAct), p...)); err != nil {
			t.Fatal(err)
		}
		if err := dev2.Phone.LaunchApp(loginPkg); err != nil { // what the client's restore does
			t.Fatal(err)
		}
	}
	r, err := c2.Act(ctx, ActRequest{Identity: id2, StepID: "dup", ObservationID: st2.Observation.ObservationID,
		Action: protocol.ActClick, Args: protocol.ActionArgs{NodeID: &node2}})
	if err != nil {
		t.Fatal(err)
	}
	tl, _ := c2.Timeline(ctx, id2)
	if tl.Check.TypeCounts[eventActionAccepted] != 1 || r.Receipt.Status != receiptSucceeded {
		t.Fatalf("accepted %d times", tl.Check.TypeCounts[eventActionAccepted])
	}
}

func TestResolveSelector(t *testing.T) {
	t.Parallel()
	_, c := newAgentFixture(t)
	tok := NewOwnerToken()
	st := testStart(t, c, tok)
	obs := st.Observation

	_, err := ResolveSelector(obs, Selector{Text: "Sign in"})
	e := wantErr(t, err, fault.CodeSelectorAmbiguous, fault.Failed)
	cands := e.Details["candidates"].([]nodeCandidate)
	if len(cands) != 2 || cands[0].NodeID == "" || cands[0].Bounds == "" {
		t.Fatalf("candidates %+v", cands)
	}
	for _, cd := range cands {
		if !strings.Contains(e.Message, cd.NodeID) || !strings.Contains(e.Message, cd.Bounds) {
			t.Errorf("message %q does not name %s", e.Message, cd.NodeID)
		}
	}

	_, err = ResolveSelector(obs, Selector{Text: "Sign in", ClassName: "android.widget.CheckBox"})
	e = wantErr(t, err, fault.CodeSelectorNoMatch, fault.Failed)
	if cs := e.Details["candidates"].([]nodeCandidate); len(cs) != 2 {
		t.Fatalf("partial candidates %+v", cs)
	}
	if !strings.Contains(e.Message, "resourceId=") {
		t.Errorf("message %q", e.Message)
	}

	_, err = ResolveSelector(obs, Selector{ClassName: "android.widget.EditText"})
	wantErr(t, err, fault.CodeSelectorAmbiguous, fault.Failed)

	id, err := ResolveSelector(obs, Selector{Text: "Sign in", ClassName: "android.widget.Button"})
	if err != nil || obs.Page.Find(id).ResourceID != loginPkg+":id/sign_in_button" {
		t.Fatalf("resolve: %s %v", id, err)
	}
	_, err = ResolveSelector(obs, Selector{})
	wantErr(t, err, fault.CodeInvalidSelector, fault.Invalid)
}

func TestAgentBudgetValidation(t *testing.T) {
	t.Parallel()
	dev, c := newAgentFixture(t)
	ok := DefaultAgentBudget()
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	cases := []func(*AgentBudget){
		func(b *AgentBudget) { b.MaxSteps = 0 },
		func(b *AgentBudget) { b.MaxSteps = 201 },
		func(b *AgentBudget) { b.MaxDurationMs = 999 },
		func(b *AgentBudget) { b.MaxDurationMs = 1_800_001 },
		func(b *AgentBudget) { b.IdleTimeoutMs = 300_001 },
		func(b *AgentBudget) { b.MaxRepeatedActions = 21 },
		func(b *AgentBudget) { b.MaxNoProgressSteps = 0 },
	}
	for i, mut := range cases {
		b := DefaultAgentBudget()
		mut(&b)
		_, err := c.Start(context.Background(), StartOptions{OwnerToken: NewOwnerToken(), Budget: b})
		e := wantErr(t, err, protocol.ErrInvalidParameter, fault.Invalid)
		if !strings.Contains(e.Message, "must be between") {
			t.Errorf("case %d: %q", i, e.Message)
		}
	}
	if len(dev.Mutations()) != 0 {
		t.Fatal("an invalid budget reached the device")
	}
	for _, edge := range []AgentBudget{{1, 1000, 1000, 1, 1}, {200, 1_800_000, 300_000, 20, 20}} {
		if err := edge.Validate(); err != nil {
			t.Errorf("%+v: %v", edge, err)
		}
	}
}

func TestOwnerTokenNeverFormats(t *testing.T) {
	t.Parallel()
	tok := NewOwnerToken()
	if len(tok.Reveal()) != 64 || strings.Trim(tok.Reveal(), "0123456789abcdef") != "" {
		t.Fatalf("token shape %d", len(tok.Reveal()))
	}
	id := AgentIdentity{SessionID: "agent-session-1", OwnerToken: tok}
	js, _ := json.Marshal(map[string]any{"t": tok, "id": id})
	for _, s := range []string{fmt.Sprint(tok), fmt.Sprintf("%v %s %q %x %+v %#v", tok, tok, tok, tok, id, id), string(js), tok.String()} {
		if strings.Contains(s, tok.Reveal()) {
			t.Fatalf("token leaked in %q", s)
		}
	}
	for _, bad := range []string{"short", "has space in it here", strings.Repeat("a", 161), "ünïcödé-ünïcödé-x"} {
		_, err := ParseOwnerToken(bad)
		e := wantErr(t, err, fault.CodeInvalidOwnerToken, fault.Invalid)
		if strings.Contains(e.Error(), bad) {
			t.Errorf("error echoes the token: %v", e)
		}
	}
	if _, err := ParseOwnerToken("0123456789abcdef"); err != nil {
		t.Fatal(err)
	}
	if got := tok.Redact("x" + tok.Reveal() + "y"); got != "x[redacted]y" {
		t.Errorf("redact %q", got)
	}
}

// A start whose first observation never arrives times out and cancels
// exactly the session it created.
func TestAgentStartTimeoutCancelsExactSession(t *testing.T) {
	t.Parallel()
	dev, c := newAgentFixture(t)
	// The first observation's screenshot never comes back.
	dev.Phone.SetScreenshotFault(nil, time.Hour)
	tok := NewOwnerToken()
	_, err := c.Start(context.Background(), StartOptions{OwnerToken: tok, Budget: simBudget(), AckTimeout: 300 * time.Millisecond})
	e := wantErr(t, err, fault.CodeAgentStartTimeout, fault.Timeout)
	cl, ok := e.Details["cleanup"].(agentCleanup)
	sid := startedSession(t, dev)
	if !ok || !cl.Attempted || !cl.Success || cl.State != "cancelled" || cl.SessionID != sid {
		t.Fatalf("cleanup %+v (session %s)", cl, sid)
	}
	checkExactCancel(t, dev, c, sid, tok)
}

// startedSession is the session the host cancelled after its one start.
func startedSession(t *testing.T, dev *sim.Device) string {
	t.Helper()
	for _, m := range agentMutations(dev, protocol.AgentCancel) {
		return m["sessionId"]
	}
	t.Fatal("no cancel mutation names the started session")
	return ""
}

// checkExactCancel checks that the last mutation cancelled exactly session
// sid with its token, that the device ended it so, and that the app under
// test is in front again.
func checkExactCancel(t *testing.T, dev *sim.Device, c *AgentClient, sid string, tok OwnerToken) {
	t.Helper()
	ms := agentMutations(dev, "")
	last := ms[len(ms)-1]
	if last[protocol.ParamType] != protocol.AgentCancel || last["sessionId"] != sid || last["ownerToken"] != tok.Reveal() {
		t.Fatalf("last mutation %s %v", last[protocol.ParamType], last["sessionId"])
	}
	s, err := c.Status(context.Background(), AgentIdentity{SessionID: sid, OwnerToken: tok})
	if err != nil || s.State != "cancelled" || s.TerminalReason != "client_cancel" {
		t.Fatalf("device session %+v %v", s, err)
	}
	if foreground(dev) != loginPkg {
		t.Errorf("foreground after cleanup %q", foreground(dev))
	}
}

func TestAgentStartInterruptCancelsExactSession(t *testing.T) {
	t.Parallel()
	dev, c := newAgentFixture(t)
	dev.Phone.SetScreenshotFault(nil, time.Hour)
	tok := NewOwnerToken()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Ctrl-C once the device received the start.
	stop := dev.OnMutation(func(uri string) {
		if strings.Contains(uri, "type="+protocol.AgentStart) {
			time.AfterFunc(100*time.Millisecond, cancel)
		}
	})
	defer stop()
	_, err := c.Start(ctx, StartOptions{OwnerToken: tok, Budget: simBudget(), AckTimeout: 10 * time.Second})
	e := wantErr(t, err, fault.CodeInterrupted, fault.Interrupted)
	cl := e.Details["cleanup"].(agentCleanup)
	sid := startedSession(t, dev)
	if !cl.Attempted || !cl.Success || cl.SessionID != sid || e.Details["sessionId"] != sid {
		t.Fatalf("cleanup %+v", cl)
	}
	checkExactCancel(t, dev, c, sid, tok)
}

func TestAgentStartImmediatelyTerminal(t *testing.T) {
	t.Parallel()
	dev, c := newAgentFixture(t)
	// A system window covers the app: the screen has no controllable root
	// and the device gives up after its 5 s root wait.
	w, h := dev.Phone.ScreenSize()
	dev.Phone.ShowTransientWindow("com.android.systemui", ui.Rect{Right: w, Bottom: h / 4}, time.Hour)
	_, err := c.Start(context.Background(), StartOptions{OwnerToken: NewOwnerToken(), Budget: simBudget()})
	e := wantErr(t, err, fault.CodeSessionTerminal, fault.Failed)
	if e.Details["terminalReason"] != protocol.ErrPageRootUnavailable {
		t.Fatalf("details %v", e.Details)
	}
}

// A token whose session is still live is refused without a start.
func TestAgentStartLiveTokenConflict(t *testing.T) {
	t.Parallel()
	dev, c := newAgentFixture(t)
	tok := NewOwnerToken()
	testStart(t, c, tok)
	_, err := c.Start(context.Background(), StartOptions{OwnerToken: tok, Budget: simBudget()})
	wantErr(t, err, protocol.ErrSessionConflict, fault.Failed)
	if n := countMutations(dev, protocol.AgentStart); n != 1 {
		t.Fatalf("%d starts", n)
	}
}

func TestAgentActInterruptAndTimeoutCancelExactSession(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"interrupt", "timeout"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			dev, c := newAgentFixture(t)
			tok := NewOwnerToken()
			st := testStart(t, c, tok)
			dev.App.SetSettleDelay(time.Hour) // the action never settles
			id := st.Identity(tok)
			node, _ := ResolveSelector(st.Observation, Selector{ResourceID: loginPkg + ":id/sign_in_button"})
			ctx := context.Background()
			timeout := 10 * time.Second
			if mode == "interrupt" {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				time.AfterFunc(400*time.Millisecond, cancel)
			} else {
				timeout = 400 * time.Millisecond
			}
			ar, err := c.Act(ctx, ActRequest{Identity: id, StepID: "slow", ObservationID: st.Observation.ObservationID,
				Action: protocol.ActClick, Args: protocol.ActionArgs{NodeID: &node}, Timeout: timeout})
			code, exit := fault.CodeInterrupted, fault.Interrupted
			if mode == "timeout" {
				code, exit = fault.CodeAgentActionTimeout, fault.Timeout
			}
			e := wantErr(t, err, code, exit)
			cl := e.Details["cleanup"].(agentCleanup)
			if !cl.Attempted || !cl.Success || cl.State != "cancelled" || e.Details["stepId"] != "slow" {
				t.Fatalf("cleanup %+v details %v", cl, e.Details)
			}
			if ar == nil || ar.Receipt == nil || ar.Receipt.Status != receiptAccepted {
				t.Fatalf("receipt %+v", ar)
			}
			checkExactCancel(t, dev, c, id.SessionID, tok)
		})
	}
}

func TestAgentActPreValidation(t *testing.T) {
	t.Parallel()
	dev, c := newAgentFixture(t)
	id := AgentIdentity{SessionID: "agent-session-x", OwnerToken: NewOwnerToken()}
	n := "node-1"
	var d int64 = 50
	bad := []ActRequest{
		{Identity: id, StepID: "s", ObservationID: "o", Action: "tap", Args: protocol.ActionArgs{NodeID: &n}},
		{Identity: id, StepID: "s", ObservationID: "o", Action: protocol.ActClick},
		{Identity: id, StepID: "s", ObservationID: "o", Action: protocol.ActBack, Args: protocol.ActionArgs{NodeID: &n}},
		{Identity: id, StepID: "s", ObservationID: "o", Action: protocol.ActWait, Args: protocol.ActionArgs{DurationMs: &d}},
		{Identity: id, StepID: "s", ObservationID: "o", Action: protocol.ActClick, Args: protocol.ActionArgs{NodeID: &n, Text: strp("x")}},
	}
	for i, r := range bad {
		_, err := c.Act(context.Background(), r)
		wantErr(t, err, fault.CodeInvalidAction, fault.Invalid)
		_ = i
	}
	_, err := c.Act(context.Background(), ActRequest{Identity: id, StepID: "bad id!", ObservationID: "o", Action: protocol.ActBack})
	wantErr(t, err, fault.CodeInvalidID, fault.Invalid)
	if len(dev.Mutations()) != 0 {
		t.Fatal("an invalid act reached the device")
	}
}

func TestAgentObserveScreenshotError(t *testing.T) {
	t.Parallel()
	dev, c := newAgentFixture(t)
	dev.Phone.SetScreenshotFault(android.ErrScreenshotFault, 0)
	tok := NewOwnerToken()
	st := testStart(t, c, tok)
	ob, err := c.Observe(context.Background(), st.Identity(tok))
	if err != nil {
		t.Fatal(err)
	}
	if ob.Observation.ScreenshotError != protocol.ErrScreenCaptureFailed || ob.Observation.ScreenshotSHA256 != "" {
		t.Fatalf("observation %+v", ob.Observation.Summary())
	}
	_, err = c.SaveScreenshot(context.Background(), st.Identity(tok), ob.Observation, filepath.Join(t.TempDir(), "x.png"), false)
	wantErr(t, err, fault.CodeScreenshotUnavailable, fault.Failed)
}

func TestEvidencePathChecks(t *testing.T) {
	t.Parallel()
	ok := func(n string) bool { return n == "timeline.jsonl" }
	for _, p := range []string{
		"/storage/emulated/0/solopi/agent-sessions/other/timeline.jsonl",
		"/storage/emulated/0/solopi/agent-sessions/s1/../s2/timeline.jsonl",
		"relative/agent-sessions/s1/timeline.jsonl",
		"/storage/emulated/0/solopi/agent-sessions/s1/evil.sh",
	} {
		if err := checkEvidencePath(p, "s1", ok); err == nil {
			t.Errorf("%s accepted", p)
		}
	}
	if err := checkEvidencePath("/storage/emulated/0/solopi/agent-sessions/s1/timeline.jsonl", "s1", ok); err != nil {
		t.Error(err)
	}
}

func TestCheckTimeline(t *testing.T) {
	t.Parallel()
	mk := func(seqs []int64, types []string) []AgentEvent {
		var out []AgentEvent
		for i, s := range seqs {
			out = append(out, AgentEvent{Sequence: s, Type: types[i], SessionID: "s"})
		}
		return out
	}
	full := []string{eventSessionStarted, eventObservationCreated, eventSessionTerminal, eventLeaseReleased}
	c := checkTimeline(mk([]int64{1, 2, 3, 4}, full), "s")
	if !c.Complete || !c.SequenceContiguous || c.LastSequence != 4 {
		t.Fatalf("%+v", c)
	}
	c = checkTimeline(mk([]int64{1, 2, 5, 6}, full), "s")
	if c.Complete || c.SequenceContiguous || len(c.Gaps) != 1 || c.Gaps[0] != (sequenceGap{After: 2, Next: 5, Missing: 2}) {
		t.Fatalf("%+v", c)
	}
	c = checkTimeline(mk([]int64{1, 2, 3, 4}, []string{eventSessionStarted, eventSessionTerminal, eventObservationCreated, eventLeaseReleased}), "s")
	if c.Complete || c.ReleaseFollows {
		t.Fatalf("release must follow terminal: %+v", c)
	}
	c = checkTimeline(mk([]int64{1, 2, 3, 4}, full), "other")
	if c.Complete || c.ForeignEvents != 4 {
		t.Fatalf("%+v", c)
	}
	evs, err := parseTimelineJSONL(strings.NewReader("{\"sequence\":1,\"type\":\"session_started\"}\n{\"sequence\":2,\"type\":\"x\"}"))
	if err != nil || len(evs) != 2 {
		t.Fatalf("%v %d", err, len(evs))
	}
	if _, err := parseTimelineJSONL(strings.NewReader("{\"sequence\":1,\"type\":\"a\"}\n\nnot json\n")); err == nil {
		t.Fatal("bad jsonl accepted")
	}
}

package agentloop

import (
	"context"
	"encoding/json"
	"errors"
	"image"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/clock"
)

// goldenFrame is the coordinate golden vectors' frame (package coord).
var goldenFrame = coord.Frame{ImageWidth: 590, ImageHeight: 1280, DisplayWidth: 1216, DisplayHeight: 2640}

func TestSanitizeDropsAndroidSemantics(t *testing.T) {
	t.Parallel()
	in := map[string]any{
		"command_success": true,
		"package":         "com.tencent.mm",
		"current_app":     "WeChat",
		"evidence": map[string]any{
			"activity":  ".Main",
			"ui_tree":   map[string]any{"nodes": []any{1}},
			"window":    "StatusBar",
			"installed": []any{map[string]any{"packageName": "x", "kept": "y"}},
			"note":      "the counter shows 3",
		},
	}
	out := sanitize(in).(map[string]any)
	b, _ := json.Marshal(out)
	for _, bad := range []string{"com.tencent.mm", "WeChat", ".Main", "StatusBar", "packageName", "ui_tree"} {
		if strings.Contains(string(b), bad) {
			t.Errorf("sanitized output still has %q: %s", bad, b)
		}
	}
	if !strings.Contains(string(b), "the counter shows 3") || !strings.Contains(string(b), `"kept":"y"`) {
		t.Errorf("sanitize dropped plain evidence: %s", b)
	}
}

func TestPlanRequestMemory(t *testing.T) {
	t.Parallel()
	m := memory{goal: "increase the counter to 3"}
	tap := action.Action{Name: action.Tap, Element: &action.Point{700, 520}, ScreenDescription: "counter 0", Reason: "tap +1"}
	m.addTurn(1, tap, map[string]any{"command_dispatched": true, "package": "com.example.counter", "observable_effect": "changed"})
	m.addTurn(2, action.Action{Name: action.Swipe, Start: &action.Point{500, 700}, End: &action.Point{500, 300}, Reason: "swipe up"}, map[string]any{"command_dispatched": true})
	m.notes = append(m.notes, "the +1 button is at the bottom right")
	c := coord.Contract{Space: coord.SpaceRelative, Frame: goldenFrame}
	req := m.planRequest(time.Now(), 3, c, &chat.Image{Data: []byte("PNG"), Format: chat.ImagePNG}, 0, nil, "")
	images := 0
	var all strings.Builder
	for _, msg := range req.Messages {
		if msg.Image != nil {
			images++
		}
		all.WriteString(msg.Text)
	}
	text := all.String()
	if images != 1 || req.Messages[len(req.Messages)-1].Image == nil {
		t.Fatalf("%d images; the only image must be on the current turn", images)
	}
	for _, bad := range []string{"700", "520", "[500,700]", "com.example.counter", "image_width", "display_width"} {
		if strings.Contains(text, bad) {
			t.Errorf("request text contains %q", bad)
		}
	}
	for _, want := range []string{"counter 0", "tap +1", "action: Swipe", "coordinates omitted", "the +1 button is at the bottom right", `"space":"relative_0_999"`} {
		if !strings.Contains(text, want) {
			t.Errorf("request text lacks %q", want)
		}
	}
	if strings.Count(text, "increase the counter to 3") != 1 {
		t.Error("the goal must appear exactly once")
	}
	// Roles alternate after the system prompt.
	for i := 2; i < len(req.Messages); i++ {
		if req.Messages[i].Role == req.Messages[i-1].Role {
			t.Errorf("messages %d and %d share role %s", i-1, i, req.Messages[i].Role)
		}
	}
}

func TestPlanRequestTrimsOldestTurnsOnlyOverBudget(t *testing.T) {
	t.Parallel()
	m := memory{goal: "g"}
	for i := 1; i <= 40; i++ {
		m.addTurn(i, action.Action{Name: action.Back, Reason: "turn-" + strings.Repeat("x", 200) + "-" + string(rune('A'+i%26))}, map[string]any{"i": i})
	}
	c := coord.Contract{Space: coord.SpaceRelative, Frame: goldenFrame}
	full := m.planRequest(time.Now(), 41, c, &chat.Image{Data: []byte("PNG"), Format: chat.ImagePNG}, 0, nil, "")
	budget := full.EstimatedTokens() / 2
	trimmed := m.planRequest(time.Now(), 41, c, &chat.Image{Data: []byte("PNG"), Format: chat.ImagePNG}, budget, nil, "")
	if trimmed.EstimatedTokens() > budget {
		t.Fatalf("trimmed request %d tokens > budget %d", trimmed.EstimatedTokens(), budget)
	}
	text := func(r chat.Request) string {
		var b strings.Builder
		for _, m := range r.Messages {
			b.WriteString(m.Text)
		}
		return b.String()
	}
	if !strings.Contains(text(trimmed), `"i":40`) || strings.Contains(text(trimmed), `"i":1,`) {
		t.Error("trimming must drop the oldest turns and keep the newest")
	}
	if !strings.Contains(text(full), `"i":1,`) {
		t.Error("without a budget no turn is dropped")
	}
	if !strings.Contains(text(trimmed), "Task: g") {
		t.Error("the goal is never trimmed")
	}
}

func TestConsecutiveRejectionsCollapse(t *testing.T) {
	t.Parallel()
	m := memory{goal: "g"}
	a := action.Action{Name: action.Tap, Element: &action.Point{1, 2}}
	m.addRejection(1, a, "negative_boundary", "no")
	m.addRejection(2, a, "risk_review_blocked", "no")
	m.addRejection(3, action.Action{Name: action.Swipe}, "no_node_at_point", "no")
	if len(m.turns) != 1 {
		t.Fatalf("%d turns, want one summary", len(m.turns))
	}
	var s map[string]any
	if err := json.Unmarshal([]byte(m.turns[0].Result), &s); err != nil {
		t.Fatal(err)
	}
	if s["consecutive_rejections"] != float64(3) || s["command_dispatched"] != false || s["do_not_repeat"] != true || s["required_strategy_change"] != true {
		t.Errorf("summary %v", s)
	}
	m.addTurn(4, action.Action{Name: action.Back}, map[string]any{})
	m.addRejection(5, a, "x", "y")
	if len(m.turns) != 3 {
		t.Errorf("a rejection after an executed action starts a new summary: %d turns", len(m.turns))
	}
}

// scriptModel answers plans from a list (and reviews with ALLOW/true),
// without any HTTP: for runtime-only tests and the benchmark.
type scriptModel struct {
	plans   []string
	n       int
	review  string
	risk    string
	calls   []chat.Request
	onPlan  func(n int)
	latency time.Duration
}

func (m *scriptModel) Chat(ctx context.Context, req chat.Request) (*chat.Response, error) {
	m.calls = append(m.calls, req)
	sys := req.Messages[0].Text
	switch {
	case strings.HasPrefix(sys, HeaderCompletion):
		r := m.review
		if r == "" {
			r = `finish(success=True, message="ok")`
		}
		return &chat.Response{Content: r}, nil
	case strings.HasPrefix(sys, headerRisk):
		r := m.risk
		if r == "" {
			r = `finish(success=True, message="ALLOW: fine")`
		}
		return &chat.Response{Content: r}, nil
	}
	if m.onPlan != nil {
		m.onPlan(m.n)
	}
	i := m.n
	if i >= len(m.plans) {
		i = len(m.plans) - 1
	}
	m.n++
	return &chat.Response{Content: m.plans[i], Usage: chat.Usage{PromptTokens: 10, CompletionTokens: 5}}, nil
}

func runScript(t *testing.T, goal string, m *scriptModel, dev Device, mutate func(*Config)) (*Result, *phoneAgent) {
	t.Helper()
	cfg := Config{Space: coord.SpaceRelative, RecheckDelay: time.Millisecond}
	if mutate != nil {
		mutate(&cfg)
	}
	a, err := New(cfg, dev, m)
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(context.Background(), Task{Goal: goal, MaxSteps: 8, MaxDuration: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return res, a
}

// +1 is at (760,1205) on 1080×2340: 0..999 → (703,515).
const tapPlus = `do(action="Tap", element=[703,515], reason="tap +1")`

func TestNegativeBoundaryBlocksZeroTouch(t *testing.T) {
	t.Parallel()
	dev := &counterDevice{}
	m := &scriptModel{plans: []string{`do(action="Tap", element=[703,515], reason="send the message now")`, `finish(success=False, message="cannot without sending")`}}
	res, a := runScript(t, "write the reply but do not send it", m, dev, nil)
	if _, _, cmds := dev.state(); len(cmds) != 0 {
		t.Fatalf("a forbidden action touched the device: %+v", cmds)
	}
	if res.Outcome != outcomeNotCompleted {
		t.Fatalf("outcome %s", res.Outcome)
	}
	var blocked bool
	for _, e := range eventsOf(a.State().Events(), EvRiskReview) {
		if e.Payload["verdict"] == riskBlock && e.Payload["deterministic"] == true {
			blocked = true
		}
	}
	if !blocked {
		t.Fatal("no deterministic block event")
	}
	// The second plan saw the rejection summary.
	last := m.calls[len(m.calls)-1]
	var text string
	for _, msg := range last.Messages {
		text += msg.Text
	}
	if !strings.Contains(text, "negative_boundary") || !strings.Contains(text, `"do_not_repeat":true`) {
		t.Error("the planner was not told about the rejection")
	}
}

func TestRiskConfirmWithoutHumanIsBlocked(t *testing.T) {
	t.Parallel()
	dev := &counterDevice{}
	m := &scriptModel{plans: []string{tapPlus}, risk: `finish(success=True, message="CONFIRM: this pays")`}
	res, _ := runScript(t, "pay the invoice", m, dev, nil)
	if res.Outcome != OutcomeBlocked || res.Exit != 2 {
		t.Fatalf("outcome %s", res.Outcome)
	}
	if _, _, cmds := dev.state(); len(cmds) != 0 {
		t.Fatal("an unconfirmed action was dispatched")
	}
}

type fakeConfirmer struct {
	approve  bool
	asked    []string
	takeover bool
}

func (f *fakeConfirmer) Confirm(ctx context.Context, q string) (bool, error) {
	f.asked = append(f.asked, q)
	return f.approve, nil
}
func (f *fakeConfirmer) TakeOver(ctx context.Context, m string) (bool, error) {
	f.asked = append(f.asked, m)
	return f.takeover, nil
}

func TestRiskConfirmWithHuman(t *testing.T) {
	t.Parallel()
	dev := &counterDevice{}
	c := &fakeConfirmer{approve: true}
	m := &scriptModel{plans: []string{tapPlus, `finish(success=True, message="paid")`}, risk: `finish(success=True, message="CONFIRM: this pays")`}
	res, _ := runScript(t, "pay the invoice", m, dev, func(cfg *Config) { cfg.Confirmer = c })
	if res.Outcome != OutcomeCompleted || len(c.asked) != 1 {
		t.Fatalf("outcome %s asked %v", res.Outcome, c.asked)
	}
	if _, _, cmds := dev.state(); len(cmds) != 1 {
		t.Fatal("the approved action was not dispatched")
	}
	// Isolated reviews never see the planner's reason or claims.
	reviews := 0
	for _, call := range m.calls {
		sys := call.Messages[0].Text
		if !strings.HasPrefix(sys, headerRisk) && !strings.HasPrefix(sys, HeaderCompletion) {
			continue
		}
		reviews++
		for _, msg := range call.Messages[1:] {
			if strings.Contains(msg.Text, "tap +1") || strings.Contains(msg.Text, "paid") {
				t.Errorf("a review request carries the planner's words: %s", msg.Text)
			}
		}
		if len(call.Messages) != 2 || call.Messages[1].Image == nil {
			t.Errorf("a review is not isolated: %d messages", len(call.Messages))
		}
	}
	if reviews != 2 {
		t.Errorf("%d reviews, want a risk review and a completion review", reviews)
	}
}

func TestTakeOverNonInteractiveIsBlocked(t *testing.T) {
	t.Parallel()
	dev := &counterDevice{}
	m := &scriptModel{plans: []string{`do(action="Take_over", message="please log in")`}}
	res, _ := runScript(t, "open my account", m, dev, nil)
	if res.Outcome != OutcomeBlocked || !strings.Contains(res.Message, "please log in") {
		t.Fatalf("outcome %s %s", res.Outcome, res.Message)
	}
}

func TestUnsupportedActionIsAProtocolNote(t *testing.T) {
	t.Parallel()
	dev := &counterDevice{noDoubleTap: true}
	m := &scriptModel{plans: []string{`do(action="Double Tap", element=[703,515])`, tapPlus, `finish(success=True, message="1")`}}
	res, _ := runScript(t, "increase the counter to 1", m, dev, nil)
	if res.Outcome != OutcomeCompleted {
		t.Fatalf("outcome %s", res.Outcome)
	}
	_, _, cmds := dev.state()
	if len(cmds) != 1 || cmds[0].Action != action.Tap {
		t.Fatalf("commands %+v", cmds)
	}
	if res.Counters.SoftReplans[softUnmappable] != 1 || res.Counters.HardTotal != 0 {
		t.Errorf("counters %+v", res.Counters)
	}
}

func TestProtocolFailuresTerminateWithExit4(t *testing.T) {
	t.Parallel()
	dev := &counterDevice{}
	m := &scriptModel{plans: []string{"```\ndo(action=\"Back\")\n```"}}
	res, _ := runScript(t, "g", m, dev, nil)
	if res.Outcome != OutcomeProtocolError || res.Exit != 4 {
		t.Fatalf("outcome %s exit %d", res.Outcome, res.Exit)
	}
	if _, _, cmds := dev.state(); len(cmds) != 0 {
		t.Fatal("invalid output touched the device")
	}
	// Each step asked twice (one same-step retry), three steps.
	if len(m.calls) != 6 || res.Counters.ProtocolErrors != 3 {
		t.Errorf("%d calls, counters %+v", len(m.calls), res.Counters)
	}
}

func TestRepeatedNoEffectAsksHuman(t *testing.T) {
	t.Parallel()
	dev := &counterDevice{}
	// Tapping the status label does nothing visible.
	m := &scriptModel{plans: []string{`do(action="Tap", element=[500,405], reason="tap the label")`}}
	res, _ := runScript(t, "g", m, dev, nil)
	if res.Outcome != outcomeRepeatedAction || res.Exit != 2 {
		t.Fatalf("outcome %s", res.Outcome)
	}
	if _, _, cmds := dev.state(); len(cmds) != 3 {
		t.Fatalf("%d dispatches, want 3 before stopping", len(cmds))
	}
}

func TestMaxStepsAndWaitHome(t *testing.T) {
	t.Parallel()
	dev := &counterDevice{}
	m := &scriptModel{plans: []string{`do(action="Home")`, `do(action="Wait", duration="0.1 seconds")`}}
	res, _ := runScript(t, "g", m, dev, nil)
	if res.Outcome != outcomeMaxSteps || res.Exit != 2 || res.Steps != 8 {
		t.Fatalf("outcome %s steps %d", res.Outcome, res.Steps)
	}
	if res.Counters.Warnings != 0 {
		t.Errorf("Wait/Home without change must not warn: %+v", res.Counters)
	}
}

// TestStepAPI: single steps share the task; a different goal is refused;
// a second task cannot start while one runs.
func TestStepAPI(t *testing.T) {
	t.Parallel()
	dev := &counterDevice{}
	m := &scriptModel{plans: []string{tapPlus, `finish(success=True, message="1")`}}
	a, _ := New(Config{Space: coord.SpaceRelative, RecheckDelay: time.Millisecond}, dev, m)
	ctx := context.Background()
	task := Task{Goal: "increase the counter to 1", MaxSteps: 5}
	sr, err := a.Step(ctx, task)
	if err != nil || sr.Terminal || sr.Phase != phaseObserving || sr.Action == nil || sr.Action.Name != action.Tap {
		t.Fatalf("step 1: %+v %v", sr, err)
	}
	if _, err := a.Step(ctx, Task{Goal: "something else"}); !errors.Is(err, errGoalChanged) {
		t.Fatalf("goal change: %v", err)
	}
	sr, err = a.Step(ctx, Task{})
	if err != nil || !sr.Terminal || sr.Result.Outcome != OutcomeCompleted {
		t.Fatalf("step 2: %+v %v", sr, err)
	}
	if _, err := a.Step(ctx, task); !errors.Is(err, errTaskFinished) {
		t.Fatalf("after the end: %v", err)
	}
	if err := a.Reset(); err != nil {
		t.Fatal(err)
	}
	// Concurrent use is refused.
	a.busy.Lock()
	if _, err := a.Run(ctx, task); !errors.Is(err, errBusy) {
		t.Fatalf("concurrent run: %v", err)
	}
	a.busy.Unlock()
}

func TestCancellationAndDeadline(t *testing.T) {
	t.Parallel()
	dev := &counterDevice{}
	m := &scriptModel{plans: []string{`do(action="Wait", duration="0.1 seconds")`}}
	a, _ := New(Config{Space: coord.SpaceRelative}, dev, m)
	ctx, cancel := context.WithCancel(context.Background())
	m.onPlan = func(n int) {
		if n == 1 {
			cancel()
		}
	}
	res, err := a.Run(ctx, Task{Goal: "g", MaxSteps: 50})
	if err != nil || res.Outcome != OutcomeCancelled || res.Exit != 130 {
		t.Fatalf("cancel: %+v %v", res, err)
	}
	b, _ := New(Config{Space: coord.SpaceRelative}, &counterDevice{}, &scriptModel{plans: []string{`do(action="Wait", duration="0.1 seconds")`}})
	// The test device's waits take no time, so a step takes well under a
	// millisecond: the step budget must outlast the deadline.
	res, err = b.Run(context.Background(), Task{Goal: "g", MaxSteps: 1 << 20, MaxDuration: 300 * time.Millisecond})
	if err != nil || res.Outcome != OutcomeMaxDuration || res.Exit != 124 {
		t.Fatalf("deadline: %+v %v", res, err)
	}
}

func TestRecoveryOutcomes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		class, action string
		count         int
		retried       bool
		want          recovery
	}{
		{failDevice, action.Wait, 1, false, recoverRetrySafe},
		{failDevice, action.Home, 1, false, recoverRetrySafe},
		{failDevice, action.Home, 1, true, recoverReplan},
		{failDevice, action.Tap, 1, false, recoverReplan},
		{failDevice, action.Back, 1, false, recoverReplan},
		{failDevice, action.Type, 1, false, recoverReplan},
		{failDevice, action.Swipe, 1, false, recoverReplan},
		{failObservation, "", 1, false, recoverReobserve},
		{failProtocol, "", 2, false, recoverReplan},
		{failProtocol, "", 3, false, recoverTerminate},
	}
	for _, tt := range tests {
		if got := decideRecovery(tt.class, tt.action, tt.count, 3, tt.retried); got != tt.want {
			t.Errorf("%s/%s/%d: %s, want %s", tt.class, tt.action, tt.count, got, tt.want)
		}
	}
}

func TestClassifyTask(t *testing.T) {
	t.Parallel()
	r := classifyTask("回复张三的消息，但不要发送")
	if len(r.Forbidden) != 1 || r.Forbidden[0] != "send" {
		t.Errorf("forbidden %v", r.Forbidden)
	}
	r = classifyTask("Buy the cheapest charger and don't pay with the saved card")
	if !r.High() || r.Forbidden[0] != "pay" {
		t.Errorf("%+v", r)
	}
	if r := classifyTask("increase the counter to 3"); r.High() {
		t.Errorf("a harmless task classified %+v", r)
	}
	if r := classifyTask("open the sender list"); len(r.Classes) != 0 {
		t.Errorf("word boundaries ignored: %+v", r)
	}
}

// TestVerifyCropsBars: a clock change in the status bar is not an effect.
func TestVerifyCropsBars(t *testing.T) {
	t.Parallel()
	a, _ := ScreenFromImage(fakemodel.CounterScreen("0"), time.Now())
	img := fakemodel.CounterScreen("0")
	c := &fakemodel.Canvas{Img: img}
	c.Box("label", rect(0, 0, 400, 60), "12:01")
	b, _ := ScreenFromImage(img, time.Now())
	if v := verifyEffect(action.Tap, a, b); v.ObservableEffect != "unchanged" || v.Warning == "" {
		t.Errorf("status bar change counted: %+v", v)
	}
	one, _ := ScreenFromImage(fakemodel.CounterScreen("1"), time.Now())
	if v := verifyEffect(action.Tap, a, one); v.ObservableEffect != "changed" || v.Status != VerifyPassed {
		t.Errorf("counter change missed: %+v", v)
	}
	black, _ := ScreenFromImage(newBlank(1080, 2340), time.Now())
	if !black.Unobservable() || a.Unobservable() {
		t.Error("black frame detection")
	}
}

// TestFreshnessLocalAnimationRecheck: a target region that settles on a
// re-check is dispatched on the settled frame; thresholds are unchanged.
func TestFreshnessLocalAnimationRecheck(t *testing.T) {
	t.Parallel()
	planned, _ := ScreenFromImage(fakemodel.CounterScreen("0"), time.Now())
	dev := &counterDevice{}
	spinner := rect(700, 1150, 820, 1270) // over the +1 button
	dev.beforeObserve = func(d *counterDevice, n int) {
		d.mu.Lock()
		if n == 1 { // animating on the first look only
			d.blink = spinner
		} else {
			d.blink = image.Rectangle{}
		}
		d.mu.Unlock()
	}
	targets := [][2]int{{760, 1205}}
	fr, err := checkFreshness(context.Background(), clock.System, dev, planned, targets, 2, time.Millisecond)
	if err != nil || !fr.Fresh() || fr.Rechecks != 1 {
		t.Fatalf("%+v %v", fr, err)
	}
	dev.beforeObserve = func(d *counterDevice, n int) { d.mu.Lock(); d.blink = spinner; d.mu.Unlock() }
	fr, _ = checkFreshness(context.Background(), clock.System, dev, planned, targets, 2, time.Millisecond)
	if fr.Fresh() || fr.Verdict != staleTarget || fr.Rechecks != 2 {
		t.Fatalf("persistent change: %+v", fr)
	}
	// A digit changing next to the target is below the region thresholds:
	// pixels compatible with the plan keep the action fresh.
	dev.beforeObserve = func(d *counterDevice, n int) { d.mu.Lock(); d.blink = image.Rectangle{}; d.value = 5; d.mu.Unlock() }
	fr, _ = checkFreshness(context.Background(), clock.System, dev, planned, [][2]int{{540, 760}}, 2, time.Millisecond)
	if !fr.Fresh() {
		t.Fatalf("small change: %+v", fr)
	}
}

func rect(x0, y0, x1, y1 int) image.Rectangle { return image.Rect(x0, y0, x1, y1) }

func newBlank(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 0xff
	}
	return img
}

// TestUncertainHighConsequenceRepeatNeedsConfirmation: a high-consequence
// tap that changed nothing is not repeated on the reviewer's ALLOW alone.
func TestUncertainHighConsequenceRepeatNeedsConfirmation(t *testing.T) {
	t.Parallel()
	dev := &counterDevice{}
	c := &fakeConfirmer{approve: false}
	// The status label does nothing visible when tapped.
	tapLabel := `do(action="Tap", element=[500,405], reason="tap pay")`
	m := &scriptModel{plans: []string{tapLabel, tapLabel, `finish(success=False, message="stop")`}}
	res, a := runScript(t, "pay the invoice", m, dev, func(cfg *Config) { cfg.Confirmer = c })
	if res.Outcome != outcomeNotCompleted {
		t.Fatalf("outcome %s", res.Outcome)
	}
	if _, _, cmds := dev.state(); len(cmds) != 1 {
		t.Fatalf("%d dispatches: the repeat was sent without confirmation", len(cmds))
	}
	if len(c.asked) != 1 || !strings.Contains(c.asked[0], "no visible effect") {
		t.Fatalf("asked %v", c.asked)
	}
	var confirm int
	for _, e := range eventsOf(a.State().Events(), EvRiskReview) {
		if e.Payload["verdict"] == riskConfirm {
			confirm++
		}
	}
	if confirm != 1 {
		t.Errorf("%d CONFIRM verdicts", confirm)
	}
}

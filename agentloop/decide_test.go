package agentloop

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
)

func counterScreen(t *testing.T) *Screen {
	t.Helper()
	s, err := (&counterDevice{}).Observe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestReviewCompletionVerdicts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		answer, verdict, reason string
	}{
		{`finish(success=True, message="the counter shows 1")`, CompletionConfirmed, "the counter shows 1"},
		{`finish(success=False, message="the counter shows 0")`, CompletionRejected, "the counter shows 0"},
		{`finish(success=False, message="UNCERTAIN: the value is cut off")`, CompletionUncertain, "the value is cut off"},
		{`finish(success=False, message="uncertain - too dark")`, CompletionUncertain, "- too dark"},
		{`I think it is done`, CompletionUncertain, "the reviewer gave no usable verdict"},
	} {
		m := &scriptModel{review: c.answer}
		cfg := Config{Redact: func(s string) string { return strings.ReplaceAll(s, "counter", "[redacted]") }}
		rev, err := ReviewCompletion(context.Background(), m, cfg, "the counter shows 1", counterScreen(t))
		if err != nil {
			t.Fatal(err)
		}
		want := strings.ReplaceAll(c.reason, "counter", "[redacted]")
		if rev.Verdict != c.verdict || rev.Reason != want {
			t.Errorf("%s: %s %q, want %s %q", c.answer, rev.Verdict, rev.Reason, c.verdict, want)
		}
		if rev.Metrics.ByPurpose["completion_review"] != 1 || len(m.calls) != 1 || m.calls[0].Messages[1].Image == nil {
			t.Errorf("%s: one review request with the screenshot expected, metrics %+v", c.answer, rev.Metrics)
		}
		for _, e := range rev.Events {
			if strings.Contains(mustJSON(e), "counter") {
				t.Errorf("an event escaped redaction: %+v", e)
			}
		}
	}
}

// A review that cannot tell blocks the planner, while agent-run keeps
// treating it as a rejected claim and replans.
func TestUncertainReview(t *testing.T) {
	t.Parallel()
	uncertain := `finish(success=False, message="UNCERTAIN: the counter is hidden")`
	m := &scriptModel{plans: []string{`finish(success=True, message="done")`}, review: uncertain}
	p, err := NewPlanner(m, &counterDevice{}, Config{Space: coord.SpaceRelative}, Task{Goal: "increase the counter to 1", MaxSteps: 5}, nil)
	if err != nil {
		t.Fatal(err)
	}
	prop, err := p.Propose(context.Background(), counterScreen(t), nil, func(Command) (DeviceAction, error) {
		t.Fatal("nothing to map")
		return DeviceAction{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if prop.Kind != ProposeBlocked || prop.Result.Outcome != OutcomeBlocked || !strings.Contains(prop.Reason, "cannot tell") {
		t.Fatalf("proposal %+v", prop)
	}

	res, a := runScript(t, "increase the counter to 1", &scriptModel{plans: []string{`finish(success=True, message="done")`}, review: uncertain}, &counterDevice{}, nil)
	if res.Outcome != outcomeNotCompleted {
		t.Fatalf("agent-run outcome %s, want not_completed after replans", res.Outcome)
	}
	reviews := 0
	for _, e := range a.State().Events() {
		if e.Type == EvTaskReview && e.Payload["status"] == verifyInconclusive {
			reviews++
		}
	}
	if reviews != 3 {
		t.Errorf("%d inconclusive reviews, want 3", reviews)
	}
}

// codeNotAllowed is the refusal an Agent-session mapper gives an action
// the step does not allow (agentdevice.CodeNotAllowed).
const codeNotAllowed = "action_not_allowed"

// The planner keeps its memory and budget across proposals: a refused
// mapping is a zero-touch rejection the model hears about on the same
// screen, an executed action is history, every plan spends a step.
func TestPlannerProposals(t *testing.T) {
	t.Parallel()
	m := &scriptModel{plans: []string{tapPlus}}
	p, err := NewPlanner(m, &counterDevice{}, Config{Space: coord.SpaceRelative}, Task{Goal: "increase the counter to 3", MaxSteps: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	refuse := true
	mapper := func(cmd Command) (DeviceAction, error) {
		if cmd.Action != action.Tap || cmd.Point == nil {
			t.Fatalf("command %+v", cmd)
		}
		if refuse {
			refuse = false
			return DeviceAction{}, &NotMappableError{Code: codeNotAllowed, Note: "this step only allows Wait"}
		}
		return DeviceAction{Action: "click"}, nil
	}
	screen := counterScreen(t)
	prop, err := p.Propose(context.Background(), screen, nil, mapper)
	if err != nil || prop.Kind != ProposeAct || prop.DeviceAction.Action != "click" || prop.Reason != "tap +1" {
		t.Fatalf("first proposal %+v, %v", prop, err)
	}
	if len(m.calls) != 2 || !strings.Contains(mustJSON(m.calls[1].Messages), codeNotAllowed) {
		t.Fatalf("the refusal did not reach the model: %d calls", len(m.calls))
	}
	var answers int
	for _, e := range prop.Events {
		if e.Type == EvModelResponse {
			answers++
		}
	}
	if answers != 2 {
		t.Errorf("the proposal carries %d model answers, want 2", answers)
	}
	prop, err = p.Propose(context.Background(), screen, &Feedback{Sent: true, Succeeded: true}, mapper)
	if err != nil || prop.Kind != ProposeAct {
		t.Fatalf("second proposal %+v, %v", prop, err)
	}
	var history strings.Builder
	for _, msg := range m.calls[2].Messages {
		history.WriteString(msg.Text)
	}
	if !strings.Contains(history.String(), `"command_dispatched":true`) {
		t.Error("the executed action is not in the planner's memory")
	}
	prop, err = p.Propose(context.Background(), screen, &Feedback{Sent: true, Succeeded: true}, mapper)
	if err != nil || prop.Kind != ProposeBlocked || prop.Result.Outcome != outcomeMaxSteps {
		t.Fatalf("third proposal %+v, %v", prop, err)
	}
	if _, err := p.Propose(context.Background(), screen, nil, mapper); !errors.Is(err, errTaskFinished) {
		t.Errorf("a finished task planned again: %v", err)
	}
	if tr := p.Trajectory(chat.Info{Model: "script"}); tr.Outcome != outcomeMaxSteps || tr.Profile == nil || tr.Counters.Dispatched != 2 {
		t.Errorf("trajectory %s profile %v dispatched %d", tr.Outcome, tr.Profile, tr.Counters.Dispatched)
	}
}

// stallModel answers only when its context ends.
type stallModel struct{}

func (stallModel) Chat(ctx context.Context, _ chat.Request) (*chat.Response, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// The task's max duration bounds the model's time.
func TestPlannerMaxDuration(t *testing.T) {
	t.Parallel()
	p, err := NewPlanner(stallModel{}, &counterDevice{}, Config{Space: coord.SpaceRelative}, Task{Goal: "increase the counter to 3", MaxSteps: 3, MaxDuration: 20 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	prop, err := p.Propose(context.Background(), counterScreen(t), nil, func(Command) (DeviceAction, error) { return DeviceAction{Action: "click"}, nil })
	if err != nil || prop.Kind != ProposeBlocked || prop.Result.Outcome != OutcomeMaxDuration {
		t.Fatalf("proposal %+v, %v", prop, err)
	}
}

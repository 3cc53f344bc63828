package agentloop

import (
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
)

// TestStepTimelineOfARun: a completed run's steps each have the action
// the model proposed, passed, in order, their durations filling the run
// (one step ends where the next begins) and no step before the start.
func TestStepTimelineOfARun(t *testing.T) {
	t.Parallel()
	res, a := runScript(t, "increase the counter to 2", &scriptModel{plans: []string{tapPlus, tapPlus, `finish(success=True, message="2")`}}, &counterDevice{}, nil)
	if res.Outcome != OutcomeCompleted {
		t.Fatalf("outcome %s: %s", res.Outcome, res.ErrorMessage)
	}
	evs := a.State().Events()
	steps := StepTimeline(evs, res.StartedAt, nil)
	if len(steps) != 3 {
		t.Fatalf("steps %+v", steps)
	}
	for i, want := range []string{"Tap", "Tap", "finish"} {
		s := steps[i]
		if s.Step != i+1 || s.Status != stepPassed || !strings.EqualFold(s.Action, want) || s.Message != "" || s.Video != nil || s.OffsetMs < 0 || s.DurationMs < 0 {
			t.Errorf("step %d: %+v", i+1, s)
		}
		if i+1 < len(steps) && s.OffsetMs+s.DurationMs != steps[i+1].OffsetMs {
			t.Errorf("step %d ends at %d, step %d begins at %d", s.Step, s.OffsetMs+s.DurationMs, steps[i+1].Step, steps[i+1].OffsetMs)
		}
	}
	end := evs[len(evs)-1].Timestamp.Sub(res.StartedAt).Milliseconds()
	if last := steps[2]; last.OffsetMs+last.DurationMs != end {
		t.Errorf("the last step ends at %d, the run's last event at %d", last.OffsetMs+last.DurationMs, end)
	}
}

// TestStepTimelineFailedDispatch: a step whose action the device refused
// failed, with the execution's message and the device's error.
func TestStepTimelineFailedDispatch(t *testing.T) {
	t.Parallel()
	dev := &counterDevice{failDispatch: &DeviceError{Code: fault.CodeInputFailed, Message: "input tap failed"}}
	res, a := runScript(t, "increase the counter to 1", &scriptModel{plans: []string{tapPlus}}, dev, nil)
	if res.Outcome != OutcomeDeviceError {
		t.Fatalf("outcome %s", res.Outcome)
	}
	steps := StepTimeline(a.State().Events(), res.StartedAt, nil)
	if len(steps) == 0 {
		t.Fatal("no steps")
	}
	for _, s := range steps {
		if s.Status != stepFailed || !strings.Contains(s.Message, "input tap failed") || !strings.Contains(s.Message, ": ") {
			t.Errorf("step %+v", s)
		}
	}
}

// TestStepTimelineStatuses: each kind of failure makes its step failed
// with its first failure's message; a later one does not replace it;
// events of no step (the run's own) only extend the run; a step timed
// before the run's start begins at 0.
func TestStepTimelineStatuses(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	evs := []AgentEvent{
		{Type: evStart, Timestamp: at(0)},
		{Type: EvAction, Step: 1, Timestamp: at(-50), Payload: map[string]any{"action": map[string]any{"action": "Tap"}}},
		{Type: evExecution, Step: 1, Timestamp: at(20), Payload: map[string]any{"command_success": true}},
		{Type: EvVerification, Step: 1, Timestamp: at(40), Message: "no change", Payload: map[string]any{"status": VerifyFailed}},
		{Type: evError, Step: 1, Timestamp: at(60), Message: "later"},
		{Type: evError, Step: 2, Timestamp: at(100), Message: "model request failed", Payload: map[string]any{"error": "503"}},
		{Type: evProtocolReject, Step: 3, Timestamp: at(250), Message: "rejected"},
		{Type: EvVerification, Step: 4, Timestamp: at(300), Payload: map[string]any{"status": "passed"}},
		{Type: EvAction, Step: 4, Timestamp: at(310), Payload: map[string]any{"action": "not an action"}},
		{Type: EvPhaseChange, Timestamp: at(900)},
	}
	got := StepTimeline(evs, t0, nil)
	want := []StepTime{
		{Step: 1, Action: "Tap", Status: stepFailed, OffsetMs: 0, DurationMs: 100, Message: "no change"},
		{Step: 2, Status: stepFailed, OffsetMs: 100, DurationMs: 150, Message: "model request failed: 503"},
		{Step: 3, Status: stepFailed, OffsetMs: 250, DurationMs: 50, Message: "rejected"},
		{Step: 4, Status: stepPassed, OffsetMs: 300, DurationMs: 600},
	}
	if len(got) != len(want) {
		t.Fatalf("steps %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d: %+v, want %+v", i+1, got[i], want[i])
		}
	}
	if StepTimeline(nil, t0, nil) != nil {
		t.Error("steps of no events")
	}
}

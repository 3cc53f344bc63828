package agentloop

import (
	"github.com/solopi-dev/solopi/fault"
	"testing"
)

// tapReset taps Reset, which changes nothing while the counter is 0.
const tapReset = `do(action="Tap", element=[296,515], reason="tap Reset")`

// TestStreakResetOnlyByVerifiedAction: a protocol failure is not wiped
// out by the next clean parse, nor by an action whose effect could not be
// verified; only a dispatched action with a passed verification clears
// the failure streaks.
func TestStreakResetOnlyByVerifiedAction(t *testing.T) {
	t.Parallel()
	budget2 := func(c *Config) { c.HardBudget = 2 }
	// Two protocol failures around an unverified tap: the budget of 2 is
	// spent and the run ends.
	res, _ := runScript(t, "increase the counter to 1", &scriptModel{plans: []string{"garbage", "garbage", tapReset, "garbage", "garbage", tapPlus}}, &counterDevice{}, budget2)
	if res.Outcome != OutcomeProtocolError || res.Counters.HardFailures[failProtocol] != 2 {
		t.Fatalf("outcome %s counters %+v: want the second protocol failure to end the run", res.Outcome, res.Counters)
	}
	// The same with a verified tap in between: the streak starts over and
	// the run completes; the totals keep both failures.
	res, _ = runScript(t, "increase the counter to 1", &scriptModel{plans: []string{"garbage", "garbage", tapPlus, "garbage", "garbage",
		`finish(success=True, message="the counter shows 1")`}}, &counterDevice{}, budget2)
	if res.Outcome != OutcomeCompleted || res.Counters.HardFailures[failProtocol] != 2 || res.Counters.HardTotal != 2 {
		t.Fatalf("outcome %s counters %+v", res.Outcome, res.Counters)
	}
}

// TestExecutionEventFacts: every execution event carries the separate
// facts, for a verified action and for failed dispatches up to the one
// that ends the run.
func TestExecutionEventFacts(t *testing.T) {
	t.Parallel()
	res, a := runScript(t, "increase the counter to 1", &scriptModel{plans: []string{tapPlus, `finish(success=True, message="done")`}}, &counterDevice{}, nil)
	if res.Outcome != OutcomeCompleted {
		t.Fatalf("outcome %s", res.Outcome)
	}
	ex := eventsOf(a.State().Events(), evExecution)
	if len(ex) != 1 {
		t.Fatalf("%d execution events", len(ex))
	}
	want := map[string]any{"command_dispatched": true, "command_success": true, "observable_effect": "changed", "warning": nil,
		"recovery_needed": false, "root_error": nil, "termination_code": nil}
	for k, v := range want {
		if got, ok := ex[0].Payload[k]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	if ex[0].Payload["command"] == nil || ex[0].Payload["attempt"] != 1 {
		t.Errorf("payload %v", ex[0].Payload)
	}

	dev := &counterDevice{failDispatch: &DeviceError{Code: fault.CodeInputFailed, Message: "input tap failed"}}
	res, a = runScript(t, "increase the counter to 1", &scriptModel{plans: []string{tapPlus}}, dev, nil)
	if res.Outcome != OutcomeDeviceError {
		t.Fatalf("outcome %s", res.Outcome)
	}
	ex = eventsOf(a.State().Events(), evExecution)
	if len(ex) != 3 {
		t.Fatalf("%d execution events, want one per failed dispatch up to the budget", len(ex))
	}
	for i, e := range ex {
		p := e.Payload
		term := any(nil)
		if i == len(ex)-1 {
			term = OutcomeDeviceError
		}
		if p["command_dispatched"] != false || p["command_success"] != false || p["observable_effect"] != effectNone ||
			p["recovery_needed"] != true || p["root_error"] != fault.CodeInputFailed || p["termination_code"] != term {
			t.Errorf("execution %d: %v", i, p)
		}
	}
}

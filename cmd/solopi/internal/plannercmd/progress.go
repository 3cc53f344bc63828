package plannercmd

import (
	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/progress"
)

// agentProgress renders the pure-vision runtime's events: step i of the
// step budget, the runtime's phase, the last notable event, and the
// verification verdicts of the actions so far.
func agentProgress(line *progress.Line, maxSteps int) func(agentloop.AgentEvent) {
	if !line.Enabled() {
		return nil
	}
	return func(ev agentloop.AgentEvent) {
		line.Update(func(s *progress.State) {
			if ev.Step > 0 {
				s.Index, s.Total = ev.Step, maxSteps
			}
			if ev.Phase != "" {
				s.Phase = string(ev.Phase)
			}
			switch ev.Type {
			case agentloop.EvAction, agentloop.EvRiskReview, agentloop.EvConfirmation, agentloop.EvRecovery,
				agentloop.EvCalibration, agentloop.EvTaskReview, agentloop.EvFinish:
				s.Label = ev.Message
			case agentloop.EvVerification:
				s.Label = ev.Message
				switch ev.Payload["status"] {
				case agentloop.VerifyPassed:
					s.Passed++
				case agentloop.VerifyFailed:
					s.Failed++
				}
			}
		})
	}
}

// chainEvents calls every non-nil observer in order.
func chainEvents(fns ...func(agentloop.AgentEvent)) func(agentloop.AgentEvent) {
	var live []func(agentloop.AgentEvent)
	for _, f := range fns {
		if f != nil {
			live = append(live, f)
		}
	}
	if len(live) == 0 {
		return nil
	}
	return func(ev agentloop.AgentEvent) {
		for _, f := range live {
			f(ev)
		}
	}
}

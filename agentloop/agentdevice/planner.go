package agentdevice

import (
	"context"
	"time"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/solopi/agent"
	"github.com/solopi-dev/solopi/solopi/device"
)

// PlannerOptions are what a planner run (agent-run) asks of the Agent
// session it drives: its task's limits and the device waits.
type PlannerOptions struct {
	MaxSteps      int
	MaxDuration   time.Duration
	AckTimeout    time.Duration
	ActionTimeout time.Duration
	PollInterval  time.Duration
}

// PlannerBudget is the session budget of a planner run of o's limits.
// Every plan may act once; freshness and verification observe without
// spending steps. The model's latency must not idle the session out, so the
// idle timeout is the device's maximum, and the session outlives the task's
// own deadline by a minute so the host, not the device, ends it.
func PlannerBudget(o PlannerOptions) agent.AgentBudget {
	b := agent.DefaultAgentBudget()
	b.MaxSteps = int64(min(200, o.MaxSteps))
	b.MaxDurationMs = min(1800000, max(1000, o.MaxDuration.Milliseconds()+60000))
	b.IdleTimeoutMs = 300000
	// Repeating the same click is how a counter goes up; the host's own
	// guard stops repeats that change nothing on the screen.
	b.MaxRepeatedActions = 20
	b.MaxNoProgressSteps = 5
	return b
}

// StartPlanner starts the Agent session of a planner run on the session's
// device (the foreground it preserved is restored when the client closes).
// The returned close releases the client after the device is closed.
func StartPlanner(ctx context.Context, sess *device.Session, o PlannerOptions) (*Device, func(), error) {
	client := agent.NewAgentClient(sess.Device, agent.AgentOptions{Foreground: sess.Foreground, PollInterval: o.PollInterval})
	d, err := Start(ctx, client, Options{Budget: PlannerBudget(o), AckTimeout: o.AckTimeout,
		ActionTimeout: o.ActionTimeout, PollInterval: o.PollInterval, StepIDPrefix: "planner"})
	if err != nil {
		client.Close()
		return nil, nil, err
	}
	return d, client.Close, nil
}

// Release gives the device of a finished run back: an Agent session the run
// was interrupted or timed out in is cancelled (exactly the one it
// started), any other device is closed normally.
func Release(ctx context.Context, dev agentloop.Device, res *agentloop.Result) error {
	if sd, ok := dev.(*Device); ok && res != nil &&
		(res.Outcome == agentloop.OutcomeCancelled || res.Outcome == agentloop.OutcomeMaxDuration) {
		return sd.Cancel(ctx)
	}
	return dev.Close(ctx)
}

package agent

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
)

// ControlOptions configure Pause, Resume, End and Cancel.
type ControlOptions struct {
	// Timeout bounds the wait for the expected state (default 15 s).
	Timeout      time.Duration
	PollInterval time.Duration
}

// ControlResult is a session after a control mutation.
type ControlResult struct {
	Session *AgentSession
	// Changed is false when the session was already in the expected state
	// and nothing was sent.
	Changed    bool
	Foreground *ForegroundRestore
}

// Pause moves an active session to paused.
func (c *AgentClient) Pause(ctx context.Context, id AgentIdentity, o ControlOptions) (*ControlResult, error) {
	return c.control(ctx, id, protocol.AgentPause, protocol.AgentPaused, o)
}

// Resume moves a paused session back to active.
func (c *AgentClient) Resume(ctx context.Context, id AgentIdentity, o ControlOptions) (*ControlResult, error) {
	return c.control(ctx, id, protocol.AgentResume, protocol.AgentActive, o)
}

// End ends the session normally (client_end).
func (c *AgentClient) End(ctx context.Context, id AgentIdentity, o ControlOptions) (*ControlResult, error) {
	return c.control(ctx, id, protocol.AgentEnd, protocol.AgentEnded, o)
}

// Cancel cancels the session, even while an action is executing.
func (c *AgentClient) Cancel(ctx context.Context, id AgentIdentity, o ControlOptions) (*ControlResult, error) {
	return c.control(ctx, id, protocol.AgentCancel, protocol.AgentCancelled, o)
}

// control sends one of pause/resume/end/cancel and polls status until the
// expected state (0), another terminal state (exit 2) or the timeout (124).
// The status is read first so that identity errors and a terminal session
// fail at once instead of as an invisible rejection and a timeout.
func (c *AgentClient) control(ctx context.Context, id AgentIdentity, typ string, want protocol.State, o ControlOptions) (*ControlResult, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	if o.Timeout <= 0 {
		o.Timeout = defaultAgentControlWait
	}
	s, err := c.Status(ctx, id)
	if err != nil {
		return nil, err
	}
	res := &ControlResult{Session: s}
	if protocol.State(s.State) == want {
		return res, nil
	}
	if s.IsTerminal() {
		return res, fault.Newf(fault.Failed, protocol.ErrTerminalSession, "the session is already terminal (%s)", s.State).
			With("sessionId", id.SessionID).With("session", s)
	}
	fr, err := c.mutate(ctx, typ, id.params())
	res.Foreground = &fr
	if err != nil {
		return res, withSession(err, id.SessionID)
	}
	res.Changed = true
	pollErr := device.PollUntil(ctx, device.PollOptions{Clock: c.dev.Clock(), Timeout: o.Timeout, Interval: c.poll(o.PollInterval)}, func(ctx context.Context) (bool, error) {
		s, err := c.Status(ctx, id)
		if err != nil {
			return false, err
		}
		res.Session = s
		if protocol.State(s.State) == want {
			return true, nil
		}
		if s.IsTerminal() {
			return false, fault.Newf(fault.Failed, fault.CodeSessionTerminal, "the session became %s instead of %s", s.State, want).
				With("session", s).With("terminalReason", s.TerminalReason)
		}
		return false, nil
	})
	switch {
	case pollErr == nil:
		return res, nil
	case errors.Is(pollErr, device.ErrPollTimeout):
		return res, fault.Newf(fault.Timeout, fault.CodeAgentControlTimeout, "the session did not become %s in time", want).
			With("sessionId", id.SessionID).With("lastStatus", res.Session.Summary()).With("timeoutSeconds", o.Timeout.Seconds())
	}
	return res, withSession(pollErr, id.SessionID)
}

// timelineResult is the in-memory timeline of a session.
type timelineResult struct {
	Events       []AgentEvent
	TimelinePath string
	Check        TimelineCheck
	Raw          json.RawMessage
}

// Timeline reads the device's in-memory events and checks them.
func (c *AgentClient) Timeline(ctx context.Context, id AgentIdentity) (*timelineResult, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	env, err := c.query(ctx, protocol.AgentTimeline, id.params())
	if err != nil {
		return nil, withSession(err, id.SessionID)
	}
	res := &timelineResult{TimelinePath: env.TimelinePath, Raw: env.raw}
	for _, b := range env.Events {
		ev, err := parseAgentEvent(b)
		if err != nil {
			return nil, err
		}
		res.Events = append(res.Events, ev)
	}
	res.Check = checkTimeline(res.Events, id.SessionID)
	return res, nil
}

// FindObservation looks up an observation of the session by id in its
// timeline (observation_created details, or a settled observation in an
// action_settled receipt) without creating a new one.
func (t *timelineResult) FindObservation(observationID string) (*Observation, error) {
	for i := len(t.Events) - 1; i >= 0; i-- {
		ev := t.Events[i]
		if absent(ev.Details) {
			continue
		}
		switch ev.Type {
		case eventObservationCreated:
			var probe struct {
				ObservationID string `json:"observationId"`
			}
			if json.Unmarshal(ev.Details, &probe) == nil && probe.ObservationID == observationID {
				return ParseObservation(ev.Details)
			}
		case eventActionSettled:
			var probe struct {
				Settled json.RawMessage `json:"settledObservation"`
			}
			if json.Unmarshal(ev.Details, &probe) != nil || absent(probe.Settled) {
				continue
			}
			var id struct {
				ObservationID string `json:"observationId"`
			}
			if json.Unmarshal(probe.Settled, &id) == nil && id.ObservationID == observationID {
				return ParseObservation(probe.Settled)
			}
		}
	}
	return nil, fault.Newf(fault.Failed, fault.CodeObservationNotFound,
		"observation %s is not in this session's timeline", observationID).With("observationId", observationID)
}

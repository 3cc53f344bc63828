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

// agentCleanup is the evidence of the exact cancel sent after a timeout or
// an interrupt: whether it was sent, whether the session is terminal now,
// and in which state.
type agentCleanup struct {
	Attempted bool   `json:"attempted"`
	Success   bool   `json:"success"`
	State     string `json:"state,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Error     string `json:"error,omitempty"`
}

// StartOptions configure Start.
type StartOptions struct {
	OwnerToken OwnerToken
	Budget     AgentBudget
	// AckTimeout bounds the wait for the first observation (default 15 s).
	AckTimeout   time.Duration
	PollInterval time.Duration
}

// startResult is a started session with its first observation.
type startResult struct {
	Session      *AgentSession
	Observation  *Observation
	TimelinePath string
	Foreground   ForegroundRestore
	// Raw is the start-status answer that carried the first observation.
	Raw json.RawMessage
}

// Identity returns the identity of the started session.
func (r *startResult) Identity(token OwnerToken) AgentIdentity {
	return AgentIdentity{SessionID: r.Session.SessionID, OwnerToken: token}
}

// startStatus is one start-status answer: (nil, nil, nil) while the device
// has no session for the token.
func (c *AgentClient) startStatus(ctx context.Context, token OwnerToken) (*agentEnvelope, *AgentSession, error) {
	env, err := c.query(ctx, protocol.AgentStartStatus, device.P(protocol.ParamOwnerToken, token.Reveal()))
	if err != nil {
		if deviceCode(err) == protocol.ErrSessionNotFound {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	s, err := parseAgentSession(env.Session)
	if err != nil {
		return nil, nil, err
	}
	return env, s, nil
}

// Start starts a session and returns it with its first observation: the
// device does not wait for that observation, so Start polls
// start-status until it exists. A session that is terminal at once is an
// exit-2 error. On timeout or interrupt the exact session (its sessionId and
// this ownerToken) is cancelled with a fresh, bounded context, and the
// error carries cleanup evidence.
func (c *AgentClient) Start(ctx context.Context, o StartOptions) (*startResult, error) {
	if o.OwnerToken.IsZero() {
		return nil, fault.Usage(fault.CodeMissingOwnerToken, "an owner token is required to start an Agent session")
	}
	if err := o.Budget.Validate(); err != nil {
		return nil, err
	}
	if o.AckTimeout <= 0 {
		o.AckTimeout = defaultAgentAckTimeout
	}
	// A session already owned by this token would answer start-status
	// too; remember it so that an old session is never taken for the new
	// one, and refuse at once when it is still live (the device would
	// reject the start invisibly with session_conflict).
	_, prev, err := c.startStatus(ctx, o.OwnerToken)
	if err != nil {
		return nil, err
	}
	if prev.IsLive() {
		return nil, fault.New(fault.Failed, protocol.ErrSessionConflict,
			"a live Agent session already belongs to this owner token; end or cancel it, or use a new token").
			With("sessionId", prev.SessionID).With("session", prev.Summary())
	}
	prevID := ""
	if prev != nil {
		prevID = prev.SessionID
	}
	// A replay holds the shared device-control lease: the device would
	// refuse the start invisibly (lease_conflict) and the host would
	// only time out. The replay snapshot says so up front; when it cannot
	// be read, the start goes ahead and the device decides.
	if st, err := c.dev.Query(ctx, protocol.ActionHarness, device.P(protocol.ParamType, protocol.HarnessStatus)); err == nil && replayActive(st) {
		return nil, fault.New(fault.Failed, protocol.ErrLeaseConflict,
			"a replay holds the device; an Agent session cannot start until it ends").
			With("activeRun", map[string]any(st)).
			WithUserAction("Wait for the replay to finish (solopi status) or cancel it with its runId (solopi cancel --run-id).")
	}
	p := device.P(protocol.ParamOwnerToken, o.OwnerToken.Reveal())
	p = append(p, o.Budget.params()...)
	// The refusals already in the log are not ours.
	refusedBefore := c.startRefusals(ctx)
	fr, err := c.mutate(ctx, protocol.AgentStart, p)
	if err != nil {
		if fault.IsInterrupt(err) {
			return nil, c.abortStart(ctx, err, o.OwnerToken, prevID, "")
		}
		return nil, err
	}
	res := &startResult{Foreground: fr}
	var seen string
	var last map[string]any
	pollErr := device.PollUntil(ctx, device.PollOptions{Clock: c.dev.Clock(), Timeout: o.AckTimeout, Interval: c.poll(o.PollInterval)}, func(ctx context.Context) (bool, error) {
		env, s, err := c.startStatus(ctx, o.OwnerToken)
		if err == nil && (s == nil || s.SessionID == prevID) && seen == "" {
			// No session for our token yet: SoloPi may have refused the
			// start because someone else's session or replay holds the
			// device, which only its log says.
			if r, ok := newRefusal(refusedBefore, c.startRefusals(ctx)); ok {
				// Someone else's start may be the one refused: ours
				// stands if its session exists now.
				if _, again, err := c.startStatus(ctx, o.OwnerToken); err != nil || (again != nil && again.SessionID != prevID) {
					return false, err
				}
				return false, fault.New(fault.Failed, protocol.ErrLeaseConflict,
					"another owner's Agent session, a replay or plugin maintenance holds the device; SoloPi refused the start").
					With("deviceErrorCode", r.code).With("foreground", fr).
					WithUserAction("Wait for the other session to end or idle out, or end it with its owner token (agent-end / agent-cancel); " +
						"solopi status shows a replay.")
			}
		}
		if err != nil || s == nil || s.SessionID == "" || s.SessionID == prevID {
			return false, err
		}
		seen = s.SessionID
		last = s.Summary()
		if s.IsTerminal() {
			e := fault.Newf(fault.Failed, fault.CodeSessionTerminal, "the Agent session ended before its first observation (%s)", s.TerminalReason).
				With("sessionId", s.SessionID).With("session", s).With("terminalReason", s.TerminalReason).
				With("timelinePath", env.TimelinePath)
			if ua := startUserAction(s.TerminalReason); ua != "" {
				e.WithUserAction(ua)
			}
			return false, e
		}
		if absent(env.Observation) {
			return false, nil
		}
		obs, err := ParseObservation(env.Observation)
		if err != nil {
			return false, err
		}
		res.Session, res.Observation, res.TimelinePath, res.Raw = s, obs, env.TimelinePath, env.raw
		if res.TimelinePath == "" {
			res.TimelinePath = obs.TimelinePath
		}
		return true, nil
	})
	switch {
	case pollErr == nil:
		return res, nil
	case errors.Is(pollErr, device.ErrPollTimeout):
		e := fault.New(fault.Timeout, fault.CodeAgentStartTimeout, "SoloPi did not publish the first observation within --ack-timeout").
			With("ackTimeoutSeconds", o.AckTimeout.Seconds()).With("foreground", fr).
			WithUserAction("Check that no other replay or Agent session holds the device (agent-status / status), that SoloPi's " +
				"accessibility service is on, and that the app under test is in front; then start again.")
		// solopi-ai's sessionId (null while none was seen) and lastStatus
		// (the last start-status answer: the session, or the device's
		// session_not_found).
		if last != nil {
			e.With("lastStatus", last)
		} else {
			e.With("lastStatus", map[string]any{"success": false, "errorCode": protocol.ErrSessionNotFound})
		}
		e.With("sessionId", nil)
		if seen != "" {
			e.With("sessionId", seen)
		}
		return nil, c.abortStart(ctx, e, o.OwnerToken, prevID, seen)
	case fault.IsInterrupt(pollErr):
		return nil, c.abortStart(ctx, pollErr, o.OwnerToken, prevID, seen)
	}
	return nil, pollErr
}

// startUserAction says what a tester can do about a session that failed
// while capturing its first observation.
func startUserAction(reason string) string {
	switch reason {
	case protocol.ErrPageRootUnavailable, protocol.ErrObservationInterrupted:
		return "Unlock the phone and bring the app under test to the front (not SoloPi, not the launcher or a system dialog), then start again."
	case protocol.ErrTouchServiceUnavailable, protocol.ErrOperationServiceUnavailable:
		return "Open SoloPi, enable its accessibility service and grant its ADB permission (solopi doctor lists what is missing), then start again."
	}
	return ""
}

// abortStart cancels the session this Start created, identified by its
// sessionId when known and otherwise looked up by our own token (never the
// previous session of that token), and attaches the cleanup evidence.
func (c *AgentClient) abortStart(ctx context.Context, cause error, token OwnerToken, prevID, sessionID string) error {
	cctx, cancel := device.Cleanup(ctx, agentCleanupTimeout)
	defer cancel()
	cl := agentCleanup{SessionID: sessionID}
	if sessionID == "" {
		_, s, err := c.startStatus(cctx, token)
		switch {
		case err != nil:
			cl.Reason = "the session could not be looked up"
			cl.Error = errorText(err)
		case s == nil || s.SessionID == "" || s.SessionID == prevID:
			cl.Reason = "no session was created for this owner token"
			cl.Success = true
		default:
			sessionID = s.SessionID
			cl.SessionID = sessionID
		}
	}
	if sessionID != "" {
		cl = c.exactCancel(cctx, AgentIdentity{SessionID: sessionID, OwnerToken: token})
	}
	return withCleanup(ctx, cause, cl)
}

// withCleanup attaches cleanup evidence to an error, turning a bare
// interrupt into the structured 130.
func withCleanup(ctx context.Context, cause error, cl agentCleanup) error {
	var e *fault.Error
	if !errors.As(cause, &e) {
		e = fault.From(cause)
	}
	if cl.SessionID != "" {
		e.With("sessionId", cl.SessionID)
	}
	return e.With("cleanup", cl)
}

// exactCancel cancels exactly id (when it is still live) and waits for a
// terminal state within ctx.
func (c *AgentClient) exactCancel(ctx context.Context, id AgentIdentity) agentCleanup {
	cl := agentCleanup{SessionID: id.SessionID}
	s, err := c.Status(ctx, id)
	if err != nil {
		cl.Error = errorText(err)
		cl.Reason = "the session status could not be read"
		return cl
	}
	if s.IsTerminal() {
		cl.Success, cl.State, cl.Reason = true, s.State, "the session was already terminal"
		return cl
	}
	cl.Attempted = true
	res, err := c.control(ctx, id, protocol.AgentCancel, protocol.AgentCancelled, ControlOptions{Timeout: agentCleanupTimeout})
	if res != nil && res.Session != nil {
		cl.State = res.Session.State
	}
	if err != nil {
		cl.Error = errorText(err)
		return cl
	}
	cl.Success = res.Session.IsTerminal()
	return cl
}

// CancelExact is the best-effort cleanup used after a timeout or an
// interrupt: it cancels exactly id with a fresh context bounded by
// AgentCleanupTimeout, whatever state ctx is in.
func (c *AgentClient) CancelExact(ctx context.Context, id AgentIdentity) agentCleanup {
	cctx, cancel := device.Cleanup(ctx, agentCleanupTimeout)
	defer cancel()
	return c.exactCancel(cctx, id)
}

// replayActive reads the active flag of the replay status snapshot; only a
// literal true counts.
func replayActive(st device.WireObject) bool {
	active, ok := st.Flag("active")
	return ok && active
}

package onphone

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/agent"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/readiness"
	"github.com/solopi-dev/solopi/verify/execution"
)

// LaunchTarget brings the app under test to the front: its launcher
// activity (resolved as startup-time does) started with `am start -W -n`;
// an error line or a result block that is not ok is a failure.
func (p *Phone) LaunchTarget(ctx context.Context, pkg string) error {
	comp, err := readiness.ResolveLauncher(ctx, p.dev.Transport(), pkg)
	if err != nil {
		return err
	}
	lctx, cancel := context.WithTimeout(ctx, p.o.LaunchTimeout)
	defer cancel()
	cmd := device.ShellJoin("am", "start", "-W", "-n", comp)
	stdout, stderr, code, err := p.dev.Transport().Shell(lctx, cmd)
	switch {
	case ctx.Err() != nil:
		return device.Interrupted(ctx)
	case lctx.Err() != nil:
		return fault.Newf(fault.Timeout, fault.CodeTargetAppLaunchFailed, "am start did not return within %s", p.o.LaunchTimeout).With("component", comp)
	case err != nil:
		return fault.Wrap(fault.Transport, fault.CodeAdbError, "adb shell failed while launching the app under test", err).With("component", comp)
	case code != 0:
		return fault.Newf(fault.Transport, fault.CodeTargetAppLaunchFailed, "am start exited with code %d: %s", code, device.FirstLine(string(stderr)+string(stdout))).With("component", comp)
	}
	blocks, err := readiness.ParseAmStart(string(stdout))
	if err != nil {
		return fault.Wrap(fault.Transport, fault.CodeTargetAppLaunchFailed, "am start failed: "+err.Error(), err).With("component", comp)
	}
	for _, b := range blocks {
		if st := b["Status"]; st != "" && st != "ok" {
			return fault.Newf(fault.Transport, fault.CodeTargetAppLaunchFailed, "am start reported Status %s", st).With("component", comp)
		}
	}
	return nil
}

// Start starts the session like agent-session-start: the owner token and
// the explore step's budget, waiting (--agent-start-timeout) for the first
// observation. A session that could not start for a device reason is a
// Failed error carrying the answer.
func (p *Phone) Start(ctx context.Context, req execution.StartRequest) (*execution.StartResult, error) {
	tok, err := agent.ParseOwnerToken(req.OwnerToken.Reveal())
	if err != nil {
		return nil, err
	}
	b := agent.AgentBudget{MaxSteps: req.Budget.MaxSteps, MaxDurationMs: req.Budget.MaxDurationMs, IdleTimeoutMs: req.Budget.IdleTimeoutMs,
		MaxRepeatedActions: req.Budget.MaxRepeatedActions, MaxNoProgressSteps: req.Budget.MaxNoProgressSteps}
	st, err := p.agent.Start(ctx, agent.StartOptions{OwnerToken: tok, Budget: b, AckTimeout: p.o.AgentStartTimeout, PollInterval: p.o.PollInterval})
	if err != nil {
		return nil, err
	}
	id := st.Session.SessionID
	p.mu.Lock()
	p.tokens[id] = tok
	p.mu.Unlock()
	resp := tree(map[string]any{"success": true, "sessionId": id, "session": st.Session, "observation": st.Observation,
		"timelinePath": st.TimelinePath, "budget": b, "foreground": st.Foreground})
	obs, _ := resp["observation"].(map[string]any)
	return &execution.StartResult{Response: resp, SessionID: id, Observation: obs}, nil
}

// identity is ref with its owner token: the engine's, or the one this
// phone started the session with (the vision provider's refs carry none).
func (p *Phone) identity(ref execution.SessionRef) (agent.AgentIdentity, error) {
	if !ref.OwnerToken.IsZero() {
		tok, err := agent.ParseOwnerToken(ref.OwnerToken.Reveal())
		return agent.AgentIdentity{SessionID: ref.SessionID, OwnerToken: tok}, err
	}
	p.mu.Lock()
	tok, ok := p.tokens[ref.SessionID]
	p.mu.Unlock()
	if !ok {
		return agent.AgentIdentity{}, fault.Newf(fault.Internal, fault.CodeUnknownSession, "session %s was not started by this run", ref.SessionID)
	}
	return agent.AgentIdentity{SessionID: ref.SessionID, OwnerToken: tok}, nil
}

// Act sends one typed action like agent-act on the observation the engine
// holds and waits (--agent-action-timeout) for its final receipt. A
// rejected or failed receipt is a Failed error with the answer; an
// interrupt or a timeout has already cancelled the session exactly.
func (p *Phone) Act(ctx context.Context, req execution.ActRequest) (*execution.ActResult, error) {
	id, err := p.identity(req.Session)
	if err != nil {
		return nil, err
	}
	args := protocol.ActionArgs{Text: req.Text, DurationMs: req.DurationMs, Distance: req.Distance}
	if req.NodeID != "" {
		args.NodeID = &req.NodeID
	}
	if req.Direction != "" {
		args.Direction = &req.Direction
	}
	ar, err := p.agent.Act(ctx, agent.ActRequest{Identity: id, StepID: req.StepID, ObservationID: req.ObservationID, Action: req.Action,
		Args: args, Timeout: p.o.AgentActionTimeout, PollInterval: p.o.PollInterval})
	if err != nil {
		if ar == nil || ar.Receipt == nil {
			return nil, err
		}
		resp := failure(err)
		resp["receipt"] = tree(ar.Receipt)
		return &execution.ActResult{Response: resp, Status: ar.Receipt.Status}, err
	}
	out := map[string]any{"success": true, "sessionId": id.SessionID, "stepId": req.StepID, "action": req.Action,
		"observationId": req.ObservationID, "replayed": ar.Replayed, "receipt": ar.Receipt, "session": ar.Session}
	if req.NodeID != "" {
		out["nodeId"] = req.NodeID
	}
	if ar.Foreground != nil {
		out["foreground"] = ar.Foreground
	}
	resp := tree(out)
	res := &execution.ActResult{Response: resp, Status: ar.Receipt.Status}
	if receipt, ok := resp["receipt"].(map[string]any); ok {
		res.Settled, _ = receipt["settledObservation"].(map[string]any)
	}
	return res, nil
}

// Screenshot pulls the observation's screenshot (SHA-256 checked against
// the observation, refused if it holds the owner token) to dest.
func (p *Phone) Screenshot(ctx context.Context, ref execution.SessionRef, observation map[string]any, dest string) error {
	id, err := p.identity(ref)
	if err != nil {
		return err
	}
	b, err := json.Marshal(observation)
	if err != nil {
		return fault.Wrap(fault.Internal, fault.CodeObservationInvalid, "cannot encode the observation", err)
	}
	obs, err := agent.ParseObservation(b)
	if err != nil {
		return err
	}
	_, err = p.agent.SaveScreenshot(ctx, id, obs, dest, true)
	return err
}

// Timeline reads the session's in-memory timeline like agent-timeline.
func (p *Phone) Timeline(ctx context.Context, ref execution.SessionRef) (map[string]any, error) {
	id, err := p.identity(ref)
	if err != nil {
		return nil, err
	}
	tl, err := p.agent.Timeline(ctx, id)
	if err != nil {
		return nil, err
	}
	events := tl.Events
	if events == nil {
		events = []agent.AgentEvent{}
	}
	out := tree(tl.Check)
	out["success"], out["sessionId"], out["timelinePath"] = true, id.SessionID, tl.TimelinePath
	out["events"] = tree(map[string]any{"events": events})["events"]
	return out, nil
}

// End ends the session like agent-end (--agent-end-timeout).
func (p *Phone) End(ctx context.Context, ref execution.SessionRef) (map[string]any, error) {
	return p.control(ctx, ref, (*agent.AgentClient).End, false)
}

// Cancel cancels the session like agent-cancel. A session already
// terminal (its budget ran out, the device ended it) needs no cancel: that
// is an answer, not an error.
func (p *Phone) Cancel(ctx context.Context, ref execution.SessionRef) (map[string]any, error) {
	return p.control(ctx, ref, (*agent.AgentClient).Cancel, true)
}

type controlFunc func(c *agent.AgentClient, ctx context.Context, id agent.AgentIdentity, o agent.ControlOptions) (*agent.ControlResult, error)

// control sends end or cancel. terminalOK accepts a session that is
// already terminal (for cancel); an end finds it so only when the session
// ended some other way, which solopi-ai reports as a cleanup failure.
func (p *Phone) control(ctx context.Context, ref execution.SessionRef, fn controlFunc, terminalOK bool) (map[string]any, error) {
	id, err := p.identity(ref)
	if err != nil {
		return nil, err
	}
	r, err := fn(p.agent, ctx, id, agent.ControlOptions{Timeout: p.o.AgentEndTimeout, PollInterval: p.o.PollInterval})
	if err != nil {
		var e *fault.Error
		if terminalOK && r != nil && r.Session != nil && errors.As(err, &e) && e.Code == protocol.ErrTerminalSession {
			return tree(map[string]any{"success": true, "sessionId": id.SessionID, "state": r.Session.State, "changed": false,
				"session": r.Session, "note": "the session was already terminal"}), nil
		}
		resp := failure(err)
		if r != nil && r.Session != nil {
			resp["session"] = tree(r.Session)
			return resp, err
		}
		return nil, err
	}
	out := map[string]any{"success": true, "sessionId": id.SessionID, "state": r.Session.State, "changed": r.Changed, "session": r.Session}
	if r.Foreground != nil {
		out["foreground"] = r.Foreground
	}
	return tree(out), nil
}

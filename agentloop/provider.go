package agentloop

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/solopi/agent"
	"github.com/solopi-dev/solopi/solopi/device"
)

// ScreenSource loads the screenshot of a SoloPi observation.
type ScreenSource func(ctx context.Context, obs *agent.Observation) (*Screen, error)

var sessionDirPattern = regexp.MustCompile(`/agent-sessions/[A-Za-z0-9][A-Za-z0-9._-]{0,159}/$`)

// DeviceScreens pulls observation screenshots read-only through the
// device channel. A DecisionInput carries no session id, so the check is
// that the file is an observation PNG inside some agent-sessions/<id>/
// directory, with its SHA-256 equal to the observation's.
func DeviceScreens(dev *device.Device) ScreenSource {
	return func(ctx context.Context, obs *agent.Observation) (*Screen, error) {
		dir, _ := path.Split(obs.ScreenshotPath)
		m := sessionDirPattern.FindString(dir)
		if m == "" {
			return nil, &DeviceError{Code: CodeScreenshotFailed, Message: "the observation's screenshot is not inside an agent-sessions directory"}
		}
		sid := strings.TrimSuffix(strings.TrimPrefix(m, "/agent-sessions/"), "/")
		b, err := FetchScreenshot(ctx, dev, sid, obs)
		if err != nil {
			return nil, err
		}
		s, err := NewScreen(b, time.Now())
		if err != nil {
			return nil, &DeviceError{Code: CodeScreenshotFailed, Message: "the observation screenshot is not a usable PNG", Err: err}
		}
		s.Ref = obs.ObservationID
		return s, nil
	}
}

// maxPlansPerDecision bounds model plans inside one Decide: zero-touch
// rejections (no node under the point, protocol notes, risk blocks, notes,
// failed completion reviews) replan on the same observation.
const maxPlansPerDecision = 4

// Provider is the pure-vision planner as a solopi.DecisionProvider (the
// one verify-run uses): each Decide plans on the observation's screenshot
// and proposes one typed action on a hit-tested nodeId, done, or blocked.
// It has no device handle: freshness before dispatch is the device's own
// stale_observation check (the tree signature at act time), and pixel
// verification compares consecutive observations.
type Provider struct {
	model   Model
	screens ScreenSource
	cfg     Config
	mode    string

	mu        sync.Mutex
	run       *taskRun
	lastShot  *Screen
	lastAct   *Action
	lastField *nodeRef
}

// NewProvider returns the planner provider.
func NewProvider(model Model, screens ScreenSource, cfg Config) (*Provider, error) {
	if model == nil || screens == nil {
		return nil, errors.New("agentloop: the provider needs a model and a screenshot source")
	}
	cfg.defaults()
	return &Provider{model: model, screens: screens, cfg: cfg, mode: ModeSoloPi}, nil
}

// providerDevice satisfies Device for the shared task state only; the
// provider never dispatches through it.
type providerDevice struct{}

func (providerDevice) Mode() string { return ModeSoloPi }
func (providerDevice) Observe(context.Context) (*Screen, error) {
	return nil, errors.New("the decision provider cannot observe; it plans on the observation it is given")
}
func (providerDevice) Supports(a string) (bool, string) {
	switch a {
	case ActTap, ActLongPress, ActSwipe, ActType, ActBack, ActHome, ActWait:
		return true, ""
	case ActDoubleTap:
		return false, "this device has no Double Tap; use Tap or another action"
	}
	return false, a + " is not a device action"
}
func (providerDevice) Dispatch(context.Context, Command, *Screen) (DispatchResult, error) {
	return DispatchResult{}, errors.New("the decision provider never dispatches")
}
func (providerDevice) Close(context.Context) error { return nil }

// State is the provider's audit state (nil before the first decision).
func (p *Provider) State() *AgentState {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run == nil {
		return nil
	}
	return p.run.st
}

// Trajectory returns the provider's audit trail so far.
func (p *Provider) Trajectory(model ModelInfo) *Trajectory {
	p.mu.Lock()
	run := p.run
	p.mu.Unlock()
	if run == nil {
		return nil
	}
	res := run.result
	if res == nil {
		res = &Result{RunID: run.runID, Goal: run.goal, DeviceMode: ModeSoloPi, StartedAt: run.started.UTC(), FinishedAt: p.cfg.Now().UTC(),
			Outcome: "in_progress", Phase: run.st.Phase(), Steps: run.st.Step(), Counters: run.st.Counters(), Metrics: run.st.Metrics(),
			Profile: run.profile, Frame: run.frame, Exit: 2}
	}
	return BuildTrajectory(res, run.st.Events(), model, p.cfg.Policy)
}

// Decide implements solopi.DecisionProvider.
func (p *Provider) Decide(ctx context.Context, in agent.DecisionInput) (agent.Proposal, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if in.Observation == nil {
		return agent.Proposal{}, errors.New("agentloop provider: the decision input has no observation")
	}
	if p.run == nil {
		a := &PhoneAgent{cfg: p.cfg, dev: providerDevice{}, model: p.model}
		maxSteps := int(in.Budget.MaxSteps)
		dur := time.Duration(in.Budget.MaxDurationMs) * time.Millisecond
		r, err := a.begin(Task{Goal: in.Goal, MaxSteps: max(maxSteps, 1) * maxPlansPerDecision, MaxDuration: dur})
		if err != nil {
			return agent.Proposal{}, err
		}
		p.run = r
	} else if in.Goal != p.run.goal {
		return agent.Proposal{}, ErrGoalChanged
	}
	r := p.run
	st := r.st
	screen, err := p.screens(ctx, in.Observation)
	if err != nil {
		return agent.Proposal{}, fmt.Errorf("load the observation screenshot: %w", err)
	}
	st.emit(EvObservation, "observation received", map[string]any{"screenshot_sha256": screen.SHA256, "display_width": screen.Width(),
		"display_height": screen.Height(), "device_ref": in.Observation.ObservationID})
	p.absorbHistory(in, screen)
	p.lastShot = screen

	for i := 0; i < maxPlansPerDecision; i++ {
		if ctx.Err() != nil {
			return agent.Proposal{}, ctx.Err()
		}
		prop, done, err := p.planOnce(ctx, in.Observation, screen)
		if err != nil {
			return agent.Proposal{}, err
		}
		if done {
			return prop, nil
		}
		if r.result != nil {
			return p.terminalProposal(), nil
		}
	}
	r.finish(OutcomeBlocked, fmt.Sprintf("the planner produced no executable action in %d attempts on this screen", maxPlansPerDecision), nil)
	return p.terminalProposal(), nil
}

// absorbHistory turns what happened to the previous proposal into memory:
// a succeeded step is verified by comparing its screenshot with this one;
// a host refusal becomes a rejection summary.
func (p *Provider) absorbHistory(in agent.DecisionInput, screen *Screen) {
	r := p.run
	if len(in.History) == 0 || p.lastAct == nil {
		return
	}
	last := in.History[len(in.History)-1]
	act := *p.lastAct
	p.lastAct = nil
	step := r.st.Step()
	switch {
	case last.Sent && last.Receipt != nil && last.Receipt.Status == agent.ReceiptSucceeded:
		v := verifyEffect(act.Name, p.lastShot, screen)
		r.st.emit(EvVerification, "verification: "+v.Status, map[string]any{"status": v.Status, "command_success": true,
			"observable_effect": v.ObservableEffect, "diff": v.Diff, "warning": v.Warning, "semantic_effect_verified": false})
		if v.Warning != "" {
			r.st.count(func(c *Counters) { c.Warnings++ })
		}
		res := map[string]any{"command_dispatched": true, "command_success": true, "observable_effect": v.ObservableEffect}
		if v.Warning != "" {
			res["warning"] = v.Warning
		}
		r.mem.addTurn(step, act, res)
	case !last.Sent:
		r.mem.addRejection(step, act, last.ErrorCode, last.Error)
	default:
		r.mem.addTurn(step, act, map[string]any{"command_dispatched": true, "command_success": false, "error_code": last.ErrorCode})
	}
}

func (p *Provider) terminalProposal() agent.Proposal {
	res := p.run.result
	reason := res.Message
	if reason == "" {
		reason = res.Outcome
	}
	if res.Outcome == OutcomeCompleted {
		return agent.Proposal{Kind: agent.ProposalDone, Reason: reason}
	}
	return agent.Proposal{Kind: agent.ProposalBlocked, Reason: res.Outcome + ": " + reason}
}

// planOnce runs one planning cycle of the shared runtime on the given
// screen. done is true when it produced a proposal.
func (p *Provider) planOnce(ctx context.Context, obs *agent.Observation, screen *Screen) (agent.Proposal, bool, error) {
	r := p.run
	if !r.beginStep() {
		return p.terminalProposal(), true, nil
	}
	r.freshScreen = func(context.Context) (*Screen, error) { return screen, nil }
	act := r.planStep(ctx, ctx, screen)
	if r.result != nil {
		return p.terminalProposal(), true, nil
	}
	if act == nil || r.planned == nil {
		// Rejected, noted or reviewed away: plan again on the same screen.
		return agent.Proposal{}, false, nil
	}
	cmd := *r.planned
	r.planned = nil
	ta, err := MapToTyped(cmd, obs, p.lastField)
	if err != nil {
		var nm *NotMappableError
		if errors.As(err, &nm) {
			r.st.emit(EvExecution, "not proposed: "+nm.Note, map[string]any{"command_dispatched": false, "error_code": nm.Code})
			r.reject(r.st.Step(), *act, nm.Code, nm.Note, SoftUnmappable, screen)
			return agent.Proposal{}, false, nil
		}
		return agent.Proposal{}, false, err
	}
	if ta.Tapped != nil && isTextField(ta.Tapped) {
		p.lastField = refOf(ta.Tapped)
	}
	reason := act.Reason
	if reason == "" {
		reason = act.Name + " proposed by the pure-vision planner"
	}
	r.st.emit(EvExecution, "proposed "+ta.Action, map[string]any{"command_dispatched": false, "proposal": "act", "typed_action": ta.Action, "arguments": typedArgs(ta.Args)})
	p.lastAct = act
	return agent.Proposal{Kind: agent.ProposalAct, Reason: reason, Action: ta.Action, Args: ta.Args}, true, nil
}

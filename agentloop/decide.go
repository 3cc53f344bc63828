package agentloop

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/agentloop/chat"
)

// The planner for callers that own the device and its observations (the
// verification engine's vision provider over a SoloPi Agent session): each
// Propose plans on the screen the caller gives and returns one proposal
// without dispatching anything. Memory, the coordinate profile,
// the step budget and the audit trail carry over between the calls of one
// task; the runtime's own planning step (planStep) does the work, so the
// prompts, the parser, the contract, the reviews and the repeat guard are
// the agent-run ones. Freshness before dispatch is the caller's: the
// device's stale_observation check stands in for the pixel re-check.

// Proposal kinds.
const (
	ProposeAct     = "act"
	ProposeDone    = "done"
	ProposeBlocked = "blocked"
)

// maxPlansPerProposal bounds model plans inside one Propose: zero-touch
// rejections (no node under the point, an action the caller does not
// allow, protocol notes, risk blocks, notes, failed completion reviews)
// replan on the same screen.
const maxPlansPerProposal = 4

// Proposal is one answer of a Planner.
type Proposal struct {
	Kind string
	// Reason is the model's reason (act), the completion message (done),
	// or the outcome and its message (blocked).
	Reason string
	// Action is the model's action, Command its mapping to device pixels
	// and DeviceAction the caller's Mapper's action for it (act only).
	Action       *action.Action
	Command      *Command
	DeviceAction *DeviceAction
	// Result is the task's end (done and blocked).
	Result *Result
	// Events are the audit events since the previous proposal: the
	// observation, every model request and answer, calibration, reviews,
	// rejections.
	Events []AgentEvent
}

// Feedback is what became of the previous act proposal.
type Feedback struct {
	// Sent is false when the caller refused the proposal before it reached
	// the device.
	Sent bool
	// Succeeded reports a succeeded receipt.
	Succeeded bool
	ErrorCode string
	Error     string
}

// DeviceAction is a cleared command in the caller's device protocol (a
// SoloPi typed action, say): the device's action name and its arguments,
// as the audit trail records them. The planner never sends it.
type DeviceAction struct {
	Action string
	Args   map[string]any
}

// mapper turns a command the planner cleared into the caller's device
// action without sending it. A *NotMappableError refuses it with zero
// touch: the note goes back to the model, and the planner plans again on
// the same screen, spending a step. Any other error ends the proposal.
type mapper func(cmd Command) (DeviceAction, error)

// Target is the device a Planner proposes for: its mode (the trajectory's
// device_mode) and the actions it can express. An action it lacks is a
// protocol note to the model, as on a device the runtime drives itself.
type Target interface {
	Mode() string
	Supports(action string) (ok bool, note string)
}

// Planner proposes one action at a time for one task.
type Planner struct {
	mu       sync.Mutex
	run      *taskRun
	lastShot *Screen
	lastAct  *action.Action
	// handed is how many events earlier proposals carried.
	handed int
}

// plannerDevice is the Target as a Device for the shared task state: the
// planner never observes or dispatches through it.
type plannerDevice struct{ Target }

func (plannerDevice) Observe(context.Context) (*Screen, error) {
	return nil, errors.New("the planner cannot observe; it plans on the screen it is given")
}
func (plannerDevice) Dispatch(context.Context, Command, *Screen) (DispatchResult, error) {
	return DispatchResult{}, errors.New("the planner never dispatches")
}
func (plannerDevice) Close(context.Context) error { return nil }

// NewPlanner starts a task on target, the caller's device (what it can
// express). Every plan, rejected or not, spends one of t.MaxSteps;
// t.MaxDuration bounds the model's time. profile, when set, is a
// coordinate contract frozen earlier (by a preflight whose events belong
// to another audit trail): nothing is negotiated. A completion review that
// cannot tell ends the task blocked.
func NewPlanner(model chat.Model, target Target, cfg Config, t Task, profile *Profile) (*Planner, error) {
	if model == nil || target == nil {
		return nil, errors.New("agentloop: the planner needs a model and a target")
	}
	cfg.defaults()
	a := &phoneAgent{cfg: cfg, dev: plannerDevice{target}, model: model}
	r, err := a.begin(t)
	if err != nil {
		return nil, err
	}
	if profile != nil {
		r.profile = profile
	}
	r.blockUncertain = true
	return &Planner{run: r}, nil
}

// Goal is the task's goal.
func (p *Planner) Goal() string { return p.run.goal }

// State is the task's audit state.
func (p *Planner) State() *agentState { return p.run.st }

// Profile is the coordinate contract (nil before the first plan).
func (p *Planner) Profile() *Profile {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.run.profile
}

// Trajectory is the task's audit trail so far; an unfinished task has the
// outcome "in_progress".
func (p *Planner) Trajectory(model chat.Info) *trajectory {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.run
	cfg := r.a.cfg
	res := r.result
	if res == nil {
		res = &Result{RunID: r.runID, Goal: r.goal, DeviceMode: r.a.dev.Mode(), StartedAt: r.started.UTC(), FinishedAt: cfg.Clock.Now().UTC(),
			Outcome: "in_progress", Phase: r.st.Phase(), Steps: r.st.Step(), Counters: r.st.Counters(), Metrics: r.st.Metrics(),
			Profile: r.profile, Frame: r.frame, Exit: 2}
	}
	return BuildTrajectory(res, r.st.Events(), model, cfg.Policy)
}

// Propose plans on screen (its Ref names the device observation) and
// returns one proposal. last is what became of the previous act proposal
// (nil when there was none). The error is for misuse (a finished task),
// a Mapper failure and the caller's cancellation; every task outcome is a
// proposal.
func (p *Planner) Propose(ctx context.Context, screen *Screen, last *Feedback, mapCmd mapper) (*Proposal, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.run
	if r.result != nil {
		return nil, errTaskFinished
	}
	if screen == nil || mapCmd == nil {
		return nil, errors.New("agentloop: Propose needs a screen and a mapper")
	}
	// The previous action's verification belongs to the step that acted.
	p.absorb(last, screen)
	p.lastShot = screen
	r.freshScreen = func(context.Context) (*Screen, error) { return screen, nil }
	for i := 0; i < maxPlansPerProposal && r.result == nil; i++ {
		if err := ctx.Err(); err != nil {
			r.interrupted(ctx, err)
			return nil, err
		}
		prop, err := p.planOnce(ctx, screen, mapCmd)
		if err != nil {
			return nil, err
		}
		if prop != nil {
			return p.hand(prop), nil
		}
	}
	if r.result == nil {
		r.finish(OutcomeBlocked, fmt.Sprintf("the planner produced no executable action in %d attempts on this screen", maxPlansPerProposal), nil)
	}
	return p.hand(p.terminal()), nil
}

// hand attaches the events since the previous proposal.
func (p *Planner) hand(prop *Proposal) *Proposal {
	evs := p.run.st.Events()
	prop.Events = evs[p.handed:]
	p.handed = len(evs)
	return prop
}

// absorb turns what happened to the previous proposal into memory, as
// the runtime records its own dispatches: a succeeded step is verified by
// comparing its screen with this one; a refusal becomes a rejection.
func (p *Planner) absorb(last *Feedback, screen *Screen) {
	r := p.run
	act := p.lastAct
	p.lastAct = nil
	if act == nil || last == nil {
		return
	}
	step := r.st.Step()
	switch {
	case last.Sent && last.Succeeded:
		r.st.count(func(c *Counters) { c.Dispatched++ })
		v := verifyEffect(act.Name, p.lastShot, screen)
		r.st.emit(EvVerification, "verification: "+v.Status, map[string]any{"status": v.Status, "command_success": true,
			"observable_effect": v.ObservableEffect, "diff": v.Diff, "warning": v.Warning, "semantic_effect_verified": false})
		if v.Warning != "" {
			r.st.count(func(c *Counters) { c.Warnings++ })
		}
		r.emitExecution("executed "+act.Name, execution{dispatched: true, success: true, effect: v.ObservableEffect, warning: v.Warning}, nil)
		if v.Status == VerifyPassed {
			r.st.resetStreaks()
		}
		res := map[string]any{"command_dispatched": true, "command_success": true, "observable_effect": v.ObservableEffect}
		if v.Warning != "" {
			res["warning"] = v.Warning
		}
		r.mem.addTurn(step, *act, res)
	case !last.Sent:
		r.emitExecution("not executed: refused by the host", execution{effect: effectNone, recoveryNeeded: true, rootError: last.ErrorCode}, nil)
		r.mem.addRejection(step, *act, last.ErrorCode, last.Error)
	default:
		r.st.count(func(c *Counters) { c.Dispatched++ })
		r.emitExecution("executed "+act.Name+" without success", execution{dispatched: true, effect: effectUnknown, recoveryNeeded: true, rootError: last.ErrorCode}, nil)
		r.mem.addTurn(step, *act, map[string]any{"command_dispatched": true, "command_success": false, "error_code": last.ErrorCode})
	}
}

// terminal is the proposal of a finished task: done only after the
// isolated completion review confirmed it.
func (p *Planner) terminal() *Proposal {
	res := p.run.result
	reason := res.Message
	if reason == "" {
		reason = res.Outcome
	}
	if res.Outcome == OutcomeCompleted {
		return &Proposal{Kind: ProposeDone, Reason: reason, Result: res}
	}
	return &Proposal{Kind: ProposeBlocked, Reason: res.Outcome + ": " + reason, Result: res}
}

// planOnce runs one planning step of the shared runtime on screen. It
// returns nil (and no error) when the plan was handled with zero touch
// and the planner should plan again.
func (p *Planner) planOnce(parent context.Context, screen *Screen, mapCmd mapper) (*Proposal, error) {
	r := p.run
	if !r.beginStep() {
		return p.terminal(), nil
	}
	r.st.emit(evObservation, "observation received", map[string]any{"screenshot_sha256": screen.SHA256, "display_width": screen.Width(),
		"display_height": screen.Height(), "device_ref": screen.Ref})
	ctx, cancel := r.stepContext(parent)
	defer cancel()
	r.stepCtx = ctx
	defer func() { r.stepCtx = nil }()
	act := r.planStep(ctx, parent, screen)
	if r.result != nil {
		return p.terminal(), nil
	}
	if act == nil || r.planned == nil {
		// Rejected, noted or reviewed away: plan again on the same screen.
		return nil, nil
	}
	cmd := *r.planned
	r.planned = nil
	da, err := mapCmd(cmd)
	if err != nil {
		var nm *NotMappableError
		if errors.As(err, &nm) {
			r.emitExecution("not proposed: "+nm.Note, execution{effect: effectNone, recoveryNeeded: true, rootError: nm.Code}, nil)
			r.reject(r.st.Step(), *act, nm.Code, nm.Note, softUnmappable, screen)
			return nil, nil
		}
		return nil, err
	}
	reason := act.Reason
	if reason == "" {
		reason = act.Name + " proposed by the pure-vision planner"
	}
	// The mapping is the proposal's precondition; its execution is the
	// caller's, recorded when the next Propose reports it.
	r.st.emit(evPrecondition, "proposed "+da.Action, map[string]any{"verdict": "mapped", "command_dispatched": false, "proposal": "act",
		"typed_action": da.Action, "arguments": da.Args})
	p.lastAct = act
	return &Proposal{Kind: ProposeAct, Reason: reason, Action: act, Command: &cmd, DeviceAction: &da}, nil
}

// completionReview is the isolated completion reviewer's answer on one
// screenshot.
type completionReview struct {
	// Verdict is CompletionConfirmed, CompletionRejected or
	// CompletionUncertain; Reason is the reviewer's own explanation.
	Verdict string
	Reason  string
	// Events are the review's audit events (the request, the answer, the
	// usage), redacted by cfg.Redact.
	Events  []AgentEvent
	Metrics Metrics
}

// ReviewCompletion asks the planner's isolated completion reviewer whether
// screen shows goal achieved, with no runtime evidence: the screenshot is
// the only thing it judges. cfg supplies the resize policy, Redact and
// Now.
func ReviewCompletion(ctx context.Context, model chat.Model, cfg Config, goal string, screen *Screen) (*completionReview, error) {
	if model == nil || screen == nil {
		return nil, errors.New("agentloop: the completion review needs a model and a screen")
	}
	cfg.defaults()
	st := newAgentState(cfg.Clock.Now, cfg.Redact, cfg.OnEvent)
	verdict, why, err := reviewCompletion(ctx, st, model, cfg.Policy, goal, nil, screen)
	if err != nil {
		return nil, err
	}
	st.emit(EvTaskReview, "completion "+verdict, map[string]any{"status": reviewStatus[verdict], "verdict": verdict, "message": why,
		"screenshot_sha256": screen.SHA256})
	return &completionReview{Verdict: verdict, Reason: cfg.Redact(why), Events: st.Events(), Metrics: st.Metrics()}, nil
}

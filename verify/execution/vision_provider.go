package execution

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/agentdevice"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
)

// Files the vision provider keeps in an explore segment's directory, where
// the report shows them as a timeline.
const (
	plannerTrajectory = "trajectory.json"
	plannerScreens    = "screens"
)

// VisionConfig is the pure-vision planner side of a verification run.
// verify-run --decision-provider vision runs the planner preflight
// (planner-check) before the phone is touched and passes its report here,
// as agent-run does.
type VisionConfig struct {
	// Model is the chat client: an *chat.Client names its model in
	// the evidence and its API key is redacted from everything written.
	Model chat.Model
	// Preflight is the passed preflight; its coordinate profile is used
	// frozen (nothing is negotiated during the run).
	Preflight *agentloop.PreflightReport
	// Runtime is the planner's configuration (resize policy, profile key,
	// Redact). Its Preflight is not used. Confirmer, when set (verify-run
	// --console, or a terminal), answers the planner's confirmations and
	// takeovers; without one an action that needs a human ends the explore
	// step blocked. OnEvent sees every planner event (the live console).
	Runtime agentloop.Config
	// OnScreen, when set, sees every screenshot the planner decides on
	// (the live console).
	OnScreen func(*agentloop.Screen)
	Clock    clock.Clock
}

// vision is a checked VisionConfig.
type vision struct {
	model    chat.Model
	info     chat.Info
	profile  *agentloop.Profile
	runtime  agentloop.Config
	onScreen func(*agentloop.Screen)
	clock    clock.Clock
	redact   func(string) string
}

func (c VisionConfig) check() (*vision, error) {
	if c.Model == nil {
		return nil, fault.Usage(fault.CodeInvalidProviderOptions, "the vision provider needs a model")
	}
	if c.Preflight == nil || c.Preflight.Profile == nil {
		return nil, fault.Usage(fault.CodeVisionPreflightMissing, "the vision provider needs a passed planner preflight (planner-check) before the phone is used")
	}
	v := &vision{model: c.Model, profile: c.Preflight.Profile, runtime: c.Runtime, onScreen: c.OnScreen, clock: clock.Or(c.Clock)}
	hide := c.Runtime.Redact
	if hide == nil {
		hide = redact.New().Text
	}
	v.redact = hide
	if hm, ok := c.Model.(*chat.Client); ok {
		mc := hm.Config()
		v.info = mc.Info()
		v.redact = func(s string) string { return mc.APIKey.Redact(hide(s)) }
	}
	v.runtime.Redact, v.runtime.Clock = v.redact, v.clock
	v.runtime.Preflight = nil
	return v, nil
}

// tree is x as evidence (evidenceTree: never an error) with every string
// redacted.
func (v *vision) tree(x any) any { return redact.Walk(evidenceTree(x), v.redact) }

// visionProvider decides explore steps with the pure-vision planner: each
// explore step is one planner task whose goal is the step's goal, whose
// memory and coordinate contract last for the step, and whose plans are
// bounded by the step's budget. The model sees only the goal and the
// observation's screenshot; its point is hit-tested to a nodeId of the
// observation on the host; an action outside the step's allowedActions is
// refused back to the planner (it spends a plan and never reaches the
// device). done means the isolated completion review confirmed the goal
// on the screenshot; a review that cannot tell, a human needed, or a
// planner that gives up is blocked. Every model exchange and the
// coordinate profile are in each decision's modelReceipt, and the planner's
// trajectory.json and screens/ are kept in the segment's directory.
type visionProvider struct {
	v *vision

	mu   sync.Mutex
	step *visionStep
}

// visionStep is the planner task of one explore step.
type visionStep struct {
	key     string
	planner *agentloop.Planner
	nodes   agentdevice.NodeMapper
	dir     string
	screens *agentloop.ScreenDir
	acted   bool
	// failed is the error that ended the planner task (its model failed):
	// every later decision of the step gets it again, so a fallback
	// provider keeps answering.
	failed error
}

// NewVisionProvider returns the provider. It reads the screenshots of the
// observations it decides on through the session of each decision's
// context, so it can be built before the phone is reached.
func NewVisionProvider(cfg VisionConfig) (*visionProvider, error) {
	v, err := cfg.check()
	if err != nil {
		return nil, err
	}
	return &visionProvider{v: v}, nil
}

// Decide plans one decision on in's observation.
func (p *visionProvider) Decide(ctx context.Context, in DecisionContext) (map[string]any, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, err := p.stepFor(in)
	if err != nil {
		return nil, err
	}
	if s.failed != nil {
		return nil, s.failed
	}
	screen, err := p.screenshot(ctx, in)
	if err != nil {
		return nil, err
	}
	if s.screens != nil {
		s.screens.Save(screen)
	}
	if p.v.onScreen != nil {
		p.v.onScreen(screen)
	}
	var last *agentloop.Feedback
	if s.acted {
		// The engine asks again only after the action succeeded.
		last = &agentloop.Feedback{Sent: true, Succeeded: true}
	}
	s.acted = false
	prop, err := s.planner.Propose(ctx, screen, last, func(cmd agentloop.Command) (agentloop.DeviceAction, error) {
		ta, err := s.nodes.MapJSON(cmd, in.Observation)
		return ta.DeviceAction(), err
	})
	keepErr := p.keep(s)
	if err != nil {
		if ctx.Err() != nil {
			return nil, visionInterrupted(ctx.Err())
		}
		return nil, fault.Wrap(fault.Internal, fault.CodeVisionPlannerFailed, "the vision planner failed", err)
	}
	return p.decision(s, prop, keepErr)
}

// stepFor returns the planner task of in's explore step, starting one for
// a new step (a new session, scenario or step, or its first decision).
func (p *visionProvider) stepFor(in DecisionContext) (*visionStep, error) {
	key := in.SessionID + "\x00" + in.ScenarioID + "\x00" + in.StepID
	if p.step != nil && p.step.key == key && in.StepIndex > 0 {
		return p.step, nil
	}
	// Every plan, a refused one included, spends one of the step's
	// decisions: maxSteps actions and a final done.
	task := agentloop.Task{Goal: in.Goal, MaxSteps: int(max(in.Budget.MaxSteps, 1)) + 1,
		MaxDuration: time.Duration(in.Budget.MaxDurationMs) * time.Millisecond}
	pl, err := agentloop.NewPlanner(p.v.model, agentdevice.Capabilities{}, p.v.runtime, task, p.v.profile)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, fault.CodeVisionPlannerFailed, "the vision planner cannot start this explore step", err)
	}
	s := &visionStep{key: key, planner: pl, nodes: agentdevice.NodeMapper{Allowed: append([]string{}, in.AllowedActions...)}, dir: in.EvidenceDir}
	if s.dir != "" {
		// Without pictures the timeline still has the trajectory.
		s.screens, _ = agentloop.NewScreenDir(filepath.Join(s.dir, plannerScreens))
	}
	p.step = s
	return s, nil
}

// screenshot reads the observation's screenshot through the session.
func (p *visionProvider) screenshot(ctx context.Context, in DecisionContext) (*agentloop.Screen, error) {
	f, err := os.CreateTemp("", "solopi-vision-*.png")
	if err != nil {
		return nil, fault.Wrap(fault.Internal, fault.CodeVisionScreenshotFailed, "cannot make a file for the observation's screenshot", err)
	}
	name := f.Name()
	_ = f.Close()
	defer os.Remove(name)
	if in.Session == nil {
		return nil, fault.New(fault.Internal, fault.CodeVisionScreenshotFailed, "the decision context has no Agent session to read the screenshot through")
	}
	if err := in.Session.Screenshot(ctx, SessionRef{SessionID: in.SessionID}, in.Observation, name); err != nil {
		if fault.IsInterrupt(err) || ctx.Err() != nil {
			return nil, visionInterrupted(err)
		}
		return nil, providerError(fault.CodeVisionScreenshotFailed, "cannot read the observation's screenshot", false, err)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, providerError(fault.CodeVisionScreenshotFailed, "cannot read the observation's screenshot", false, err)
	}
	screen, err := agentloop.NewScreen(b, p.v.clock.Now())
	if err != nil {
		return nil, providerError(fault.CodeVisionScreenshotFailed, "the observation's screenshot is not a usable PNG", false, err)
	}
	screen.Ref, _ = in.Observation["observationId"].(string)
	return screen, nil
}

// keep writes the step's trajectory so far beside its screenshots.
func (p *visionProvider) keep(s *visionStep) error {
	if s.dir == "" {
		return nil
	}
	if err := agentloop.WriteTrajectory(filepath.Join(s.dir, plannerTrajectory), s.planner.Trajectory(p.v.info)); err != nil {
		return err
	}
	if s.screens != nil {
		return s.screens.Err()
	}
	return nil
}

// decision turns a proposal into a decision object. A planner that could
// not work (the model failed, the contract broke) is an error, not a
// decision: the segment is not_tested, model_decision_failed.
func (p *visionProvider) decision(s *visionStep, prop *agentloop.Proposal, keepErr error) (map[string]any, error) {
	receipt := map[string]any{
		"provider": ProviderVision, "model": p.v.info, "coordinateProfile": s.planner.Profile(), "plannerStep": s.planner.State().Step(),
		"events": plannerEvents(prop.Events),
	}
	if keepErr != nil {
		receipt["evidenceError"] = keepErr.Error()
	}
	var dec map[string]any
	switch prop.Kind {
	case agentloop.ProposeAct:
		receipt["call"], receipt["action"], receipt["command"] = prop.Action.Canonical(), prop.Action.Fields(), prop.Command
		dec = map[string]any{"type": decisionAct, "action": decisionAction(*prop.DeviceAction)}
		s.acted = true
	case agentloop.ProposeDone:
		dec = map[string]any{"type": decisionDone, "reason": prop.Reason}
	default:
		res := prop.Result
		receipt["outcome"] = res.Outcome
		switch res.Outcome {
		case agentloop.OutcomeCancelled:
			return nil, visionInterrupted(errors.New(res.Message))
		case agentloop.OutcomeModelError, agentloop.OutcomeProtocolError, agentloop.OutcomeCalibration, agentloop.OutcomeDeviceError:
			code := res.ErrorCode
			if code == "" {
				code = fault.CodeVisionPlannerFailed
			}
			// An unreachable model may hand over to a fallback provider;
			// a model that answered wrongly may not.
			eligible := res.Outcome == agentloop.OutcomeModelError
			s.failed = providerError(code, p.v.redact("the vision planner ended "+res.Outcome+": "+res.Message), eligible, nil)
			return nil, s.failed
		}
		dec = map[string]any{"type": decisionBlocked, "reason": prop.Reason}
	}
	dec["modelReceipt"] = p.v.tree(receipt)
	if r, ok := dec["reason"].(string); ok {
		dec["reason"] = p.v.redact(r)
	}
	return dec, nil
}

// plannerEvents are the events a receipt keeps: all but phase changes,
// which the trajectory has.
func plannerEvents(evs []agentloop.AgentEvent) []agentloop.AgentEvent {
	out := make([]agentloop.AgentEvent, 0, len(evs))
	for _, e := range evs {
		if e.Type != agentloop.EvPhaseChange {
			out = append(out, e)
		}
	}
	return out
}

// decisionAction is a typed action as a decision's action object: the
// target by its nodeId, each argument under its requirement name (the
// names the Agent device records its typed arguments under).
func decisionAction(da agentloop.DeviceAction) map[string]any {
	a := map[string]any{"type": da.Action}
	maps.Copy(a, da.Args)
	return a
}

// visionInterrupted is the run's cancellation as the engine expects it.
func visionInterrupted(cause error) error {
	return fault.Wrap(fault.Interrupted, fault.CodeInterrupted, "interrupted while the vision planner decided", cause)
}

package agentloop

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
)

// Run outcomes and their exit codes (agent-run): 0 completed and reviewed;
// 2 not completed or blocked; 4 model or device protocol error; 124 the
// task's max duration; 130 cancelled.
const (
	OutcomeCompleted      = "completed"
	OutcomeNotCompleted   = "not_completed"
	OutcomeBlocked        = "blocked"
	OutcomeMaxSteps       = "max_steps_exceeded"
	OutcomeMaxDuration    = "max_duration_exceeded"
	OutcomeCancelled      = "cancelled"
	OutcomeProtocolError  = "model_protocol_error"
	OutcomeModelError     = "model_error"
	OutcomeDeviceError    = "device_error"
	OutcomeCalibration    = "calibration_failed"
	OutcomeRepeatedAction = "repeated_action_loop"
)

// OutcomeExit maps an outcome to the process exit code.
func OutcomeExit(o string) int {
	switch o {
	case OutcomeCompleted:
		return 0
	case OutcomeNotCompleted, OutcomeBlocked, OutcomeMaxSteps, OutcomeRepeatedAction:
		return 2
	case OutcomeMaxDuration:
		return 124
	case OutcomeCancelled:
		return 130
	}
	return 4
}

// Errors of the runtime API.
var (
	ErrBusy         = errors.New("agent_busy: this agent is already running a task")
	ErrGoalChanged  = errors.New("task_goal_changed: an unfinished task cannot silently change its goal")
	ErrTaskFinished = errors.New("task_finished: the task already reached a terminal phase")
	ErrNoGoal       = errors.New("missing_goal: the task needs a goal")
)

// Config configures a PhoneAgent.
type Config struct {
	Space        coord.Space
	Policy       coord.ResizePolicy
	ProfileKey   ProfileKey
	CacheDir     string
	Recalibrate  bool
	SettleDelay  time.Duration
	Rechecks     int
	RecheckDelay time.Duration
	// HardBudget bounds each hard failure class; SoftBudget bounds
	// consecutive failed completion reviews.
	HardBudget int
	SoftBudget int
	// RepeatLimit is how many identical dispatched actions without any
	// visible effect are tolerated before a human is asked.
	RepeatLimit int
	Confirmer   Confirmer
	// Preflight, when set, is the endpoint preflight this run follows:
	// its coordinate profile is used as frozen (nothing is negotiated
	// again) and its events and metrics open the run's audit trail.
	Preflight *PreflightReport
	OnEvent   func(AgentEvent)
	// Redact removes secrets from every event (the API key).
	Redact func(string) string
	Now    func() time.Time
}

func (c *Config) defaults() {
	if c.Space == "" {
		c.Space = coord.SpaceAuto
	}
	if c.Policy == (coord.ResizePolicy{}) {
		c.Policy = coord.DefaultResizePolicy()
	}
	if c.Rechecks == 0 {
		c.Rechecks = DefaultFreshRechecks
	}
	if c.RecheckDelay == 0 {
		c.RecheckDelay = DefaultRecheckDelay
	}
	if c.HardBudget <= 0 {
		c.HardBudget = 3
	}
	if c.SoftBudget <= 0 {
		c.SoftBudget = 3
	}
	if c.RepeatLimit <= 0 {
		c.RepeatLimit = 3
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Redact == nil {
		c.Redact = func(s string) string { return s }
	}
}

// Task is one goal with its limits. Run and Step share them.
type Task struct {
	Goal        string
	MaxSteps    int
	MaxDuration time.Duration
}

// Result is the end of a task.
type Result struct {
	RunID        string       `json:"run_id"`
	Outcome      string       `json:"outcome"`
	Success      bool         `json:"success"`
	Message      string       `json:"message"`
	Exit         int          `json:"exit"`
	Phase        Phase        `json:"phase"`
	Steps        int          `json:"steps"`
	Counters     Counters     `json:"counters"`
	Metrics      Metrics      `json:"metrics"`
	Profile      *Profile     `json:"coordinate_profile,omitempty"`
	Frame        *coord.Frame `json:"frame,omitempty"`
	StartedAt    time.Time    `json:"started_at"`
	FinishedAt   time.Time    `json:"finished_at"`
	Goal         string       `json:"task"`
	DeviceMode   string       `json:"device_mode"`
	ErrorCode    string       `json:"error_code,omitempty"`
	ErrorMessage string       `json:"error_message,omitempty"`
}

// StepResult is what one Step did.
type StepResult struct {
	Step     int            `json:"step"`
	Phase    Phase          `json:"phase"`
	Action   *action.Action `json:"action,omitempty"`
	Terminal bool           `json:"terminal"`
	Result   *Result        `json:"result,omitempty"`
}

// PhoneAgent orchestrates one device and one model. It runs one task at a
// time; Run and Step share the task's goal, limits, cancellation and
// terminal semantics.
type PhoneAgent struct {
	cfg   Config
	dev   Device
	model chat.Model

	busy sync.Mutex
	mu   sync.Mutex
	task *taskRun
}

// New returns an agent over dev and model.
func New(cfg Config, dev Device, model chat.Model) (*PhoneAgent, error) {
	if dev == nil || model == nil {
		return nil, errors.New("agentloop: a device and a model are required")
	}
	cfg.defaults()
	return &PhoneAgent{cfg: cfg, dev: dev, model: model}, nil
}

// State is the current task's state (nil before the first task).
func (a *PhoneAgent) State() *AgentState {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.task == nil {
		return nil
	}
	return a.task.st
}

// Run executes the task to a terminal phase. The error is non-nil only for
// API misuse (busy, changed goal); every task outcome is in the Result.
func (a *PhoneAgent) Run(ctx context.Context, t Task) (*Result, error) {
	if !a.busy.TryLock() {
		return nil, ErrBusy
	}
	defer a.busy.Unlock()
	r, err := a.begin(t)
	if err != nil {
		return nil, err
	}
	for r.result == nil {
		r.step(ctx)
	}
	return r.result, nil
}

// Step runs one step of the task, starting it on the first call. An
// unfinished task keeps its goal: a Step with another goal is refused.
func (a *PhoneAgent) Step(ctx context.Context, t Task) (*StepResult, error) {
	if !a.busy.TryLock() {
		return nil, ErrBusy
	}
	defer a.busy.Unlock()
	r, err := a.begin(t)
	if err != nil {
		return nil, err
	}
	if r.result != nil {
		return nil, ErrTaskFinished
	}
	act := r.step(ctx)
	sr := &StepResult{Step: r.st.Step(), Phase: r.st.Phase(), Action: act, Terminal: r.result != nil, Result: r.result}
	return sr, nil
}

// Reset forgets a finished task so the agent can take another.
func (a *PhoneAgent) Reset() error {
	if !a.busy.TryLock() {
		return ErrBusy
	}
	defer a.busy.Unlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.task != nil && a.task.result == nil {
		return fmt.Errorf("task_unfinished: the current task has not reached a terminal phase")
	}
	a.task = nil
	return nil
}

func (a *PhoneAgent) begin(t Task) (*taskRun, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.task != nil {
		if t.Goal != "" && t.Goal != a.task.goal {
			if a.task.result == nil {
				return nil, ErrGoalChanged
			}
			return nil, ErrTaskFinished
		}
		return a.task, nil
	}
	if strings.TrimSpace(t.Goal) == "" {
		return nil, ErrNoGoal
	}
	if t.MaxSteps <= 0 {
		t.MaxSteps = 30
	}
	if t.MaxDuration <= 0 {
		t.MaxDuration = 10 * time.Minute
	}
	now := a.cfg.Now()
	r := &taskRun{
		a: a, goal: t.Goal, maxSteps: t.MaxSteps, started: now, deadline: now.Add(t.MaxDuration),
		runID: newRunID(now), risk: ClassifyTask(t.Goal),
	}
	r.st = newAgentState(a.cfg.Now, a.cfg.Redact, a.cfg.OnEvent)
	if pf := a.cfg.Preflight; pf != nil {
		r.st.absorb(pf)
		r.profile = pf.Profile
	}
	r.mem.goal = t.Goal
	r.st.emit(EvStart, "task started", map[string]any{
		"run_id": r.runID, "task": t.Goal, "max_steps": t.MaxSteps, "max_duration_seconds": t.MaxDuration.Seconds(),
		"device_mode": a.dev.Mode(), "coordinate_space": string(a.cfg.Space), "resize_policy": a.cfg.Policy.String(),
		"task_risk": map[string]any{"classes": r.risk.Classes, "forbidden_effects": r.risk.Forbidden},
	})
	r.st.setPhase(PhaseObserving, "task started")
	a.task = r
	return r, nil
}

func newRunID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// taskRun is the working state of one task; AgentState holds its phase.
type taskRun struct {
	a        *PhoneAgent
	goal     string
	maxSteps int
	started  time.Time
	deadline time.Time
	runID    string
	risk     TaskRisk
	st       *AgentState
	mem      memory
	profile  *Profile
	frame    *coord.Frame
	// pending is the newest trusted observation (after an action, a stale
	// cancel or a zero-touch rejection); the next step plans on it.
	pending *Screen
	planned *Command
	// freshScreen replaces the device observation of the completion
	// review where the caller owns observation (the decision provider).
	freshScreen func(context.Context) (*Screen, error)
	// blockUncertain ends the task blocked when the completion review
	// cannot tell (a caller that owns the device, like verify-run, gives
	// up instead of replanning on a screen that cannot show the answer).
	blockUncertain bool
	// stepCtx is the running step's context (bounded by the deadline).
	stepCtx     context.Context
	repeatSig   string
	repeatCount int
	// uncertainSig is a high-consequence action dispatched without any
	// visible effect; repeating it asks a human again.
	uncertainSig string
	result       *Result
}

func (r *taskRun) finish(outcome, msg string, err error) {
	if r.result != nil {
		return
	}
	phase := map[string]Phase{
		OutcomeCompleted: PhaseSucceeded, OutcomeNotCompleted: PhaseNotCompleted, OutcomeBlocked: PhaseBlocked,
		OutcomeMaxSteps: PhaseNotCompleted, OutcomeRepeatedAction: PhaseBlocked, OutcomeCancelled: PhaseCancelled,
	}[outcome]
	if phase == "" {
		phase = PhaseFailed
	}
	res := &Result{
		RunID: r.runID, Outcome: outcome, Success: outcome == OutcomeCompleted, Message: r.a.cfg.Redact(msg),
		Exit: OutcomeExit(outcome), Phase: phase, Goal: r.goal, DeviceMode: r.a.dev.Mode(),
		StartedAt: r.started.UTC(), Profile: r.profile, Frame: r.frame,
	}
	if err != nil {
		res.ErrorCode, res.ErrorMessage = errorCode(err), r.a.cfg.Redact(err.Error())
	}
	r.st.setPhase(phase, "task "+outcome)
	payload := map[string]any{"outcome": outcome, "success": res.Success, "message": res.Message, "exit": res.Exit}
	if res.ErrorCode != "" {
		payload["error_code"] = res.ErrorCode
	}
	r.st.emit(EvFinish, "task "+outcome, payload)
	res.Steps = r.st.Step()
	res.Counters = r.st.Counters()
	res.Metrics = r.st.Metrics()
	res.FinishedAt = r.a.cfg.Now().UTC()
	r.result = res
}

// stepContext bounds a step by the task deadline and tells the task's own
// deadline apart from the caller's cancellation. The time left is read on
// the task's clock (Config.Now), which set the deadline: a context
// deadline would compare it with the system clock.
func (r *taskRun) stepContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.deadline.Sub(r.a.cfg.Now()))
}

// interrupted turns a context error into the right terminal outcome: the
// caller's cancellation (130) or deadline, or the task's own max duration
// (124). Other errors are left to recovery.
func (r *taskRun) interrupted(parent context.Context, err error) bool {
	if err == nil {
		return false
	}
	switch {
	case parent.Err() != nil:
		if errors.Is(parent.Err(), context.DeadlineExceeded) {
			r.finish(OutcomeMaxDuration, "the caller's deadline passed", parent.Err())
		} else {
			r.finish(OutcomeCancelled, "the task was cancelled", parent.Err())
		}
		return true
	case r.stepCtx != nil && r.stepCtx.Err() != nil:
		r.finish(OutcomeMaxDuration, "the task's max duration passed", r.stepCtx.Err())
		return true
	}
	return false
}

// step runs one observe → plan → act → verify cycle and returns the
// action it planned (nil when none). Every recoverable path ends in
// PhaseObserving.
func (r *taskRun) step(parent context.Context) *action.Action {
	ctx, cancel := r.stepContext(parent)
	defer cancel()
	r.stepCtx = ctx
	defer func() { r.stepCtx = nil }()
	if err := ctx.Err(); err != nil {
		if !r.interrupted(parent, err) {
			r.finish(OutcomeMaxDuration, "the task's max duration passed", err)
		}
		return nil
	}
	if !r.beginStep() {
		return nil
	}
	st := r.st
	st.setPhase(PhaseObserving, "observe the screen")
	screen := r.pending
	r.pending = nil
	if screen == nil {
		var err error
		screen, err = r.a.dev.Observe(ctx)
		if err != nil {
			if r.interrupted(parent, err) {
				return nil
			}
			r.hardFailure(FailObservation, "", err)
			return nil
		}
	}
	st.emit(EvObservation, "screen observed", map[string]any{
		"screenshot_sha256": screen.SHA256, "display_width": screen.Width(), "display_height": screen.Height(), "device_ref": screen.Ref,
	})
	act := r.planStep(ctx, parent, screen)
	if r.planned == nil || r.result != nil {
		return act
	}
	cmd := *r.planned
	r.planned = nil
	r.execute(ctx, parent, *act, cmd, screen)
	return act
}

// beginStep counts a step against the task's limit.
func (r *taskRun) beginStep() bool {
	if r.st.Step() >= r.maxSteps {
		r.finish(OutcomeMaxSteps, fmt.Sprintf("the task did not finish within %d steps", r.maxSteps), nil)
		return false
	}
	r.st.nextStep()
	return true
}

// planStep is the planning half of a step, shared with the decision
// provider: contract, context, model, parse/validate/map, non-device
// actions, reviews and the repeat guard. It leaves r.planned set when a
// device command is cleared for the precondition check and dispatch.
func (r *taskRun) planStep(ctx, parent context.Context, screen *Screen) *action.Action {
	cfg := &r.a.cfg
	st := r.st
	step := st.Step()
	r.planned = nil
	if screen.Unobservable() {
		r.askHuman(ctx, parent, "the screen is black or protected and cannot be observed", action.Action{Name: action.TakeOver})
		return nil
	}

	// Contract: negotiated or loaded once, before the first plan.
	if r.profile == nil {
		st.setPhase(PhaseCalibrating, "resolve the coordinate contract")
		cal := &Calibrator{Model: r.a.model, Key: cfg.ProfileKey, Policy: cfg.Policy, CacheDir: cfg.CacheDir, Refresh: cfg.Recalibrate, Now: cfg.Now, state: st}
		p, err := cal.Resolve(ctx, cfg.Space, screen.Width(), screen.Height())
		if err != nil {
			if r.interrupted(parent, err) {
				return nil
			}
			var ce *CalibrationError
			if errors.As(err, &ce) {
				r.finish(OutcomeCalibration, "no coordinate contract could be frozen; nothing was dispatched", err)
			} else {
				r.finish(OutcomeModelError, "the model failed during calibration", err)
			}
			return nil
		}
		r.profile = p
	}
	frame := screen.Frame(cfg.Policy)
	r.frame = &frame
	contract := coord.Contract{Space: r.profile.Space, Frame: frame}

	// Plan, with one same-step protocol retry.
	st.setPhase(PhasePlanning, "ask the model for one action")
	img, err := screen.ModelImage(cfg.Policy, chat.ImageEncodingOf(r.a.model))
	if err != nil {
		r.finish(OutcomeDeviceError, "the screenshot cannot be prepared for the model", err)
		return nil
	}
	req := r.mem.planRequest(cfg.Now(), step, contract, img, r.a.modelBudget(), nil, "")
	resp, err := st.chat(ctx, r.a.model, req)
	if err != nil {
		if r.interrupted(parent, err) {
			return nil
		}
		r.hardFailure(FailModel, "", err)
		return nil
	}
	parsed, perrv := action.Parse(resp.Content, resp.Reasoning, contract.ParseOptions(r.goal))
	if perrv != nil {
		pe := asProtocolError(perrv)
		st.emit(EvProtocolRetry, "protocol retry on the same screenshot", map[string]any{"code": pe.Code, "message": pe.Message, "command_dispatched": false})
		retry := r.mem.planRequest(cfg.Now(), step, contract, img, r.a.modelBudget(), pe, resp.Content)
		resp, err = st.chat(ctx, r.a.model, retry)
		if err != nil {
			if r.interrupted(parent, err) {
				return nil
			}
			r.hardFailure(FailModel, "", err)
			return nil
		}
		parsed, perrv = action.Parse(resp.Content, resp.Reasoning, contract.ParseOptions(r.goal))
		if perrv != nil {
			pe = asProtocolError(perrv)
			st.emit(EvProtocolReject, "the model's answer was rejected twice; nothing was dispatched", map[string]any{"code": pe.Code, "message": pe.Message, "command_dispatched": false})
			st.count(func(c *Counters) { c.ProtocolErrors++ })
			r.mem.addRejection(step, action.Action{Name: "invalid output"}, pe.Code, pe.Message)
			r.pending = screen
			r.hardFailure(FailProtocol, "", pe)
			return nil
		}
	}
	act := parsed.Action
	actPayload := map[string]any{"action": act.Fields(), "call": act.Canonical(), "reasoning_chars": len([]rune(parsed.Reasoning)),
		"coordinate_space": string(contract.Space), "frame": frame}
	cmd := Command{Action: act.Name, Duration: act.Duration}
	if act.Text != nil {
		cmd.Text = *act.Text
	}
	fields := map[string]any{}
	actPayload["fields"] = fields
	mapErr := func() error {
		for _, pair := range []struct {
			src *action.Point
			dst **coord.MappedPoint
			key string
		}{{act.Element, &cmd.Point, "element"}, {act.Start, &cmd.Start, "start"}, {act.End, &cmd.End, "end"}} {
			if pair.src == nil {
				continue
			}
			mp, err := contract.Map(*pair.src)
			if err != nil {
				return err
			}
			*pair.dst = &mp
			fields[pair.key] = mp
		}
		return nil
	}()
	st.emit(EvAction, "model proposed "+act.Name, actPayload)
	if mapErr != nil {
		ce := mapErr.(*coord.Error)
		r.reject(step, act, ce.Code, ce.Message, SoftRejected, screen)
		return &act
	}

	switch act.Name {
	case action.Finish:
		r.handleFinish(ctx, parent, step, act)
		return &act
	case action.Note:
		note := *act.Message
		r.mem.notes = append(r.mem.notes, note)
		st.emit(EvNote, "note saved", map[string]any{"message": note, "command_dispatched": false})
		r.mem.addTurn(step, act, map[string]any{"command_dispatched": false, "note_saved": true})
		r.pending = screen
		st.setPhase(PhaseObserving, "note saved")
		return &act
	case action.TakeOver, action.Interact:
		msg := "the model asked for a human"
		if act.Message != nil {
			msg = *act.Message
		}
		r.askHuman(ctx, parent, msg, act)
		return &act
	}
	if ok, note := r.a.dev.Supports(act.Name); !ok {
		r.reject(step, act, CodeUnsupported, note, SoftUnmappable, screen)
		return &act
	}

	// Reviews: explicit negative boundaries block with zero touch; high-
	// consequence actions get an isolated visual risk review.
	if (r.risk.High() || actionSensitive(act)) && act.Name != action.Wait {
		st.setPhase(PhaseReviewing, "risk review")
		if eff := boundaryConflict(r.risk, act); eff != "" {
			st.emit(EvRiskReview, "blocked by the task's negative boundary", map[string]any{"verdict": RiskBlock, "forbidden_effect": eff, "deterministic": true, "command_dispatched": false})
			r.reject(step, act, "negative_boundary", "the user forbade the effect '"+eff+"' and the action's reason names it", SoftRejected, screen)
			return &act
		}
		verdict, why, err := r.riskReview(ctx, act, cmd, img)
		if err != nil {
			if r.interrupted(parent, err) {
				return &act
			}
			r.hardFailure(FailModel, "", err)
			return &act
		}
		if verdict == RiskAllow && actionSignature(act, cmd) == r.uncertainSig {
			// The same high-consequence action was dispatched before and
			// nothing visibly happened: repeating it needs a human again.
			verdict, why = RiskConfirm, "the same high-consequence action showed no visible effect last time; confirm before repeating it"
		}
		st.emit(EvRiskReview, "risk review: "+verdict, map[string]any{"verdict": verdict, "message": why, "task_risk": r.risk.Classes})
		switch verdict {
		case RiskBlock:
			r.reject(step, act, "risk_review_blocked", why, SoftRejected, screen)
			return &act
		case RiskConfirm:
			st.setPhase(PhaseConfirming, "ask a human to confirm")
			if cfg.Confirmer == nil {
				st.emit(EvConfirmation, "confirmation required but no human is available", map[string]any{"approved": false, "interactive": false})
				r.finish(OutcomeBlocked, "the action needs human confirmation and the run is not interactive: "+why, nil)
				return &act
			}
			ok, err := cfg.Confirmer.Confirm(ctx, fmt.Sprintf("%s (%s)", act.Name, why))
			if err != nil {
				if r.interrupted(parent, err) {
					return &act
				}
				r.finish(OutcomeBlocked, "the confirmation prompt failed", err)
				return &act
			}
			st.emit(EvConfirmation, "human answered", map[string]any{"approved": ok, "interactive": true})
			if !ok {
				r.reject(step, act, "human_declined", "the user declined this action", SoftRejected, screen)
				return &act
			}
		}
	}

	// Repeated identical dispatches without any visible effect.
	sig := actionSignature(act, cmd)
	if sig == r.repeatSig && r.repeatCount >= cfg.RepeatLimit {
		st.emit(EvRecovery, "the same action had no visible effect repeatedly", map[string]any{"outcome": string(RecoverTakeover), "repeats": r.repeatCount})
		r.askHuman(ctx, parent, "the same action keeps having no visible effect", action.Action{Name: action.TakeOver})
		if r.result != nil && r.result.Outcome == OutcomeBlocked {
			r.result.Outcome, r.result.Exit = OutcomeRepeatedAction, OutcomeExit(OutcomeRepeatedAction)
		}
		return &act
	}
	r.planned = &cmd
	return &act
}

func (a *PhoneAgent) modelBudget() int {
	if b, ok := a.model.(interface{ InputTokenBudget() int }); ok {
		return b.InputTokenBudget()
	}
	return 0
}

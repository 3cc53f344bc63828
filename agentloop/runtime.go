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

// Errors of the runtime API.
var (
	errBusy         = errors.New("agent_busy: this agent is already running a task")
	errGoalChanged  = errors.New("task_goal_changed: an unfinished task cannot silently change its goal")
	errTaskFinished = errors.New("task_finished: the task already reached a terminal phase")
	errNoGoal       = errors.New("missing_goal: the task needs a goal")
)

// phoneAgent orchestrates one device and one model. It runs one task at a
// time; Run and Step share the task's goal, limits, cancellation and
// terminal semantics.
type phoneAgent struct {
	cfg   Config
	dev   Device
	model chat.Model

	busy sync.Mutex
	mu   sync.Mutex
	task *taskRun
}

// New returns an agent over dev and model.
func New(cfg Config, dev Device, model chat.Model) (*phoneAgent, error) {
	if dev == nil || model == nil {
		return nil, errors.New("agentloop: a device and a model are required")
	}
	cfg.defaults()
	return &phoneAgent{cfg: cfg, dev: dev, model: model}, nil
}

// State is the current task's state (nil before the first task).
func (a *phoneAgent) State() *agentState {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.task == nil {
		return nil
	}
	return a.task.st
}

// Run executes the task to a terminal phase. The error is non-nil only for
// API misuse (busy, changed goal); every task outcome is in the Result.
func (a *phoneAgent) Run(ctx context.Context, t Task) (*Result, error) {
	if !a.busy.TryLock() {
		return nil, errBusy
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
func (a *phoneAgent) Step(ctx context.Context, t Task) (*stepResult, error) {
	if !a.busy.TryLock() {
		return nil, errBusy
	}
	defer a.busy.Unlock()
	r, err := a.begin(t)
	if err != nil {
		return nil, err
	}
	if r.result != nil {
		return nil, errTaskFinished
	}
	act := r.step(ctx)
	sr := &stepResult{Step: r.st.Step(), Phase: r.st.Phase(), Action: act, Terminal: r.result != nil, Result: r.result}
	return sr, nil
}

// Reset forgets a finished task so the agent can take another.
func (a *phoneAgent) Reset() error {
	if !a.busy.TryLock() {
		return errBusy
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

func (a *phoneAgent) begin(t Task) (*taskRun, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.task != nil {
		if t.Goal != "" && t.Goal != a.task.goal {
			if a.task.result == nil {
				return nil, errGoalChanged
			}
			return nil, errTaskFinished
		}
		return a.task, nil
	}
	if strings.TrimSpace(t.Goal) == "" {
		return nil, errNoGoal
	}
	if t.MaxSteps <= 0 {
		t.MaxSteps = 30
	}
	if t.MaxDuration <= 0 {
		t.MaxDuration = 10 * time.Minute
	}
	now := a.cfg.Clock.Now()
	r := &taskRun{
		a: a, goal: t.Goal, maxSteps: t.MaxSteps, started: now, deadline: now.Add(t.MaxDuration),
		runID: newRunID(now), risk: classifyTask(t.Goal),
	}
	r.st = newAgentState(a.cfg.Clock.Now, a.cfg.Redact, a.cfg.OnEvent)
	if pf := a.cfg.Preflight; pf != nil {
		r.st.absorb(pf)
		r.profile = pf.Profile
	}
	r.mem.goal = t.Goal
	r.st.emit(evStart, "task started", map[string]any{
		"run_id": r.runID, "task": t.Goal, "max_steps": t.MaxSteps, "max_duration_seconds": t.MaxDuration.Seconds(),
		"device_mode": a.dev.Mode(), "coordinate_space": string(a.cfg.Space), "resize_policy": a.cfg.Policy.String(),
		"task_risk": map[string]any{"classes": r.risk.Classes, "forbidden_effects": r.risk.Forbidden},
	})
	r.st.setPhase(phaseObserving, "task started")
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
	a        *phoneAgent
	goal     string
	maxSteps int
	started  time.Time
	deadline time.Time
	runID    string
	risk     taskRisk
	st       *agentState
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
	phase := map[string]phase{
		OutcomeCompleted: phaseSucceeded, outcomeNotCompleted: phaseNotCompleted, OutcomeBlocked: phaseBlocked,
		outcomeMaxSteps: phaseNotCompleted, outcomeRepeatedAction: phaseBlocked, OutcomeCancelled: phaseCancelled,
	}[outcome]
	if phase == "" {
		phase = phaseFailed
	}
	res := &Result{
		RunID: r.runID, Outcome: outcome, Success: outcome == OutcomeCompleted, Message: r.a.cfg.Redact(msg),
		Exit: exitCode(outcome), Phase: phase, Goal: r.goal, DeviceMode: r.a.dev.Mode(),
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
	res.FinishedAt = r.a.cfg.Clock.Now().UTC()
	r.result = res
}

// stepContext bounds a step by the task deadline and tells the task's own
// deadline apart from the caller's cancellation. The time left is read on
// the task's clock (Config.Now), which set the deadline: a context
// deadline would compare it with the system clock.
func (r *taskRun) stepContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.deadline.Sub(r.a.cfg.Clock.Now()))
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
	st.setPhase(phaseObserving, "observe the screen")
	screen := r.pending
	r.pending = nil
	if screen == nil {
		var err error
		screen, err = r.a.dev.Observe(ctx)
		if err != nil {
			if r.interrupted(parent, err) {
				return nil
			}
			r.hardFailure(failObservation, "", err)
			return nil
		}
	}
	st.emit(evObservation, "screen observed", map[string]any{
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
		r.finish(outcomeMaxSteps, fmt.Sprintf("the task did not finish within %d steps", r.maxSteps), nil)
		return false
	}
	r.st.nextStep()
	return true
}

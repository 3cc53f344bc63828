package execution

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
	"github.com/solopi-dev/solopi/verify"
)

// agentCleanupTimeout bounds ending or cancelling a session after the run's
// context was cancelled: an interrupted run still leaves the phone clean.
const agentCleanupTimeout = 20 * time.Second

// dynamic runs an explore step: start an Agent session with the step's
// budget and let the decisions drive it, at most maxSteps+1 decisions:
// done ends exploration (the oracles then judge the final observation),
// blocked gives up, act sends one typed action and the settled observation
// becomes the next one. Any refused decision, failed step or error leaves
// the segment not_tested with a reason; the session is always ended (after
// done) or cancelled, and the transcript and timeline are evidence.
func (r *run) dynamic(ctx context.Context, sc *verify.Scenario, seg *verify.Segment, tr *segmentTrace) (*verify.SegmentOutcome, error) {
	step := seg.DynamicStep
	dir, err := r.a.segmentDir(seg.ID)
	if err != nil {
		return nil, err
	}
	transcriptPath := filepath.Join(dir, "agent-transcript.json")
	var script []map[string]any
	if r.e.Provider == nil {
		script = r.e.Decisions[sc.ID][step.ID]
		if first := firstType(script); len(script) == 0 || first == decisionBlocked {
			return r.untouched(sc, step, script, transcriptPath)
		}
	}

	token := redact.NewSecret("verification-" + r.e.hex(16))
	r.a.addSecret(token.Reveal())
	d := &dyn{r: r, sc: sc, seg: seg, step: step, dir: dir, script: script, tr: tr,
		ref: SessionRef{OwnerToken: token}, terminal: "cancel",
		o:          &verify.SegmentOutcome{State: verify.NotTested, Reason: verify.ReasonCheckpointNotReached},
		transcript: map[string]any{"scenarioId": sc.ID, "stepId": step.ID, "goal": step.Goal, "allowedActions": step.AllowedActions, "events": []any{}},
	}
	runErr := d.explore(ctx)
	var interrupt error
	switch {
	case runErr == nil:
	case fault.IsInterrupt(runErr) || ctx.Err() != nil:
		interrupt = fault.Wrap(fault.Interrupted, fault.CodeInterrupted, "the verification run was interrupted", runErr)
		d.event(map[string]any{"type": "error", "error": fault.From(runErr).Message, "errorCode": fault.CodeInterrupted})
		d.o.Reason = verify.ReasonInterrupted
	case errors.Is(runErr, errProvider):
		d.event(map[string]any{"type": "error", "error": runErr.Error(), "errorCode": fault.CodeOf(errors.Unwrap(runErr))})
		d.o.Reason = verify.ReasonModelDecisionFailed
	default:
		d.event(map[string]any{"type": "error", "error": runErr.Error()})
		d.o.Reason = verify.ReasonAgentExecutionFailed
	}
	d.finish(ctx)
	ev, err := r.a.writeJSON(transcriptPath, d.transcript, "agent_transcript")
	if err != nil {
		return nil, err
	}
	d.o.Evidence = append(d.o.Evidence, ev)
	if d.o.Observation != nil {
		d.o.Observation = r.a.sanitize(d.o.Observation).(map[string]any)
	}
	return d.o, interrupt
}

func firstType(script []map[string]any) string {
	if len(script) == 0 {
		return ""
	}
	t, _ := script[0]["type"].(string)
	return t
}

// untouched ends a static segment without touching the phone: there are
// no decisions for it, or the first one gives up (blocked, with a reason).
func (r *run) untouched(sc *verify.Scenario, step *verify.Step, script []map[string]any, transcriptPath string) (*verify.SegmentOutcome, error) {
	reason := any(verify.ReasonCheckpointNotReached)
	decisions := []any{}
	if len(script) > 0 {
		if given, present := script[0]["reason"]; present {
			reason = given
		}
		if s, ok := reason.(string); !ok || s == "" {
			return &verify.SegmentOutcome{State: verify.NotTested, Reason: verify.ReasonAdapterError, Error: "a blocked Agent decision needs a reason"}, nil
		}
		for _, d := range script {
			decisions = append(decisions, d)
		}
	}
	ev, err := r.a.writeJSON(transcriptPath, map[string]any{
		"scenarioId": sc.ID, "stepId": step.ID, "state": verify.NotTested, "reason": reason, "decisions": decisions,
	}, "agent_transcript")
	if err != nil {
		return nil, err
	}
	return &verify.SegmentOutcome{State: verify.NotTested, Reason: verify.ReasonCheckpointNotReached, Evidence: []verify.Evidence{ev}}, nil
}

// errProvider marks a DecisionProvider failure.
var errProvider = errors.New("the decision provider failed")

// dyn is one dynamic segment in progress.
type dyn struct {
	r          *run
	sc         *verify.Scenario
	seg        *verify.Segment
	step       *verify.Step
	dir        string
	script     []map[string]any
	ref        SessionRef
	terminal   string // "end" after done, else "cancel"
	o          *verify.SegmentOutcome
	transcript map[string]any
	tr         *segmentTrace // the actions' steps (timeline.go)
}

func (d *dyn) event(e map[string]any) {
	evs, _ := d.transcript["events"].([]any)
	d.transcript["events"] = append(evs, d.r.a.sanitize(e))
}

// explore launches the app, starts the session and runs the decision
// loop; it returns an error for what aborts the segment (a refused
// decision, a provider or port failure, an interrupt).
func (d *dyn) explore(ctx context.Context) error {
	a := d.r.p.Agent
	if err := a.LaunchTarget(ctx, d.sc.TargetAppPackage); err != nil {
		if fault.IsInterrupt(err) {
			return err
		}
		d.event(map[string]any{"type": "target_app_restore_failed", "error": fault.From(err).Message})
		d.o.Reason = verify.ReasonTargetRestoreFailed
		return nil
	}
	d.event(map[string]any{"type": "target_app_restored"})
	started, err := a.Start(ctx, StartRequest{OwnerToken: d.ref.OwnerToken, Budget: d.step.Budget})
	if fault.IsInterrupt(err) {
		return err
	}
	// A session that did not start (refused, held by another owner, not
	// answered in time, the phone gone) is agent_start_failed, whatever
	// the kind of error.
	if err != nil || started == nil || started.SessionID == "" {
		result := any(nil)
		if started != nil {
			result = started.Response
		}
		if result == nil && err != nil {
			result = fault.From(err).Fields()
		}
		d.event(map[string]any{"type": "start_failed", "result": result})
		d.o.Reason = verify.ReasonAgentStartFailed
		return nil
	}
	d.ref.SessionID = started.SessionID
	if started.Observation == nil {
		d.o.Reason = verify.ReasonAgentStartContract
		return nil
	}
	obs := started.Observation
	d.o.Observation = obs
	d.transcript["sessionId"] = started.SessionID
	d.event(map[string]any{"type": "started", "observation": obs})

	// At most maxSteps+1 decisions: maxSteps actions and a final done.
decisions:
	for i := 0; i <= int(d.step.Budget.MaxSteps); i++ {
		dec, err := d.decide(ctx, i, obs)
		if err != nil {
			return err
		}
		if dec == nil {
			break // the static decisions ran out
		}
		chk, err := checkDecision(d.step, i, dec, obs)
		switch {
		case errors.Is(err, errNoObservation):
			d.o.Reason = verify.ReasonMissingObservation
			break decisions
		case err != nil:
			return err
		}
		switch chk.kind {
		case decisionDone:
			d.o.AgentDone, d.o.State, d.o.Reason, d.terminal = true, verify.StateDone, "", "end"
			d.event(map[string]any{"type": "done", "reason": dec["reason"], "decision": dec})
			break decisions
		case decisionBlocked:
			d.o.Reason = verify.ReasonCheckpointNotReached
			d.event(map[string]any{"type": "blocked", "reason": dec["reason"], "decision": dec})
			break decisions
		case decisionAct:
			req := chk.act
			req.Session = d.ref
			next, reason, err := d.act(ctx, dec, req)
			if err != nil {
				return err
			}
			if reason != "" {
				d.o.Reason = reason
				break decisions
			}
			obs = next
			d.o.Observation = obs
		}
	}
	if d.o.State == verify.StateDone {
		if err := d.reviewVision(ctx); err != nil {
			return err
		}
	}
	tl, err := a.Timeline(ctx, d.ref)
	if err != nil {
		return err
	}
	ev, err := d.r.a.writeJSON(filepath.Join(d.dir, "agent-timeline.json"), tl, "agent_timeline")
	if err != nil {
		return err
	}
	d.o.Evidence = append(d.o.Evidence, ev)
	return nil
}

// decide returns decision i: the provider's, or the next static one (nil
// when they ran out).
func (d *dyn) decide(ctx context.Context, i int, obs map[string]any) (map[string]any, error) {
	if d.r.e.Provider == nil {
		if i >= len(d.script) {
			return nil, nil
		}
		return d.script[i], nil
	}
	dec, err := d.r.e.Provider.Decide(ctx, DecisionContext{
		ScenarioID: d.sc.ID, SegmentID: d.seg.ID, StepID: d.step.ID, StepIndex: i, Goal: d.step.Goal,
		AllowedActions: d.step.AllowedActions, Observation: d.r.a.sanitize(obs).(map[string]any),
		Session: d.r.p.Agent, SessionID: d.ref.SessionID, Budget: d.step.Budget, EvidenceDir: d.dir,
	})
	if err != nil {
		if fault.IsInterrupt(err) || ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", errProvider, err)
	}
	if dec == nil {
		return nil, decisionError("the decision provider returned no object")
	}
	return dec, nil
}

// act sends a checked act decision's request. It returns the settled
// observation, or a reason the exploration stops.
func (d *dyn) act(ctx context.Context, dec map[string]any, req ActRequest) (map[string]any, string, error) {
	clk := d.r.e.Clock
	start := clk.Now().UnixMilli()
	res, err := d.r.p.Agent.Act(ctx, req)
	d.tr.steps = append(d.tr.steps, actStep(len(d.tr.steps), req, res, err, start, clk.Now().UnixMilli(), d.r.rec.StartedAt))
	var result any
	if res != nil {
		result = res.Response
	}
	if err != nil && (res == nil || fault.KindOf(err) != fault.Failed) {
		return nil, "", err
	}
	d.event(map[string]any{"type": "act", "decision": dec, "result": result})
	if err != nil || res.Status != "succeeded" {
		return nil, verify.ReasonAgentActionFailed, nil
	}
	if res.Settled == nil {
		return nil, verify.ReasonAgentSettleMissing, nil
	}
	return res.Settled, "", nil
}

// finish ends or cancels the session (with a fresh bounded context when
// the run's was cancelled); a failure to do so, a refusal included, leaves
// the segment not_tested, agent_cleanup_failed.
func (d *dyn) finish(ctx context.Context) {
	if d.ref.SessionID == "" {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), agentCleanupTimeout)
	defer cancel()
	var res map[string]any
	var err error
	if d.terminal == "end" && ctx.Err() == nil {
		res, err = d.r.p.Agent.End(cctx, d.ref)
	} else {
		d.terminal = "cancel"
		res, err = d.r.p.Agent.Cancel(cctx, d.ref)
	}
	if err != nil {
		// The device refused the end or cancel (the session had ended some
		// other way: failed, expired, lost) or could not be reached: it is
		// not known to be left as the exploration saw it.
		d.event(map[string]any{"type": "cleanup_error", "error": fault.From(err).Message, "errorCode": fault.CodeOf(err), "result": res})
		d.o.State = verify.NotTested
		if d.o.Reason != verify.ReasonInterrupted {
			d.o.Reason = verify.ReasonAgentCleanupFailed
		}
		return
	}
	d.event(map[string]any{"type": d.terminal, "result": res})
}

// reviewVision judges the segment's vision checkpoints on the final
// observation's screenshot.
func (d *dyn) reviewVision(ctx context.Context) error {
	if !d.seg.HasVision(d.sc) || d.r.e.Vision == nil {
		return nil
	}
	shot := filepath.Join(d.dir, "final-screen.png")
	if err := d.r.p.Agent.Screenshot(ctx, d.ref, d.o.Observation, shot); err != nil {
		if fault.IsInterrupt(err) {
			return err
		}
		d.event(map[string]any{"type": "screenshot_failed", "error": fault.From(err).Message})
		return nil
	}
	v, err := d.r.reviewVision(ctx, d.sc, d.seg, shot, d.dir)
	d.o.Vision = v
	return err
}

// reviewVision asks the vision judge about every vision checkpoint of a
// segment on one screenshot. A judge error makes that checkpoint
// not_tested (vision_uncertain) with the error as its detail.
func (r *run) reviewVision(ctx context.Context, sc *verify.Scenario, seg *verify.Segment, screenshot, dir string) (map[string]verify.VisionVerdict, error) {
	if r.e.Vision == nil || !seg.HasVision(sc) {
		return nil, nil
	}
	shot, err := r.a.fileEvidence(screenshot, "vision_screenshot", false)
	if err != nil {
		return nil, err
	}
	out := map[string]verify.VisionVerdict{}
	for _, id := range seg.CheckpointIDs {
		cp := sc.Checkpoint(id)
		if cp.Oracle.Vision == nil {
			continue
		}
		v, err := r.e.Vision.Review(ctx, visionRequest{
			ScenarioID: sc.ID, CheckpointID: id, Assertion: cp.Oracle.Vision.Assertion,
			Screenshot: screenshot, Evidence: r.a.dir, EvidenceDir: dir, Redactor: r.a.redactor(),
		})
		if err != nil {
			if fault.IsInterrupt(err) || ctx.Err() != nil {
				return out, err
			}
			v = verify.VisionVerdict{Status: verify.NotTested, Reason: fault.From(err).Message}
		}
		v.Evidence = append([]verify.Evidence{shot}, v.Evidence...)
		out[id] = v
	}
	return out, nil
}

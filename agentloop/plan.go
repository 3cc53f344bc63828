package agentloop

import (
	"context"
	"errors"
	"fmt"

	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/fault"
)

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
		st.setPhase(phaseCalibrating, "resolve the coordinate contract")
		cal := &calibrator{Model: r.a.model, Key: cfg.ProfileKey, Policy: cfg.Policy, CacheDir: cfg.CacheDir, Refresh: cfg.Recalibrate, Clock: cfg.Clock, state: st}
		p, err := cal.Resolve(ctx, cfg.Space, screen.Width(), screen.Height())
		if err != nil {
			if r.interrupted(parent, err) {
				return nil
			}
			var ce *calibrationError
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
	req := r.mem.planRequest(cfg.Clock.Now(), step, contract, img, r.a.modelBudget(), nil, "")
	resp, err := st.chat(ctx, r.a.model, req)
	if err != nil {
		if r.interrupted(parent, err) {
			return nil
		}
		r.hardFailure(failModel, "", err)
		return nil
	}
	parsed, perrv := action.Parse(resp.Content, resp.Reasoning, contract.ParseOptions(r.goal))
	if perrv != nil {
		pe := asProtocolError(perrv)
		st.emit(evProtocolRetry, "protocol retry on the same screenshot", map[string]any{"code": pe.Code, "message": pe.Message, "command_dispatched": false})
		retry := r.mem.planRequest(cfg.Clock.Now(), step, contract, img, r.a.modelBudget(), pe, resp.Content)
		resp, err = st.chat(ctx, r.a.model, retry)
		if err != nil {
			if r.interrupted(parent, err) {
				return nil
			}
			r.hardFailure(failModel, "", err)
			return nil
		}
		parsed, perrv = action.Parse(resp.Content, resp.Reasoning, contract.ParseOptions(r.goal))
		if perrv != nil {
			pe = asProtocolError(perrv)
			st.emit(evProtocolReject, "the model's answer was rejected twice; nothing was dispatched", map[string]any{"code": pe.Code, "message": pe.Message, "command_dispatched": false})
			st.count(func(c *Counters) { c.ProtocolErrors++ })
			r.mem.addRejection(step, action.Action{Name: "invalid output"}, pe.Code, pe.Message)
			r.pending = screen
			r.hardFailure(failProtocol, "", pe)
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
		r.reject(step, act, ce.Code, ce.Message, softRejected, screen)
		return &act
	}

	switch act.Name {
	case action.Finish:
		r.handleFinish(ctx, parent, step, act)
		return &act
	case action.Note:
		note := *act.Message
		r.mem.notes = append(r.mem.notes, note)
		st.emit(evNote, "note saved", map[string]any{"message": note, "command_dispatched": false})
		r.mem.addTurn(step, act, map[string]any{"command_dispatched": false, "note_saved": true})
		r.pending = screen
		st.setPhase(phaseObserving, "note saved")
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
		r.reject(step, act, fault.CodeUnsupportedAction, note, softUnmappable, screen)
		return &act
	}

	// Reviews: explicit negative boundaries block with zero touch; high-
	// consequence actions get an isolated visual risk review.
	if (r.risk.High() || actionSensitive(act)) && act.Name != action.Wait {
		st.setPhase(phaseReviewing, "risk review")
		if eff := boundaryConflict(r.risk, act); eff != "" {
			st.emit(EvRiskReview, "blocked by the task's negative boundary", map[string]any{"verdict": riskBlock, "forbidden_effect": eff, "deterministic": true, "command_dispatched": false})
			r.reject(step, act, "negative_boundary", "the user forbade the effect '"+eff+"' and the action's reason names it", softRejected, screen)
			return &act
		}
		verdict, why, err := r.riskReview(ctx, act, cmd, img)
		if err != nil {
			if r.interrupted(parent, err) {
				return &act
			}
			r.hardFailure(failModel, "", err)
			return &act
		}
		if verdict == riskAllow && actionSignature(act, cmd) == r.uncertainSig {
			// The same high-consequence action was dispatched before and
			// nothing visibly happened: repeating it needs a human again.
			verdict, why = riskConfirm, "the same high-consequence action showed no visible effect last time; confirm before repeating it"
		}
		st.emit(EvRiskReview, "risk review: "+verdict, map[string]any{"verdict": verdict, "message": why, "task_risk": r.risk.Classes})
		switch verdict {
		case riskBlock:
			r.reject(step, act, "risk_review_blocked", why, softRejected, screen)
			return &act
		case riskConfirm:
			st.setPhase(phaseConfirming, "ask a human to confirm")
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
				r.reject(step, act, "human_declined", "the user declined this action", softRejected, screen)
				return &act
			}
		}
	}

	// Repeated identical dispatches without any visible effect.
	sig := actionSignature(act, cmd)
	if sig == r.repeatSig && r.repeatCount >= cfg.RepeatLimit {
		st.emit(EvRecovery, "the same action had no visible effect repeatedly", map[string]any{"outcome": string(recoverTakeover), "repeats": r.repeatCount})
		r.askHuman(ctx, parent, "the same action keeps having no visible effect", action.Action{Name: action.TakeOver})
		if r.result != nil && r.result.Outcome == OutcomeBlocked {
			r.result.Outcome, r.result.Exit = outcomeRepeatedAction, exitCode(outcomeRepeatedAction)
		}
		return &act
	}
	r.planned = &cmd
	return &act
}

func (a *phoneAgent) modelBudget() int {
	if b, ok := a.model.(interface{ InputTokenBudget() int }); ok {
		return b.InputTokenBudget()
	}
	return 0
}

package agentloop

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/fault"
)

// Observable effects of an execution beyond the verification statuses:
// unknown when the command may have reached the device but nothing was
// observed after it, none when nothing reached the device.
const (
	effectUnknown = "unknown"
	effectNone    = "none"
)

// execution holds the separate facts every execution event carries: the
// command reached the device, it succeeded, what visibly happened, a
// non-blocking warning, whether recovery is needed, the structured error
// at the root of it and the termination code when this execution ended
// the task. They are never folded into one status: a dispatched command
// without visible effect is a success with a warning, not a failure.
type execution struct {
	dispatched     bool
	success        bool
	effect         string
	warning        string
	recoveryNeeded bool
	rootError      string
	termination    string
}

// emitExecution records one execution event; absent facts are null.
func (r *taskRun) emitExecution(msg string, e execution, extra map[string]any) {
	p := map[string]any{
		"command_dispatched": e.dispatched, "command_success": e.success, "observable_effect": e.effect,
		"warning": nullable(e.warning), "recovery_needed": e.recoveryNeeded, "root_error": nullable(e.rootError),
		"termination_code": nullable(e.termination),
	}
	for k, v := range extra {
		p[k] = v
	}
	r.st.emit(evExecution, msg, p)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// errorCode is the structured code of a runtime error.
func errorCode(err error) string {
	var pe *action.ProtocolError
	var fe *fault.Error
	var de *DeviceError
	var ce *calibrationError
	var nm *NotMappableError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &pe):
		return pe.Code
	case errors.As(err, &fe):
		return fe.Code
	case errors.As(err, &de):
		return de.Code
	case errors.As(err, &ce):
		return fault.CodeCoordinateCalibrationFailed
	case errors.As(err, &nm):
		return nm.Code
	case errors.Is(err, context.Canceled):
		return "interrupted"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return "runtime_error"
}

// execute is the acting half of a step: freshness, dispatch, verification.
func (r *taskRun) execute(ctx, parent context.Context, act action.Action, cmd Command, screen *Screen) {
	cfg := &r.a.cfg
	st := r.st
	step := st.Step()
	sig := actionSignature(act, cmd)
	// Freshness: coordinate actions are bound to the screenshot they were
	// planned on.
	dispatchOn := screen
	if action.HasCoordinates(act.Name) {
		st.setPhase(phasePrecondition, "re-observe before dispatch")
		fr, err := checkFreshness(ctx, cfg.Clock, r.a.dev, screen, targetsOf(cmd), cfg.Rechecks, cfg.RecheckDelay)
		if err != nil {
			if r.interrupted(parent, err) {
				return
			}
			r.hardFailure(failObservation, act.Name, err)
			return
		}
		st.emit(evPrecondition, "freshness: "+fr.Verdict, map[string]any{"verdict": fr.Verdict, "global": fr.Global, "target_regions": fr.Regions,
			"rechecks": fr.Rechecks, "planned_sha256": screen.SHA256, "fresh_sha256": fr.Screen.SHA256, "command_dispatched": false})
		if !fr.Fresh() {
			r.staleCancel(step, act, fr.Verdict, fr.Screen)
			return
		}
		dispatchOn = fr.Screen
	}

	// Dispatch.
	st.setPhase(phaseDispatching, "dispatch "+act.Name)
	dr, attempt, err := r.dispatch(ctx, parent, act, cmd, dispatchOn, step)
	if err != nil {
		return
	}
	detail := map[string]any{"device": dr.Detail, "command": cmd, "attempt": attempt}

	// Verify.
	st.setPhase(phaseVerifying, "re-observe and compare pixels")
	if err := cfg.Clock.Sleep(ctx, cfg.SettleDelay); err != nil {
		r.interrupted(parent, err)
		return
	}
	after, err := r.a.dev.Observe(ctx)
	if err != nil {
		if r.interrupted(parent, err) {
			return
		}
		st.emit(EvVerification, "no observation after the action", map[string]any{"status": verifyInconclusive, "command_success": true, "error": err.Error()})
		r.mem.addTurn(step, act, map[string]any{"command_dispatched": true, "command_success": true, "observable_effect": effectUnknown})
		rec, n := r.countHard(failObservation, act.Name, err)
		r.emitExecution("dispatched "+act.Name+"; no observation after it", execution{dispatched: true, success: true, effect: effectUnknown,
			recoveryNeeded: true, rootError: errorCode(err), termination: terminationOf(failObservation, rec)}, detail)
		r.applyHard(failObservation, rec, n, err)
		return
	}
	v := verifyEffect(act.Name, dispatchOn, after)
	st.emit(EvVerification, "verification: "+v.Status, map[string]any{"status": v.Status, "command_success": v.CommandSuccess,
		"observable_effect": v.ObservableEffect, "diff": v.Diff, "warning": v.Warning, "semantic_effect_verified": false})
	if v.Warning != "" {
		st.count(func(c *Counters) { c.Warnings++ })
	}
	r.emitExecution("dispatched "+act.Name, execution{dispatched: true, success: true, effect: v.ObservableEffect, warning: v.Warning}, detail)
	// Waiting is expected to change nothing; a waiting loop is bounded by
	// the step budget instead.
	if act.Name == action.Wait {
		r.repeatSig, r.repeatCount = "", 0
	} else if v.ObservableEffect == "unchanged" && sig == r.repeatSig {
		r.repeatCount++
	} else if v.ObservableEffect == "unchanged" {
		r.repeatSig, r.repeatCount = sig, 1
	} else {
		r.repeatSig, r.repeatCount = "", 0
	}
	r.uncertainSig = ""
	if (r.risk.High() || actionSensitive(act)) && v.ObservableEffect == "unchanged" {
		r.uncertainSig = sig
	}
	if v.Status == VerifyPassed {
		// Only an action whose verification passed clears the failure
		// streaks; a clean parse or a successful replan does not.
		st.resetStreaks()
	}
	res := map[string]any{"command_dispatched": true, "command_success": true, "observable_effect": v.ObservableEffect}
	if v.Warning != "" {
		res["warning"] = v.Warning
	}
	r.mem.addTurn(step, act, res)
	r.pending = after
	st.setPhase(phaseObserving, "step done")
}

// dispatch sends the command, with the automatic retry of Wait and Home.
// On success it returns the device's result and the attempt number; every
// failure is recorded (execution and recovery events) before it returns.
func (r *taskRun) dispatch(ctx, parent context.Context, act action.Action, cmd Command, on *Screen, step int) (DispatchResult, int, error) {
	st := r.st
	for attempt := 1; ; attempt++ {
		dr, err := r.a.dev.Dispatch(ctx, cmd, on)
		if err == nil {
			st.count(func(c *Counters) { c.Dispatched++ })
			return dr, attempt, nil
		}
		if r.interrupted(parent, err) {
			return dr, attempt, err
		}
		var nm *NotMappableError
		if errors.As(err, &nm) {
			r.emitExecution("not dispatched: "+nm.Note, execution{effect: effectNone, recoveryNeeded: true, rootError: nm.Code}, map[string]any{"attempt": attempt})
			r.reject(step, act, nm.Code, nm.Note, softUnmappable, on)
			return dr, attempt, err
		}
		if errors.Is(err, ErrStaleOnDevice) {
			st.emit(evPrecondition, "the device rejected the observation as stale", map[string]any{"verdict": staleDeviceRejection, "command_dispatched": false})
			r.staleCancel(step, act, staleDeviceRejection, nil)
			return dr, attempt, err
		}
		if dr.Dispatched {
			st.count(func(c *Counters) { c.Dispatched++ })
		}
		code := fault.CodeInputFailed
		var de *DeviceError
		if errors.As(err, &de) {
			code = de.Code
		}
		n := st.hard(failDevice)
		rec := decideRecovery(failDevice, act.Name, n, r.a.cfg.HardBudget, attempt > 1)
		effect := effectNone
		if dr.Dispatched {
			effect = effectUnknown
		}
		r.emitExecution("dispatch failed", execution{dispatched: dr.Dispatched, effect: effect, recoveryNeeded: true, rootError: code,
			termination: terminationOf(failDevice, rec)}, map[string]any{"error": err.Error(), "attempt": attempt})
		st.emit(EvRecovery, "recovery: "+string(rec), map[string]any{"outcome": string(rec), "class": failDevice, "count": n, "root_error": code})
		switch rec {
		case recoverRetrySafe:
			continue
		case recoverTerminate:
			r.finish(OutcomeDeviceError, "the device kept failing", err)
		default:
			r.mem.addTurn(step, act, map[string]any{"command_dispatched": dr.Dispatched, "command_success": false, "error_code": code})
			st.setPhase(phaseObserving, "replan after a device failure")
		}
		return dr, attempt, err
	}
}

// hardFailure counts a hard failure and applies its recovery.
func (r *taskRun) hardFailure(class, name string, err error) {
	rec, n := r.countHard(class, name, err)
	r.applyHard(class, rec, n, err)
}

// countHard counts a hard failure of class and decides its recovery.
func (r *taskRun) countHard(class, name string, err error) (recovery, int) {
	n := r.st.hard(class)
	rec := decideRecovery(class, name, n, r.a.cfg.HardBudget, false)
	// A refused API key or a missing model will not fix itself by asking
	// again.
	if code := errorCode(err); code == fault.CodeModelAuthFailed || chat.HTTPStatus(err) == 404 {
		rec = recoverTerminate
	}
	return rec, n
}

// terminationOf is the outcome a terminating recovery of class ends the
// task with ("" when the task goes on).
func terminationOf(class string, rec recovery) string {
	if rec != recoverTerminate {
		return ""
	}
	switch class {
	case failProtocol:
		return OutcomeProtocolError
	case failModel:
		return OutcomeModelError
	}
	return OutcomeDeviceError
}

// applyHard records the recovery of a counted hard failure and applies it.
func (r *taskRun) applyHard(class string, rec recovery, n int, err error) {
	st := r.st
	st.emit(EvRecovery, "recovery: "+string(rec), map[string]any{"outcome": string(rec), "class": class, "count": n, "error": err.Error(),
		"root_error": errorCode(err)})
	if rec == recoverTerminate {
		msg := map[string]string{
			OutcomeProtocolError: "the model kept answering outside the action protocol",
			OutcomeModelError:    "the model endpoint kept failing",
			OutcomeDeviceError:   "the device kept failing",
		}
		o := terminationOf(class, rec)
		r.finish(o, msg[o], err)
		return
	}
	st.setPhase(phaseRecovering, string(rec))
	st.setPhase(phaseObserving, "recovered by "+string(rec))
}

// reject records a zero-touch rejection: nothing reached the device, the
// model hears why, and consecutive rejections collapse into one summary.
func (r *taskRun) reject(step int, act action.Action, code, why, class string, screen *Screen) {
	st := r.st
	n := st.soft(class)
	st.emit(EvRecovery, "rejected with zero touch: "+code, map[string]any{"outcome": string(recoverReplan), "class": class, "code": code, "message": why, "count": n, "command_dispatched": false})
	r.mem.addRejection(step, act, code, why)
	r.pending = screen
	st.setPhase(phaseObserving, "replan after a rejection")
}

// staleCancel cancels a stale action with zero touch and replans from the
// newest screenshot. It is a soft replan: no hard budget is consumed and
// the repeat guard is not touched.
func (r *taskRun) staleCancel(step int, act action.Action, verdict string, fresh *Screen) {
	st := r.st
	n := st.soft(softStale)
	st.emit(EvRecovery, "stale action cancelled with zero touch", map[string]any{"outcome": string(recoverReplan), "class": softStale, "verdict": verdict, "count": n, "command_dispatched": false})
	r.mem.addTurn(step, act, map[string]any{"command_dispatched": false, "precondition": verdict,
		"note": "the screen changed before dispatch; nothing was touched; plan again on the new screenshot"})
	r.pending = fresh
	st.setPhase(phaseObserving, "replan on the newest screenshot")
}

// actionSignature identifies repeated dispatches: the action, its device
// point to the nearest 2 % of the screen, and its text.
func actionSignature(a action.Action, c Command) string {
	var b strings.Builder
	b.WriteString(a.Name)
	for _, p := range []*coord.MappedPoint{c.Point, c.Start, c.End} {
		if p != nil {
			fmt.Fprintf(&b, "|%d,%d", int(p.Canonical[0]*50), int(p.Canonical[1]*50))
		}
	}
	if a.Text != nil {
		b.WriteString("|" + *a.Text)
	}
	return b.String()
}

package agent

import (
	"context"
	"errors"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// actRequest is one parsed act call (docs/device-protocol.md#acting).
type actRequest struct {
	sessionID, token, stepID, observationID, action string
	args                                            protocol.ActionArgs
	arguments                                       core.Obj
}

// Failure messages of act receipts (docs/device-protocol.md#acting).
const (
	msgOpUnavailable   = "Operation service is unavailable"
	msgRootUnavailable = "Controllable foreground page root is unavailable"
	msgRejected        = "OperationService rejected the action"
	msgTimedOut        = "Action completion timed out"
	msgInterrupted     = "Action execution was interrupted"
	msgExecFailed      = "Action execution failed"
	msgSettleFailed    = "The device action or settle failed"
)

// agentAct parses act and schedules the pipeline; the answer is accepted
// even if the step will be rejected (the verdict is in the receipt).
func (a *Agent) agentAct(p *core.Process, q core.Params) core.Obj {
	if e := missingParam(q, "sessionId", "ownerToken", "stepId", "observationId", "action"); e != nil {
		return e
	}
	req := actRequest{sessionID: q["sessionId"], token: q["ownerToken"], stepID: q["stepId"],
		observationID: q["observationId"], action: q["action"], arguments: core.Obj{}}
	str := func(k string, dst **string) {
		if v, found := q[k]; found {
			*dst = &v
			req.arguments.Set(k, v)
		}
	}
	num := func(k string, dst **int64) core.Obj {
		if raw, found := q[k]; found {
			n, okN := core.JavaParseLong(raw)
			if !okN {
				return core.E1(protocol.ErrInvalidAction, k+" must be an integer")
			}
			*dst = &n
			req.arguments.Set(k, n)
		}
		return nil
	}
	str("nodeId", &req.args.NodeID)
	str("text", &req.args.Text)
	str("direction", &req.args.Direction)
	if e := num("durationMs", &req.args.DurationMs); e != nil {
		return e
	}
	if e := num("distance", &req.args.Distance); e != nil {
		return e
	}
	go a.runAct(p, req)
	return core.OK("accepted", true, "stepId", req.stepID)
}

// runAct is the device's act pipeline after the parse: root, check list,
// target, dispatch, settle, finish (docs/device-protocol.md#acting).
func (a *Agent) runAct(p *core.Process, req actRequest) {
	a.Mu.Lock()
	opDown := a.Faults.OpUnavailable
	var pkg string
	var sctx context.Context = p.Ctx
	if s := agentSx(p).agent; s != nil && s.id == req.sessionID && s.token == req.token {
		sctx = s.ctx
		if s.obs != nil {
			pkg = s.obs.pkg
		}
	}
	a.Mu.Unlock()

	if opDown {
		if s, rec := a.beginAction(p, req, ""); rec != nil {
			a.finishAction(p, s, rec, msgOpUnavailable, nil)
		}
		return
	}
	root := a.loadControllableRoot(sctx, pkg)
	if root == nil {
		if p.Ctx.Err() != nil {
			return
		}
		if s, rec := a.beginAction(p, req, ""); rec != nil {
			a.finishAction(p, s, rec, msgRootUnavailable, nil)
		}
		return
	}
	sig := core.ExportPage(root, false).Sha
	s, rec := a.beginAction(p, req, sig)
	if rec == nil {
		return
	}
	a.Mu.Lock()
	frame := map[string]core.NodeSelector(nil)
	if s.obs != nil && s.obs.id == req.observationID {
		frame = s.obs.frame
	}
	opCtx := s.ctx
	a.Mu.Unlock()

	var target *core.Node
	if req.args.NodeID != nil {
		sel, found := frame[*req.args.NodeID]
		if found {
			target = sel.Locate(root)
		}
		if target == nil {
			a.finishAction(p, s, rec, msgExecFailed, nil)
			return
		}
	}
	if msg := a.dispatchAction(opCtx, req, target); msg != "" {
		a.finishAction(p, s, rec, msg, nil)
		return
	}
	settled, err := a.settle(opCtx, rec.preSig)
	if err != nil {
		msg := msgExecFailed
		if errors.Is(err, errSettleFault) {
			msg = msgSettleFailed
		}
		a.finishAction(p, s, rec, msg, nil)
		return
	}
	a.finishAction(p, s, rec, "", a.buildObservation(s, settled))
}

// beginAction is the synchronized check list of an act step
// (docs/device-protocol.md#acting). It returns the session and receipt only
// when this call accepted the step.
func (a *Agent) beginAction(p *core.Process, req actRequest, sig string) (*agentSession, *agentReceipt) {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if a.P != p {
		return nil, nil
	}
	s, e := a.identifyLocked(p, req.sessionID, req.token)
	if e != nil {
		return nil, nil // identity rejections are neither stored nor logged
	}
	if _, exists := s.receipts[req.stepID]; exists {
		return nil, nil // idempotent: never a second execution
	}
	if agentMachine.IsLive(s.state) {
		a.checkTimeoutsLocked(p, s)
	}
	if req.stepID == "" {
		return nil, nil // invalid_step_id, not stored
	}
	reject := func(code, msg string) (*agentSession, *agentReceipt) {
		r := &agentReceipt{stepID: req.stepID, observationID: req.observationID, action: actionObj(req)}
		r.state, _ = receiptMachine.Step(receiptMachine.Initial, protocol.EvStepReject)
		r.code, r.msg = code, msg
		r.acceptedAt = a.NowMs()
		r.finishedAt = r.acceptedAt
		s.receipts[req.stepID] = r
		a.eventLocked(s, "action_rejected", req.stepID, req.observationID, r.wire())
		return nil, nil
	}
	switch s.state {
	case protocol.AgentPaused:
		return reject(protocol.ErrSessionPaused, "The session is paused")
	case protocol.AgentActing:
		return reject(protocol.ErrSessionBusy, "An action is still executing")
	case protocol.AgentActive:
	default:
		return reject(protocol.ErrTerminalSession, "The session is already terminal")
	}
	if !protocol.IsTypedAction(req.action) {
		return reject(protocol.ErrUnsupportedAction, "Only phase-one typed actions are allowed")
	}
	if msg := protocol.ValidateAction(req.action, req.args); msg != "" {
		return reject(protocol.ErrInvalidAction, msg)
	}
	if s.obs == nil || s.consumed || s.obs.id != req.observationID || (sig != "" && sig != s.obs.sig) {
		return reject(protocol.ErrStaleObservation, "The action must reference the current unchanged observation")
	}
	if s.accepted >= s.maxSteps {
		reject(protocol.ErrStepBudgetExhausted, "The session step budget is exhausted")
		a.terminateLocked(p, s, protocol.EvAgentFail, "step_budget_exhausted")
		return nil, nil
	}
	actionSig := protocol.ActionSignature(req.action, req.args)
	repeat := int64(1)
	if actionSig == s.lastActionSig {
		repeat = s.repeatCount + 1
	}
	if repeat > s.maxRepeated {
		reject(protocol.ErrLoopDetected, "Repeated action limit reached")
		a.terminateLocked(p, s, protocol.EvAgentFail, "loop_detected")
		return nil, nil
	}
	next, err := agentMachine.Step(s.state, protocol.EvAgentAccept)
	if err != nil {
		return reject(protocol.ErrSessionBusy, "An action is still executing")
	}
	s.state = next
	s.lastActionSig, s.repeatCount = actionSig, repeat
	s.consumed = true
	s.accepted++
	now := a.NowMs()
	s.lastActivity = now
	r := &agentReceipt{stepID: req.stepID, observationID: req.observationID, action: actionObj(req), acceptedAt: now, preSig: sig}
	r.state, _ = receiptMachine.Step(receiptMachine.Initial, protocol.EvStepAccept)
	s.receipts[req.stepID] = r
	a.eventLocked(s, "action_accepted", req.stepID, req.observationID, r.wire())
	return s, r
}

func actionObj(req actRequest) core.Obj {
	return core.NewObj("type", req.action, "arguments", req.arguments)
}

// finishAction publishes the step's outcome. It is ignored when the session
// moved on (cancelled, expired, replaced): the receipt of an interrupted step
// then stays accepted forever.
func (a *Agent) finishAction(p *core.Process, s *agentSession, r *agentReceipt, failMsg string, settled *observation) {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if a.P != p || agentSx(p).agent != s || s.state != protocol.AgentActing {
		return
	}
	now := a.NowMs()
	s.lastActivity = now
	if failMsg != "" || settled == nil {
		if failMsg == "" {
			failMsg = msgExecFailed
		}
		r.state, _ = receiptMachine.Step(r.state, protocol.EvStepFail)
		r.code, r.msg, r.finishedAt = errActionFailed, failMsg, now
		a.eventLocked(s, "action_failed", r.stepID, r.observationID, r.wire())
		a.terminateLocked(p, s, protocol.EvAgentActFails, "action_failed")
		return
	}
	if !a.stepSessionLocked(s, protocol.EvAgentSettled) {
		return
	}
	r.state, _ = receiptMachine.Step(r.state, protocol.EvStepSucceed)
	r.finishedAt = now
	r.settled = settled.wire
	a.installObservationLocked(s, settled, false)
	a.eventLocked(s, "action_settled", r.stepID, r.observationID, r.wire())
	if settled.sig == r.preSig {
		s.noProgress++
	} else {
		s.noProgress = 0
	}
	if s.noProgress >= s.maxNoProgress {
		a.terminateLocked(p, s, protocol.EvAgentFail, "no_progress_loop_detected")
	}
}

// dispatchAction maps the typed action onto phone input and waits at most
// 10 s for completion. It returns "" or the receipt's failure message.
func (a *Agent) dispatchAction(ctx context.Context, req actRequest, target *core.Node) string {
	done := make(chan error, 1)
	go func() { done <- a.performTyped(ctx, req, target) }()
	limit, cancel := clock.WithTimeout(ctx, a.Clk, protocol.AgentActionCompletionMs*time.Millisecond, context.DeadlineExceeded)
	defer cancel()
	select {
	case err := <-done:
		switch {
		case err == nil:
			return ""
		case ctx.Err() != nil:
			return msgInterrupted
		default:
			return msgRejected
		}
	case <-limit.Done():
		if ctx.Err() != nil {
			return msgInterrupted
		}
		return msgTimedOut
	}
}

func (a *Agent) performTyped(ctx context.Context, req actRequest, target *core.Node) error {
	switch req.action {
	case protocol.ActClick:
		x, y := target.Bounds.Centre()
		return a.Phone.Tap(x, y)
	case protocol.ActLongClick:
		d := 2000 * time.Millisecond
		if req.args.DurationMs != nil {
			d = time.Duration(*req.args.DurationMs) * time.Millisecond
		}
		x, y := target.Bounds.Centre()
		return a.Phone.LongPress(x, y, d)
	case protocol.ActInput:
		x, y := target.Bounds.Centre()
		if err := a.Phone.Tap(x, y); err != nil {
			return err
		}
		if err := a.Phone.SetText(target.SourceID, *req.args.Text); err != nil {
			return err
		}
		return a.HideIME()
	case protocol.ActBack:
		return a.Phone.KeyEvent(core.KeyCodeBack)
	case protocol.ActHome:
		return a.Phone.KeyEvent(core.KeyCodeHome)
	case protocol.ActScroll:
		op := map[string]string{"up": "SCROLL_TO_TOP", "down": "SCROLL_TO_BOTTOM", "left": "SCROLL_TO_LEFT", "right": "SCROLL_TO_RIGHT"}[*req.args.Direction]
		area := core.Rect{}
		if target != nil {
			area = target.Bounds
		} else {
			w, h := a.Phone.ScreenSize()
			area = core.Rect{Left: 0, Top: 0, Right: w, Bottom: h}
		}
		percent := 50
		if req.args.Distance != nil {
			percent = int(*req.args.Distance)
		}
		return a.Scroll(area, op, percent)
	case protocol.ActWait:
		return a.Clk.Sleep(ctx, time.Duration(*req.args.DurationMs)*time.Millisecond)
	}
	return errors.New("soloapp: unsupported action " + req.action)
}

var errSettleFault = errors.New("soloapp: settle failed (fault)")

// settle polls every 250 ms for up to 3 s for a controllable root whose
// signature differs from pre and equals the previous poll's; at the
// deadline the last controllable root is used even if unchanged.
func (a *Agent) settle(ctx context.Context, pre string) (*core.PageRoot, error) {
	a.Mu.Lock()
	delay, broken := a.Faults.SettleDelay, a.Faults.FailSettle
	a.Mu.Unlock()
	if delay > 0 {
		if err := a.Clk.Sleep(ctx, delay); err != nil {
			return nil, err
		}
	}
	if broken {
		return nil, errSettleFault
	}
	deadline := a.Clk.Now().Add(protocol.AgentSettleMaxMs * time.Millisecond)
	var last *core.PageRoot
	prev := ""
	for {
		if err := a.Clk.Sleep(ctx, protocol.AgentSettlePollMs*time.Millisecond); err != nil {
			return nil, err
		}
		if r := a.ReadRoot(true); a.Controllable(r) {
			sig := core.ExportPage(r, false).Sha
			last = r
			if sig != pre && sig == prev {
				return r, nil
			}
			prev = sig
		}
		if !a.Clk.Now().Before(deadline) {
			if last == nil {
				return nil, errors.New("soloapp: no controllable root while settling")
			}
			return last, nil
		}
	}
}

// errActionFailed is the only errorCode of failed receipts.
const errActionFailed = "action_failed"

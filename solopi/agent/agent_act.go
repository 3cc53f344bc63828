package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
)

// receiptResult is one receipt query.
type receiptResult struct {
	Receipt *AgentReceipt
	Session *AgentSession
	Raw     json.RawMessage
}

// Receipt reads the receipt of stepId. A missing receipt is an exit-2
// error with code receipt_not_found.
func (c *AgentClient) Receipt(ctx context.Context, id AgentIdentity, stepID string) (*receiptResult, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	if err := CheckAgentID("stepId", stepID); err != nil {
		return nil, err
	}
	res, missing, err := c.lookupReceipt(ctx, id, stepID)
	if err == nil && missing != nil {
		err = missing
	}
	return res, err
}

// lookupReceipt reads the receipt of stepID once. While the device has
// none, missing is the receipt_not_found error Receipt reports.
func (c *AgentClient) lookupReceipt(ctx context.Context, id AgentIdentity, stepID string) (res *receiptResult, missing *fault.Error, err error) {
	annotate := func(err error) error {
		var e *fault.Error
		if errors.As(err, &e) {
			e.With("type", protocol.AgentReceiptQuery).With("stepId", stepID)
		}
		return withSession(err, id.SessionID)
	}
	r, found, err := device.ReadReceipt(ctx, c.qdev, receiptQuery(id, stepID))
	switch {
	case err != nil:
		return nil, nil, annotate(err)
	case !found:
		missing = device.DeviceRefusal(r.Answer, "no receipt exists for this stepId")
		_ = annotate(missing)
		return nil, missing, nil
	}
	res, err = parseReceipt(r)
	return res, nil, err
}

// receiptQuery is the receipt query of stepID: the receipt is the answer's
// receipt object and carries the stepId (device.ReadReceipt's rule).
func receiptQuery(id AgentIdentity, stepID string) device.ReceiptQuery {
	p := append(device.P(protocol.ParamType, protocol.AgentReceiptQuery), id.params()...)
	return device.ReceiptQuery{Action: protocol.ActionAgent, Params: append(p, device.Param{Key: protocol.ParamStepID, Value: stepID}),
		Key: protocol.ParamStepID, ID: stepID, In: "receipt"}
}

// parseReceipt reads a receipt answer of ours: the receipt and the
// session snapshot beside it.
func parseReceipt(r device.Receipt) (*receiptResult, error) {
	var env agentEnvelope
	if err := json.Unmarshal(r.Raw, &env); err != nil {
		return nil, fault.Wrap(fault.Transport, fault.CodeInvalidDeviceResponse, "the device sent a malformed Agent answer", err).With("type", protocol.AgentReceiptQuery)
	}
	switch {
	case env.Success == nil:
		return nil, device.ContractError("the Agent answer has no success field", nil).With("type", protocol.AgentReceiptQuery)
	case !*env.Success:
		return nil, device.DeviceRefusal(r.Answer, "the device refused the Agent request").With("type", protocol.AgentReceiptQuery)
	}
	rec, err := parseAgentReceipt(env.Receipt)
	if err != nil {
		return nil, err
	}
	res := &receiptResult{Receipt: rec, Raw: r.Raw}
	if !absent(env.Session) {
		if res.Session, err = parseAgentSession(env.Session); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// ActRequest is one typed action.
type ActRequest struct {
	Identity AgentIdentity
	// StepID is the caller's idempotency key. A retry must reuse it: the
	// device then returns the stored receipt and never acts twice.
	StepID        string
	ObservationID string
	Action        string
	Args          protocol.ActionArgs
	// Timeout bounds the wait for a final receipt (default 15 s).
	Timeout      time.Duration
	PollInterval time.Duration
}

// Params are the act parameters in the reference host's order.
func (r ActRequest) params() device.Params {
	p := append(r.Identity.params(),
		device.Param{Key: protocol.ParamStepID, Value: r.StepID},
		device.Param{Key: protocol.ParamObservationID, Value: r.ObservationID},
		device.Param{Key: protocol.ParamAction, Value: r.Action})
	if r.Args.NodeID != nil {
		p = p.Add(protocol.ParamNodeID, *r.Args.NodeID)
	}
	if r.Args.Text != nil {
		p = p.Add(protocol.ParamText, *r.Args.Text)
	}
	if r.Args.Direction != nil {
		p = p.Add(protocol.ParamDirection, *r.Args.Direction)
	}
	if r.Args.DurationMs != nil {
		p = p.Add(protocol.ParamDurationMs, fmt.Sprint(*r.Args.DurationMs))
	}
	if r.Args.Distance != nil {
		p = p.Add(protocol.ParamDistance, fmt.Sprint(*r.Args.Distance))
	}
	return p
}

// arguments are the request's action arguments as a receipt records them.
func (r ActRequest) arguments() map[string]any {
	m := map[string]any{}
	for k, v := range map[string]*string{protocol.ParamNodeID: r.Args.NodeID, protocol.ParamText: r.Args.Text, protocol.ParamDirection: r.Args.Direction} {
		if v != nil {
			m[k] = *v
		}
	}
	for k, v := range map[string]*int64{protocol.ParamDurationMs: r.Args.DurationMs, protocol.ParamDistance: r.Args.Distance} {
		if v != nil {
			m[k] = *v
		}
	}
	return m
}

// sameAction reports whether rec is the receipt of this action: the same
// type and arguments. A node id names a node of one observation, so it is
// compared only when the retry names the receipt's observation.
func (r ActRequest) sameAction(rec *AgentReceipt) bool {
	if rec == nil || rec.Action.Type != r.Action {
		return false
	}
	want, got := r.arguments(), rec.Action.Arguments
	if rec.ObservationID != r.ObservationID {
		delete(want, protocol.ParamNodeID)
		got = maps.Clone(got)
		delete(got, protocol.ParamNodeID)
	}
	if len(want) != len(got) {
		return false
	}
	for k, v := range want {
		g, ok := got[k]
		if !ok || fmt.Sprint(g) != fmt.Sprint(v) {
			return false
		}
	}
	return true
}

// Validate checks identifiers and the typed action schema locally (exit 3).
func (r ActRequest) Validate() error {
	if err := r.Identity.Validate(); err != nil {
		return err
	}
	if err := CheckAgentID("stepId", r.StepID); err != nil {
		return err
	}
	if err := CheckAgentID("observationId", r.ObservationID); err != nil {
		return err
	}
	if msg := protocol.ValidateAction(r.Action, r.Args); msg != "" {
		return fault.Usage(fault.CodeInvalidAction, msg).With("action", r.Action)
	}
	if r.Args.NodeID != nil {
		if err := CheckAgentID("nodeId", *r.Args.NodeID); err != nil {
			return err
		}
	}
	return nil
}

// actResult is the outcome of one act.
type actResult struct {
	Receipt *AgentReceipt
	// Session is the snapshot returned with the final receipt.
	Session *AgentSession
	// Replayed is true when a receipt for StepID already existed: nothing
	// was sent and the stored receipt is returned.
	Replayed   bool
	Foreground *ForegroundRestore
	Raw        json.RawMessage
}

// SettledObservation is the new current observation of a succeeded step.
func (r *actResult) SettledObservation() *Observation {
	if r == nil || r.Receipt == nil {
		return nil
	}
	return r.Receipt.SettledObservation
}

// Act sends one typed action and waits for its final receipt. It returns
// the result whenever a receipt was read; the error is non-nil unless the
// receipt succeeded: rejected or failed receipts are exit-2 errors with
// the device's errorCode. Identity errors (another session, another owner)
// are detected before anything is sent. A receipt that already exists for
// StepID is returned without sending the action again. On timeout or
// interrupt the whole session is cancelled exactly (the device would
// otherwise keep acting on behalf of a host that has gone).
func (c *AgentClient) Act(ctx context.Context, r ActRequest) (*actResult, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	if r.Timeout <= 0 {
		r.Timeout = defaultAgentActionTimeout
	}
	res := &actResult{}
	prior, missing, err := c.lookupReceipt(ctx, r.Identity, r.StepID)
	switch {
	case err == nil && missing == nil && !r.sameAction(prior.Receipt):
		// The stepId is an idempotency key: a retry repeats its action.
		// Another action under it would be answered with the first
		// one's receipt as if it had run.
		return nil, withStep(fault.Newf(fault.Failed, fault.CodeStepIDConflict,
			"stepId %s already names a %s step of this session; nothing was sent (use a new --step-id)", r.StepID, prior.Receipt.Action.Type).
			With("receipt", prior.Receipt.Summary()).With("requestedAction", map[string]any{"type": r.Action, "arguments": r.arguments()}), r)
	case err == nil && missing == nil:
		res.Replayed = true
		res.Receipt, res.Session, res.Raw = prior.Receipt, prior.Session, prior.Raw
	case err == nil:
		fr, err := c.mutate(ctx, protocol.AgentAct, r.params())
		res.Foreground = &fr
		if err != nil {
			if fault.IsInterrupt(err) {
				return res, withCleanup(ctx, err, c.CancelExact(ctx, r.Identity))
			}
			return res, withStep(err, r)
		}
	default:
		if fault.IsInterrupt(err) {
			return nil, withCleanup(ctx, err, c.CancelExact(ctx, r.Identity))
		}
		return nil, withStep(err, r)
	}
	if !res.Receipt.IsFinal() {
		_, pollErr := device.AwaitReceipt(ctx, c.qdev, receiptQuery(r.Identity, r.StepID), device.PollOptions{Timeout: r.Timeout, Interval: c.poll(r.PollInterval)}, func(rec device.Receipt) (bool, error) {
			rr, err := parseReceipt(rec)
			if err != nil {
				return false, err
			}
			res.Receipt, res.Session, res.Raw = rr.Receipt, rr.Session, rr.Raw
			if rr.Receipt.IsFinal() {
				return true, nil
			}
			// A session cancelled or expired while acting never finalizes
			// the receipt: stop instead of waiting it out.
			if rr.Session.IsTerminal() {
				return false, fault.Newf(fault.Failed, fault.CodeSessionTerminal,
					"the Agent session became %s while the action was executing; its receipt will stay accepted", rr.Session.State).
					With("terminalReason", rr.Session.TerminalReason).With("receipt", rr.Receipt).With("session", rr.Session)
			}
			return false, nil
		})
		switch {
		case pollErr == nil:
		case errors.Is(pollErr, device.ErrPollTimeout):
			e := fault.New(fault.Timeout, fault.CodeAgentActionTimeout, "SoloPi did not finish the action within --action-timeout").
				With("actionTimeoutSeconds", r.Timeout.Seconds()).With("lastReceipt", nil) // null until a receipt was read
			if res.Receipt != nil {
				e.With("lastReceipt", res.Receipt.Summary())
			}
			return res, withStep(withCleanup(ctx, e, c.CancelExact(ctx, r.Identity)), r)
		case fault.IsInterrupt(pollErr):
			return res, withStep(withCleanup(ctx, pollErr, c.CancelExact(ctx, r.Identity)), r)
		default:
			return res, withStep(pollErr, r)
		}
	}
	if res.Receipt.Status != receiptSucceeded {
		code := res.Receipt.ErrorCode
		if code == "" {
			code = fault.CodeDeviceRejected
		}
		msg := res.Receipt.Error
		if msg == "" {
			msg = "the device " + res.Receipt.Status + " the action"
		}
		e := fault.New(fault.Failed, code, msg).With("receipt", res.Receipt).With("status", res.Receipt.Status)
		if res.Session != nil {
			e.With("session", res.Session)
		}
		if res.Replayed {
			e.With("replayed", true)
		}
		return res, withStep(e, r)
	}
	return res, nil
}

// withStep adds the step identifiers to an error.
func withStep(err error, r ActRequest) error {
	var e *fault.Error
	if errors.As(err, &e) {
		if _, ok := e.Details["sessionId"]; !ok {
			e.With("sessionId", r.Identity.SessionID)
		}
		e.With("stepId", r.StepID).With("observationId", r.ObservationID)
	}
	return err
}

package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
)

// ProposalKind is what a DecisionProvider wants next.
type ProposalKind string

// Proposal kinds (seed 003 "动态 Agent": act / done / blocked).
const (
	ProposalAct     ProposalKind = "act"
	ProposalDone    ProposalKind = "done"
	ProposalBlocked ProposalKind = "blocked"
)

// Proposal is a DecisionProvider's answer. For act, Action is one of the
// seven typed actions and Args its arguments; the target is either
// Args.NodeID or Selector (resolved by the host against the observation the
// provider saw), never both. Reason is required for every kind. A done
// proposal is a control event, not a verdict: only the Result Judge decides
// whether the goal was met.
type Proposal struct {
	Kind     ProposalKind        `json:"kind"`
	Reason   string              `json:"reason"`
	Action   string              `json:"action,omitempty"`
	Args     protocol.ActionArgs `json:"-"`
	Selector *Selector           `json:"selector,omitempty"`
}

// DecisionInput is everything a DecisionProvider may see: the goal, the
// current observation and what happened so far. It carries no device
// handle, so a provider cannot act, lease or judge on its own.
type DecisionInput struct {
	Goal string
	// Observation is the current observation: the first one, or the
	// settled observation of the last successful step.
	Observation *Observation
	// History lists every earlier step of this run, oldest first,
	// including proposals the host refused before sending.
	History []StepRecord
	// Step is the 1-based index of this decision.
	Step int
	// Budget is the session's device-enforced budget.
	Budget AgentBudget
}

// DecisionProvider decides the next step of a dynamic Agent segment. It has
// no device access: it only reads its input and proposes.
type DecisionProvider interface {
	Decide(ctx context.Context, in DecisionInput) (Proposal, error)
}

// DecisionFunc adapts a function to DecisionProvider.
type DecisionFunc func(ctx context.Context, in DecisionInput) (Proposal, error)

// Decide calls f.
func (f DecisionFunc) Decide(ctx context.Context, in DecisionInput) (Proposal, error) {
	return f(ctx, in)
}

// StepRecord is one decision of a run and what became of it.
type StepRecord struct {
	Index    int      `json:"index"`
	Proposal Proposal `json:"proposal"`
	// ObservationID is the observation the decision was made on.
	ObservationID string `json:"observationId"`
	// StepID and NodeID are set once the proposal became a request.
	StepID string `json:"stepId,omitempty"`
	NodeID string `json:"nodeId,omitempty"`
	// Sent is false when the host refused the proposal before sending it
	// (bad selector, invalid action schema).
	Sent    bool          `json:"sent"`
	Receipt *AgentReceipt `json:"receipt,omitempty"`
	// ErrorCode and Error describe a refusal by the host or the device.
	ErrorCode string `json:"errorCode,omitempty"`
	Error     string `json:"error,omitempty"`
}

// Run outcomes: why the loop stopped. None of them is a verdict.
const (
	RunDone            = "done"
	RunBlocked         = "blocked"
	RunSessionTerminal = "session_terminal"
	RunActionRejected  = "action_rejected"
	RunActionFailed    = "action_failed"
	RunDecisionLimit   = "decision_limit"
	RunProviderError   = "provider_error"
	RunError           = "error"
)

// AgentRunOptions configure RunSession.
type AgentRunOptions struct {
	Goal  string
	Start StartOptions
	// StepIDPrefix names the steps <prefix>-001, <prefix>-002, … (the
	// verify engine passes its dynamic step id); default "step".
	StepIDPrefix string
	// ActionTimeout bounds each act (default 15 s); EndTimeout bounds the
	// final end or cancel (default 15 s).
	ActionTimeout time.Duration
	EndTimeout    time.Duration
	PollInterval  time.Duration
	// MaxDecisions caps provider calls, including refused proposals, so a
	// provider that keeps proposing unresolvable targets cannot loop
	// forever (default: maxSteps + 10).
	MaxDecisions int
	// OnStep, when set, is called after each step record is final (for
	// progress and event logs). It must not keep the record's pointers.
	OnStep func(StepRecord)
}

// AgentRunResult is everything a run produced, for evidence and judging.
type AgentRunResult struct {
	SessionID        string
	Outcome          string
	Reason           string
	FirstObservation *Observation
	LastObservation  *Observation
	Steps            []StepRecord
	// Session is the last snapshot seen (after end or cancel when one was
	// sent).
	Session *AgentSession
	// Finish is how the session was closed: "end", "cancel" or "" when it
	// was already terminal.
	Finish       string
	FinishError  string
	Cleanup      *AgentCleanup
	Timeline     *TimelineResult
	TimelinePath string
}

// RunSession drives one dynamic Agent segment: start (first observation) →
// decide → act → settled observation → decide … until the provider says
// done or blocked, the device ends the session (budget, loop, failure), an
// action is rejected or failed, or the decision limit is reached. A live
// session is then ended (done, blocked, decision limit) or cancelled (any
// error), and the timeline is read for evidence. The result is returned in
// every case; the error is non-nil only for control failures (transport,
// timeout, interrupt, provider error), never for a business outcome.
func RunSession(ctx context.Context, client *AgentClient, provider DecisionProvider, opts AgentRunOptions) (*AgentRunResult, error) {
	if provider == nil {
		return nil, errors.New("RunSession: no decision provider")
	}
	if opts.StepIDPrefix == "" {
		opts.StepIDPrefix = "step"
	}
	if err := CheckAgentID("stepIdPrefix", opts.StepIDPrefix); err != nil {
		return nil, err
	}
	if opts.MaxDecisions <= 0 {
		opts.MaxDecisions = int(opts.Start.Budget.MaxSteps) + 10
	}
	res := &AgentRunResult{}
	started, err := client.Start(ctx, opts.Start)
	if err != nil {
		res.Outcome, res.Reason = RunError, errorText(err)
		var e *fault.Error
		if errors.As(err, &e) {
			if id, ok := e.Details["sessionId"].(string); ok {
				res.SessionID = id
			}
			if cl, ok := e.Details["cleanup"].(AgentCleanup); ok {
				res.Cleanup = &cl
			}
		}
		return res, err
	}
	id := started.Identity(opts.Start.OwnerToken)
	res.SessionID = id.SessionID
	res.FirstObservation, res.LastObservation = started.Observation, started.Observation
	res.Session, res.TimelinePath = started.Session, started.TimelinePath

	loopErr := runLoop(ctx, client, provider, opts, id, res)
	finishRun(ctx, client, opts, id, res, loopErr)
	return res, loopErr
}

// runLoop is the decide/act loop; it fills res.Outcome and res.Reason.
func runLoop(ctx context.Context, client *AgentClient, provider DecisionProvider, opts AgentRunOptions, id AgentIdentity, res *AgentRunResult) error {
	obs := res.FirstObservation
	sent := 0
	for decision := 1; ; decision++ {
		if decision > opts.MaxDecisions {
			res.Outcome, res.Reason = RunDecisionLimit, fmt.Sprintf("the provider made %d decisions without finishing", opts.MaxDecisions)
			return nil
		}
		if err := ctx.Err(); err != nil {
			res.Outcome, res.Reason = RunError, "interrupted"
			return device.Interrupted(ctx)
		}
		in := DecisionInput{Goal: opts.Goal, Observation: obs, History: append([]StepRecord(nil), res.Steps...), Step: decision, Budget: opts.Start.Budget}
		p, err := provider.Decide(ctx, in)
		if err != nil {
			if ctx.Err() != nil {
				res.Outcome, res.Reason = RunError, "interrupted"
				return device.Interrupted(ctx)
			}
			res.Outcome, res.Reason = RunProviderError, err.Error()
			return fault.Wrap(fault.Transport, RunProviderError, "the decision provider failed", err)
		}
		rec := StepRecord{Index: decision, Proposal: p, ObservationID: obs.ObservationID}
		switch p.Kind {
		case ProposalDone, ProposalBlocked:
			res.Steps = append(res.Steps, rec)
			notify(opts, rec)
			res.Outcome, res.Reason = string(p.Kind), p.Reason
			return nil
		case ProposalAct:
		default:
			rec.ErrorCode, rec.Error = CodeInvalidAction, fmt.Sprintf("unknown proposal kind %q", p.Kind)
			res.Steps = append(res.Steps, rec)
			notify(opts, rec)
			continue
		}
		args := p.Args
		if p.Selector != nil {
			if args.NodeID != nil {
				rec.ErrorCode, rec.Error = CodeInvalidSelector, "a proposal names both a nodeId and a selector"
				res.Steps = append(res.Steps, rec)
				notify(opts, rec)
				continue
			}
			nodeID, err := ResolveSelector(obs, *p.Selector)
			if err != nil {
				// The observation is not consumed: the provider may try
				// again on the same screen with what it learned.
				rec.ErrorCode, rec.Error = fault.From(err).Code, fault.From(err).Message
				res.Steps = append(res.Steps, rec)
				notify(opts, rec)
				continue
			}
			args.NodeID = &nodeID
		}
		if args.NodeID != nil {
			rec.NodeID = *args.NodeID
		}
		sent++
		req := ActRequest{
			Identity: id, StepID: fmt.Sprintf("%s-%03d", opts.StepIDPrefix, sent), ObservationID: obs.ObservationID,
			Action: p.Action, Args: args, Timeout: opts.ActionTimeout, PollInterval: opts.PollInterval,
		}
		rec.StepID = req.StepID
		if err := req.Validate(); err != nil {
			sent-- // nothing went to the device; the step id is reused
			rec.StepID = ""
			rec.ErrorCode, rec.Error = fault.From(err).Code, fault.From(err).Message
			res.Steps = append(res.Steps, rec)
			notify(opts, rec)
			continue
		}
		rec.Sent = true
		ar, err := client.Act(ctx, req)
		if ar != nil {
			rec.Receipt = ar.Receipt
			if ar.Session != nil {
				res.Session = ar.Session
			}
		}
		if err != nil {
			e := fault.From(err)
			rec.ErrorCode, rec.Error = e.Code, e.Message
			res.Steps = append(res.Steps, rec)
			notify(opts, rec)
			if cl, ok := e.Details["cleanup"].(AgentCleanup); ok {
				res.Cleanup = &cl
			}
			switch {
			case ar != nil && ar.Receipt != nil && ar.Receipt.Status == ReceiptRejected:
				res.Outcome, res.Reason = RunActionRejected, e.Code+": "+e.Message
				return nil
			case ar != nil && ar.Receipt != nil && ar.Receipt.Status == ReceiptFailed:
				res.Outcome, res.Reason = RunActionFailed, e.Code+": "+e.Message
				return nil
			case e.Code == CodeSessionTerminal:
				res.Outcome, res.Reason = RunSessionTerminal, e.Message
				return nil
			}
			res.Outcome, res.Reason = RunError, e.Code+": "+e.Message
			return err
		}
		res.Steps = append(res.Steps, rec)
		notify(opts, rec)
		obs = ar.SettledObservation()
		res.LastObservation = obs
		// A succeeded step can still end the session (no-progress limit).
		if res.Session.IsTerminal() {
			res.Outcome, res.Reason = RunSessionTerminal, "the device ended the session: "+res.Session.TerminalReason
			return nil
		}
	}
}

func notify(opts AgentRunOptions, rec StepRecord) {
	if opts.OnStep != nil {
		opts.OnStep(rec)
	}
}

// finishRun closes a live session (end after a normal stop, exact cancel
// after an error) and reads the timeline, with fresh bounded contexts so
// that an interrupted run still leaves the device clean and its evidence
// complete.
func finishRun(ctx context.Context, client *AgentClient, opts AgentRunOptions, id AgentIdentity, res *AgentRunResult, loopErr error) {
	if res.Cleanup != nil {
		// Act already cancelled the session after a timeout or interrupt.
		res.Finish = "cancel"
	} else if !res.Session.IsTerminal() {
		cctx, cancel := device.Cleanup(ctx, AgentCleanupTimeout+opts.EndTimeout)
		if loopErr == nil {
			res.Finish = "end"
			cr, err := client.End(cctx, id, ControlOptions{Timeout: opts.EndTimeout, PollInterval: opts.PollInterval})
			if cr != nil && cr.Session != nil {
				res.Session = cr.Session
			}
			if err != nil {
				res.FinishError = errorText(err)
			}
		} else {
			res.Finish = "cancel"
			cl := client.exactCancel(cctx, id)
			res.Cleanup = &cl
			if cl.Error != "" {
				res.FinishError = cl.Error
			}
		}
		cancel()
	}
	tctx, cancel := device.Cleanup(ctx, AgentCleanupTimeout)
	defer cancel()
	if s, err := client.Status(tctx, id); err == nil {
		res.Session = s
	}
	if tl, err := client.Timeline(tctx, id); err == nil {
		res.Timeline = tl
		if tl.TimelinePath != "" {
			res.TimelinePath = tl.TimelinePath
		}
	}
}

// argsMap renders action arguments with their wire names (absent ones
// omitted), for evidence and JSON output.
func argsMap(a protocol.ActionArgs) map[string]any {
	m := map[string]any{}
	if a.NodeID != nil {
		m[protocol.ParamNodeID] = *a.NodeID
	}
	if a.Text != nil {
		m[protocol.ParamText] = *a.Text
	}
	if a.Direction != nil {
		m[protocol.ParamDirection] = *a.Direction
	}
	if a.DurationMs != nil {
		m[protocol.ParamDurationMs] = *a.DurationMs
	}
	if a.Distance != nil {
		m[protocol.ParamDistance] = *a.Distance
	}
	return m
}

// MarshalJSON adds the action arguments under their wire names.
func (p Proposal) MarshalJSON() ([]byte, error) {
	type plain Proposal
	out := struct {
		plain
		Arguments map[string]any `json:"arguments,omitempty"`
	}{plain: plain(p)}
	if p.Kind == ProposalAct {
		out.Arguments = argsMap(p.Args)
	}
	return json.Marshal(out)
}

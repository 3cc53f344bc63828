package agentcmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/agent"
)

type actOptions struct {
	identityOptions
	stepID        string
	observationID string
	action        string
	nodeID, text  string
	direction     string
	durationMs    int64
	distance      int64
	selector      agent.Selector
	wait          waitOptions
}

func newCmdAct(e cmdutil.Env) *cli.Command {
	o := &actOptions{}
	return &cli.Command{
		Name:  "agent-act",
		Usage: "send one typed action and wait for its receipt and settled observation",
		UsageText: "solopi agent-act --session-id ID (--owner-token-file FILE | --owner-token TOKEN) --action ACTION\n" +
			"   [--observation-id ID] [--step-id ID] [--node-id ID | --resource-id R --selector-text T --description D\n" +
			"   --class-name C --package-name P --id N] [--text T] [--direction up|down|left|right] [--duration-ms MS] [--distance N]\n\n" +
			"A selector must match exactly one node of the observation (--observation-id, read back from the timeline;\n" +
			"without it a fresh observation is taken). Reuse --step-id to retry: the device returns the stored receipt.",
		Flags: append(o.identityOptions.flags(), append([]cli.Flag{
			&cli.StringFlag{Name: "action", Destination: &o.action, Usage: "click, longClick, input, back, home, scroll or wait"},
			&cli.StringFlag{Name: "step-id", Destination: &o.stepID, Usage: "idempotency key of this step (default: a fresh one)"},
			&cli.StringFlag{Name: "observation-id", Destination: &o.observationID, Usage: "the current observation the action refers to"},
			&cli.StringFlag{Name: "node-id", Destination: &o.nodeID, Usage: "target node of that observation (click, longClick, input; optional for scroll)"},
			&cli.StringFlag{Name: "text", Destination: &o.text, Usage: "text to type (input only; may be empty)"},
			&cli.StringFlag{Name: "direction", Destination: &o.direction, Usage: "scroll direction: up, down, left or right"},
			&cli.Int64Flag{Name: "duration-ms", Destination: &o.durationMs, Usage: "100..5000 (required for wait, optional for longClick)"},
			&cli.Int64Flag{Name: "distance", Destination: &o.distance, Usage: "scroll distance 1..90"},
			&cli.StringFlag{Name: "resource-id", Destination: &o.selector.ResourceID, Usage: "selector: exact resourceId"},
			&cli.StringFlag{Name: "selector-text", Destination: &o.selector.Text, Usage: "selector: exact text"},
			&cli.StringFlag{Name: "description", Destination: &o.selector.Description, Usage: "selector: exact content description"},
			&cli.StringFlag{Name: "class-name", Destination: &o.selector.ClassName, Usage: "selector: exact className"},
			&cli.StringFlag{Name: "package-name", Destination: &o.selector.PackageName, Usage: "selector: exact packageName"},
			&cli.StringFlag{Name: "id", Destination: &o.selector.ID, Usage: "selector: exact accessibility node id"},
		}, o.wait.flags("action-timeout")...)...),
		Action: cmdutil.OnDevice(e, o.guarded(func(ctx context.Context, d cmdutil.DeviceDeps, id agent.AgentIdentity) (cmdutil.Result, error) {
			return runAct(ctx, d, o, o.args(d.G), id)
		})),
	}
}

// args are the typed action arguments; a flag that was not given is absent
// on the wire (--text "" is present and empty).
func (o *actOptions) args(g *cmdutil.Globals) protocol.ActionArgs {
	var a protocol.ActionArgs
	str := func(name string, v string) *string {
		if !g.Changed(name) {
			return nil
		}
		return &v
	}
	num := func(name string, v int64) *int64 {
		if !g.Changed(name) {
			return nil
		}
		return &v
	}
	a.NodeID, a.Text, a.Direction = str("node-id", o.nodeID), str("text", o.text), str("direction", o.direction)
	a.DurationMs, a.Distance = num("duration-ms", o.durationMs), num("distance", o.distance)
	return a
}

type actResult struct {
	Success       bool   `json:"success"`
	SessionID     string `json:"sessionId"`
	StepID        string `json:"stepId"`
	ObservationID string `json:"observationId"`
	// ObservationSource says where the observation came from: "caller"
	// (--observation-id) or "observe" (a fresh one taken for this act).
	ObservationSource string                   `json:"observationSource"`
	Action            string                   `json:"action"`
	NodeID            string                   `json:"nodeId,omitempty"`
	Selector          *agent.Selector          `json:"selector,omitempty"`
	Replayed          bool                     `json:"replayed"`
	Receipt           *agent.AgentReceipt      `json:"receipt"`
	Session           *agent.AgentSession      `json:"session,omitempty"`
	SettledObsID      string                   `json:"settledObservationId,omitempty"`
	Foreground        *agent.ForegroundRestore `json:"foreground,omitempty"`
}

// validateAct checks everything that can be checked without the device
// (exit 3): identifiers, target, and the typed action schema (with a
// placeholder nodeId when a selector will supply it).
func validateAct(o *actOptions, args protocol.ActionArgs) error {
	if o.stepID != "" {
		if err := agent.CheckAgentID("--step-id", o.stepID); err != nil {
			return err
		}
	}
	if o.observationID != "" {
		if err := agent.CheckAgentID("--observation-id", o.observationID); err != nil {
			return err
		}
	}
	hasSel := !o.selector.IsZero()
	if hasSel && args.NodeID != nil {
		return fault.Usage(fault.CodeConflictingOptions, "target a node with --node-id or with a selector, not both")
	}
	if args.NodeID != nil {
		if err := agent.CheckAgentID("--node-id", *args.NodeID); err != nil {
			return err
		}
		if o.observationID == "" {
			return fault.Usage(fault.CodeMissingOption, "--node-id needs --observation-id: a nodeId only means something in the observation it came from")
		}
	}
	probe := args
	if hasSel {
		placeholder := "node-1"
		probe.NodeID = &placeholder
	}
	if msg := protocol.ValidateAction(o.action, probe); msg != "" {
		e := fault.Usage(fault.CodeInvalidAction, msg).With("action", o.action)
		if args.Text != nil && o.action != protocol.ActInput {
			e.WithUserAction("--text is the text typed by --action input; to select a node by its text use --selector-text")
		}
		return e
	}
	return nil
}

func runAct(ctx context.Context, d cmdutil.DeviceDeps, o *actOptions, args protocol.ActionArgs, id agent.AgentIdentity) (cmdutil.Result, error) {
	if o.action == "" {
		return cmdutil.Result{}, fault.Usage(fault.CodeMissingOption, "--action is required (click, longClick, input, back, home, scroll or wait)")
	}
	if err := validateAct(o, args); err != nil {
		return cmdutil.Result{}, err
	}
	stepID := o.stepID
	if stepID == "" {
		stepID = agent.NewStepID()
	}
	a, err := openAgent(ctx, d, o.wait.poll)
	if err != nil {
		return cmdutil.Result{}, err
	}
	defer a.Close()
	out := actResult{Success: true, SessionID: id.SessionID, StepID: stepID, Action: o.action, ObservationSource: "caller"}
	stepErr := func(err error) error {
		e := fault.From(err)
		if _, ok := e.Details["stepId"]; !ok {
			e.With("stepId", stepID)
		}
		if _, ok := e.Details["sessionId"]; !ok {
			e.With("sessionId", id.SessionID)
		}
		return e
	}
	obsID := o.observationID
	hasSel := !o.selector.IsZero()
	var obs *agent.Observation
	switch {
	case obsID == "":
		// No observation named: take a fresh one. It is the current one,
		// so the act cannot be stale unless the screen moves meanwhile.
		ob, err := a.c.Observe(ctx, id)
		if err != nil {
			return cmdutil.Result{}, stepErr(err)
		}
		obs, obsID, out.ObservationSource = ob.Observation, ob.Observation.ObservationID, "observe"
	case hasSel:
		// Resolve against the observation the caller named, read back from
		// the session's timeline: observing again would replace it.
		tl, err := a.c.Timeline(ctx, id)
		if err != nil {
			return cmdutil.Result{}, stepErr(err)
		}
		if obs, err = tl.FindObservation(obsID); err != nil {
			return cmdutil.Result{}, stepErr(err)
		}
	}
	out.ObservationID = obsID
	if hasSel {
		nodeID, err := agent.ResolveSelector(obs, o.selector)
		if err != nil {
			return cmdutil.Result{}, stepErr(fault.From(err).With("observationId", obsID))
		}
		args.NodeID = &nodeID
		sel := o.selector
		out.Selector = &sel
	}
	if args.NodeID != nil {
		out.NodeID = *args.NodeID
	}
	ar, err := a.c.Act(ctx, agent.ActRequest{Identity: id, StepID: stepID, ObservationID: obsID, Action: o.action, Args: args,
		Timeout: o.wait.timeout, PollInterval: o.wait.poll})
	if err != nil {
		e := fault.From(stepErr(err))
		if out.NodeID != "" {
			e.With("nodeId", out.NodeID)
		}
		return cmdutil.Result{}, e
	}
	out.Replayed, out.Receipt, out.Session, out.Foreground = ar.Replayed, ar.Receipt, ar.Session, ar.Foreground
	if so := ar.SettledObservation(); so != nil {
		out.SettledObsID = so.ObservationID
	}
	return cmdutil.OK(out), nil
}

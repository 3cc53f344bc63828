package agentcmd

import (
	"context"
	"time"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/agent"
	"github.com/solopi-dev/solopi/solopi/device"
)

// agentConn is an open SoloPi session with an Agent client on it.
type agentConn struct {
	s *device.Session
	c *agent.AgentClient
}

func (a *agentConn) Close() {
	a.c.Close()
	a.s.Close()
}

// openAgent opens a session that preserves the foreground (every agent
// command observes the app under test, never SoloPi's own window) and an
// Agent client that restores the foreground after each mutation.
func openAgent(ctx context.Context, d cmdutil.DeviceDeps, poll time.Duration) (*agentConn, error) {
	s, err := d.Session(ctx, true)
	if err != nil {
		return nil, err
	}
	c := agent.NewAgentClient(s.Device, agent.AgentOptions{Foreground: s.Foreground, PollInterval: poll})
	return &agentConn{s: s, c: c}, nil
}

// ---- agent-capabilities ----

func runAgentCapabilities(ctx context.Context, d cmdutil.DeviceDeps) (outcome.Result, error) {
	a, err := openAgent(ctx, d, 0)
	if err != nil {
		return outcome.Result{}, err
	}
	defer a.Close()
	caps, err := a.c.Capabilities(ctx)
	if err != nil {
		return outcome.Result{}, err
	}
	// The device object is printed as it is (it carries success:true).
	return outcome.OK(caps.Raw), nil
}

// ---- agent-session-start ----

type agentStartOptions struct {
	token        tokenInput
	tokenOut     string
	budget       agent.AgentBudget
	ackTimeout   time.Duration
	pollInterval time.Duration
}

type agentStartResult struct {
	Success          bool                    `json:"success"`
	SessionID        string                  `json:"sessionId"`
	Session          *agent.AgentSession     `json:"session"`
	Observation      *agent.Observation      `json:"observation"`
	TimelinePath     string                  `json:"timelinePath"`
	Budget           agent.AgentBudget       `json:"budget"`
	Foreground       agent.ForegroundRestore `json:"foreground"`
	OwnerTokenSource string                  `json:"ownerTokenSource"`
	OwnerTokenFile   string                  `json:"ownerTokenFile,omitempty"`
}

// runAgentStart starts a session. It returns the token to print (zero when
// it must not be printed) next to the result; the caller adds it after the
// output was scrubbed.
func runAgentStart(ctx context.Context, d cmdutil.DeviceDeps, o agentStartOptions, getenv func(string) string) (res outcome.Result, printTok, secret agent.OwnerToken, err error) {
	tok, src, err := resolveOwnerToken(o.token, getenv)
	if err != nil {
		return res, printTok, secret, err
	}
	if tok.IsZero() {
		tok, src = agent.NewOwnerToken(), tokenGenerated
	}
	secret = tok
	if err := o.budget.Validate(); err != nil {
		return res, printTok, secret, err
	}
	a, err := openAgent(ctx, d, o.pollInterval)
	if err != nil {
		return res, printTok, secret, err
	}
	defer a.Close()
	out := agentStartResult{Success: true, Budget: o.budget, OwnerTokenSource: src}
	if o.tokenOut != "" {
		// Written before the start so that a session is never created
		// whose token could not be kept.
		if out.OwnerTokenFile, err = writeTokenFile(o.tokenOut, tok); err != nil {
			return res, printTok, secret, err
		}
	}
	// The token is printed once, when the caller has no other copy that it
	// chose to keep out of sight: a generated token without
	// --owner-token-out, or one given on the command line (visible in the
	// process list anyway, and what solopi-ai scripts read back).
	printable := out.OwnerTokenFile == "" && (src == tokenGenerated || src == tokenFlag)
	st, err := a.c.Start(ctx, agent.StartOptions{OwnerToken: tok, Budget: o.budget, AckTimeout: o.ackTimeout, PollInterval: o.pollInterval})
	if err != nil {
		e := fault.From(err)
		if out.OwnerTokenFile != "" {
			e.With("ownerTokenFile", out.OwnerTokenFile)
		}
		if sid, _ := e.Details["sessionId"].(string); sid != "" && printable {
			// A session exists: its token goes with the error, as
			// solopi-ai prints it, so that a script can end it.
			printTok = tok
		}
		return res, printTok, secret, e
	}
	out.SessionID, out.Session, out.Observation = st.Session.SessionID, st.Session, st.Observation
	out.TimelinePath, out.Foreground = st.TimelinePath, st.Foreground
	if printable {
		printTok = tok
	}
	d.G.Progress.Printf("agent session %s started (observation %s)", st.Session.SessionID, st.Observation.ObservationID)
	return outcome.OK(out), printTok, secret, nil
}

// ---- identity of every other command ----

type agentIdentityOptions struct {
	sessionID string
	token     tokenInput
}

// identity validates the session id and resolves the owner token (exit 3
// when missing or malformed).
func (o agentIdentityOptions) identity(getenv func(string) string) (agent.AgentIdentity, error) {
	tok, _, err := resolveOwnerToken(o.token, getenv)
	if err != nil {
		return agent.AgentIdentity{}, err
	}
	id := agent.AgentIdentity{SessionID: o.sessionID, OwnerToken: tok}
	if err := agent.CheckAgentID("--session-id", o.sessionID); err != nil {
		return id, err
	}
	if tok.IsZero() {
		return id, fault.Usage(agent.CodeMissingOwnerToken, "an owner token is required: --owner-token, --owner-token-file or "+EnvOwnerToken)
	}
	return id, nil
}

// ---- agent-observe ----

type agentObserveOptions struct {
	agentIdentityOptions
	screenshotOutput string
	overwrite        bool
}

type agentObserveResult struct {
	Success     bool                `json:"success"`
	SessionID   string              `json:"sessionId"`
	Session     *agent.AgentSession `json:"session"`
	Observation *agent.Observation  `json:"observation"`
	Screenshot  *agent.SavedFile    `json:"screenshot,omitempty"`
}

func runAgentObserve(ctx context.Context, d cmdutil.DeviceDeps, o agentObserveOptions, id agent.AgentIdentity) (outcome.Result, error) {
	if o.screenshotOutput != "" {
		// Fail before observing: an observe makes the previous observation
		// stale, so it must not be spent on a command that cannot finish.
		if err := checkLocalOutput(o.screenshotOutput, o.overwrite); err != nil {
			return outcome.Result{}, err
		}
	}
	a, err := openAgent(ctx, d, 0)
	if err != nil {
		return outcome.Result{}, err
	}
	defer a.Close()
	ob, err := a.c.Observe(ctx, id)
	if err != nil {
		return outcome.Result{}, err
	}
	out := agentObserveResult{Success: true, SessionID: id.SessionID, Session: ob.Session, Observation: ob.Observation}
	if o.screenshotOutput != "" {
		f, err := a.c.SaveScreenshot(ctx, id, ob.Observation, o.screenshotOutput, o.overwrite)
		if err != nil {
			// The new observation is current now: the caller needs it.
			e := fault.From(err).With("sessionId", id.SessionID).With("session", ob.Session).With("observation", ob.Observation)
			return outcome.Result{}, e
		}
		out.Screenshot = f
	}
	return outcome.OK(out), nil
}

// checkLocalOutput refuses an existing file without --overwrite, a
// directory, or a missing parent directory, before any device work.
func checkLocalOutput(path string, overwrite bool) error {
	return agent.CheckOutputPath(path, overwrite)
}

// ---- agent-act ----

type agentActOptions struct {
	agentIdentityOptions
	stepID        string
	observationID string
	action        string
	args          protocol.ActionArgs
	selector      agent.Selector
	actionTimeout time.Duration
	pollInterval  time.Duration
}

type agentActResult struct {
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
func validateAct(o agentActOptions) error {
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
	if hasSel && o.args.NodeID != nil {
		return fault.Usage("conflicting_options", "target a node with --node-id or with a selector, not both")
	}
	if o.args.NodeID != nil {
		if err := agent.CheckAgentID("--node-id", *o.args.NodeID); err != nil {
			return err
		}
		if o.observationID == "" {
			return fault.Usage("missing_option", "--node-id needs --observation-id: a nodeId only means something in the observation it came from")
		}
	}
	probe := o.args
	if hasSel {
		placeholder := "node-1"
		probe.NodeID = &placeholder
	}
	if msg := protocol.ValidateAction(o.action, probe); msg != "" {
		e := fault.Usage(agent.CodeInvalidAction, msg).With("action", o.action)
		if o.args.Text != nil && o.action != protocol.ActInput {
			e.WithUserAction("--text is the text typed by --action input; to select a node by its text use --selector-text")
		}
		return e
	}
	return nil
}

func runAgentAct(ctx context.Context, d cmdutil.DeviceDeps, o agentActOptions, id agent.AgentIdentity) (outcome.Result, error) {
	if o.action == "" {
		return outcome.Result{}, fault.Usage("missing_option", "--action is required (click, longClick, input, back, home, scroll or wait)")
	}
	if err := validateAct(o); err != nil {
		return outcome.Result{}, err
	}
	stepID := o.stepID
	if stepID == "" {
		stepID = agent.NewStepID()
	}
	a, err := openAgent(ctx, d, o.pollInterval)
	if err != nil {
		return outcome.Result{}, err
	}
	defer a.Close()
	out := agentActResult{Success: true, SessionID: id.SessionID, StepID: stepID, Action: o.action, ObservationSource: "caller"}
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
	args := o.args
	obsID := o.observationID
	hasSel := !o.selector.IsZero()
	var obs *agent.Observation
	switch {
	case obsID == "":
		// No observation named: take a fresh one. It is the current one,
		// so the act cannot be stale unless the screen moves meanwhile.
		ob, err := a.c.Observe(ctx, id)
		if err != nil {
			return outcome.Result{}, stepErr(err)
		}
		obs, obsID, out.ObservationSource = ob.Observation, ob.Observation.ObservationID, "observe"
	case hasSel:
		// Resolve against the observation the caller named, read back from
		// the session's timeline: observing again would replace it.
		tl, err := a.c.Timeline(ctx, id)
		if err != nil {
			return outcome.Result{}, stepErr(err)
		}
		if obs, err = tl.FindObservation(obsID); err != nil {
			return outcome.Result{}, stepErr(err)
		}
	}
	out.ObservationID = obsID
	if hasSel {
		nodeID, err := agent.ResolveSelector(obs, o.selector)
		if err != nil {
			return outcome.Result{}, stepErr(fault.From(err).With("observationId", obsID))
		}
		args.NodeID = &nodeID
		sel := o.selector
		out.Selector = &sel
	}
	if args.NodeID != nil {
		out.NodeID = *args.NodeID
	}
	ar, err := a.c.Act(ctx, agent.ActRequest{Identity: id, StepID: stepID, ObservationID: obsID, Action: o.action, Args: args,
		Timeout: o.actionTimeout, PollInterval: o.pollInterval})
	if err != nil {
		e := fault.From(stepErr(err))
		if out.NodeID != "" {
			e.With("nodeId", out.NodeID)
		}
		return outcome.Result{}, e
	}
	out.Replayed, out.Receipt, out.Session, out.Foreground = ar.Replayed, ar.Receipt, ar.Session, ar.Foreground
	if so := ar.SettledObservation(); so != nil {
		out.SettledObsID = so.ObservationID
	}
	return outcome.OK(out), nil
}

// ---- agent-receipt / agent-status ----

type agentReceiptResult struct {
	Success   bool                `json:"success"`
	SessionID string              `json:"sessionId"`
	StepID    string              `json:"stepId"`
	Receipt   *agent.AgentReceipt `json:"receipt"`
	Session   *agent.AgentSession `json:"session,omitempty"`
}

func runAgentReceipt(ctx context.Context, d cmdutil.DeviceDeps, id agent.AgentIdentity, stepID string) (outcome.Result, error) {
	if err := agent.CheckAgentID("--step-id", stepID); err != nil {
		return outcome.Result{}, err
	}
	a, err := openAgent(ctx, d, 0)
	if err != nil {
		return outcome.Result{}, err
	}
	defer a.Close()
	r, err := a.c.Receipt(ctx, id, stepID)
	if err != nil {
		return outcome.Result{}, err
	}
	return outcome.OK(agentReceiptResult{Success: true, SessionID: id.SessionID, StepID: stepID, Receipt: r.Receipt, Session: r.Session}), nil
}

type agentStatusResult struct {
	Success   bool                `json:"success"`
	SessionID string              `json:"sessionId"`
	State     string              `json:"state"`
	Session   *agent.AgentSession `json:"session"`
}

func runAgentStatus(ctx context.Context, d cmdutil.DeviceDeps, id agent.AgentIdentity) (outcome.Result, error) {
	a, err := openAgent(ctx, d, 0)
	if err != nil {
		return outcome.Result{}, err
	}
	defer a.Close()
	s, err := a.c.Status(ctx, id)
	if err != nil {
		return outcome.Result{}, err
	}
	return outcome.OK(agentStatusResult{Success: true, SessionID: id.SessionID, State: s.State, Session: s}), nil
}

// ---- agent-pause / resume / end / cancel ----

type agentControlOptions struct {
	agentIdentityOptions
	ackTimeout   time.Duration
	pollInterval time.Duration
}

type agentControlResult struct {
	Success    bool                     `json:"success"`
	SessionID  string                   `json:"sessionId"`
	State      string                   `json:"state"`
	Changed    bool                     `json:"changed"`
	Session    *agent.AgentSession      `json:"session"`
	Foreground *agent.ForegroundRestore `json:"foreground,omitempty"`
}

type controlFunc func(c *agent.AgentClient, ctx context.Context, id agent.AgentIdentity, o agent.ControlOptions) (*agent.ControlResult, error)

func runAgentControl(ctx context.Context, d cmdutil.DeviceDeps, o agentControlOptions, id agent.AgentIdentity, fn controlFunc) (outcome.Result, error) {
	a, err := openAgent(ctx, d, o.pollInterval)
	if err != nil {
		return outcome.Result{}, err
	}
	defer a.Close()
	r, err := fn(a.c, ctx, id, agent.ControlOptions{Timeout: o.ackTimeout, PollInterval: o.pollInterval})
	if err != nil {
		e := fault.From(err)
		if r != nil && r.Session != nil {
			if _, ok := e.Details["session"]; !ok {
				e.With("session", r.Session)
			}
		}
		return outcome.Result{}, e
	}
	return outcome.OK(agentControlResult{Success: true, SessionID: id.SessionID, State: r.Session.State, Changed: r.Changed,
		Session: r.Session, Foreground: r.Foreground}), nil
}

// ---- agent-timeline ----

type agentTimelineOptions struct {
	agentIdentityOptions
	output    string
	overwrite bool
}

type agentTimelineResult struct {
	Success      bool               `json:"success"`
	SessionID    string             `json:"sessionId"`
	TimelinePath string             `json:"timelinePath"`
	Events       []agent.AgentEvent `json:"events"`
	agent.TimelineCheck
	File *agent.SavedTimeline `json:"file,omitempty"`
}

func runAgentTimeline(ctx context.Context, d cmdutil.DeviceDeps, o agentTimelineOptions, id agent.AgentIdentity) (outcome.Result, error) {
	if o.output != "" {
		if err := checkLocalOutput(o.output, o.overwrite); err != nil {
			return outcome.Result{}, err
		}
	}
	a, err := openAgent(ctx, d, 0)
	if err != nil {
		return outcome.Result{}, err
	}
	defer a.Close()
	tl, err := a.c.Timeline(ctx, id)
	if err != nil {
		return outcome.Result{}, err
	}
	events := tl.Events
	if events == nil {
		events = []agent.AgentEvent{}
	}
	out := agentTimelineResult{Success: true, SessionID: id.SessionID, TimelinePath: tl.TimelinePath, Events: events, TimelineCheck: tl.Check}
	if o.output != "" {
		f, err := a.c.SaveTimeline(ctx, id, tl.TimelinePath, o.output, o.overwrite)
		if err != nil {
			return outcome.Result{}, err
		}
		out.File = f
	}
	return outcome.OK(out), nil
}

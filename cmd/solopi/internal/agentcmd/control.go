package agentcmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/agent"
)

// The session queries and controls: agent-capabilities, agent-receipt,
// agent-status, agent-pause, agent-resume, agent-end, agent-cancel.

func newCmdCapabilities(e cmdutil.Env) *cli.Command {
	return &cli.Command{
		Name:      "agent-capabilities",
		Usage:     "print the device's Agent protocol version, queries, commands and typed actions",
		UsageText: "solopi agent-capabilities",
		Action:    cmdutil.OnDevice(e, runCapabilities),
	}
}

func runCapabilities(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
	a, err := openAgent(ctx, d, 0)
	if err != nil {
		return cmdutil.Result{}, err
	}
	defer a.Close()
	caps, err := a.c.Capabilities(ctx)
	if err != nil {
		return cmdutil.Result{}, err
	}
	// The device object is printed as it is (it carries success:true).
	return cmdutil.OK(caps.Raw), nil
}

type receiptOptions struct {
	identityOptions
	stepID string
}

func newCmdReceipt(e cmdutil.Env) *cli.Command {
	o := &receiptOptions{}
	return &cli.Command{
		Name:      "agent-receipt",
		Usage:     "print the receipt of one step",
		UsageText: "solopi agent-receipt --session-id ID (--owner-token-file FILE | --owner-token TOKEN) --step-id ID",
		Flags:     append(o.identityOptions.flags(), &cli.StringFlag{Name: "step-id", Destination: &o.stepID, Usage: "the step's stepId"}),
		Action: cmdutil.OnDevice(e, o.guarded(func(ctx context.Context, d cmdutil.DeviceDeps, id agent.AgentIdentity) (cmdutil.Result, error) {
			return runReceipt(ctx, d, id, o.stepID)
		})),
	}
}

type receiptResult struct {
	Success   bool                `json:"success"`
	SessionID string              `json:"sessionId"`
	StepID    string              `json:"stepId"`
	Receipt   *agent.AgentReceipt `json:"receipt"`
	Session   *agent.AgentSession `json:"session,omitempty"`
}

func runReceipt(ctx context.Context, d cmdutil.DeviceDeps, id agent.AgentIdentity, stepID string) (cmdutil.Result, error) {
	if err := agent.CheckAgentID("--step-id", stepID); err != nil {
		return cmdutil.Result{}, err
	}
	a, err := openAgent(ctx, d, 0)
	if err != nil {
		return cmdutil.Result{}, err
	}
	defer a.Close()
	r, err := a.c.Receipt(ctx, id, stepID)
	if err != nil {
		return cmdutil.Result{}, err
	}
	return cmdutil.OK(receiptResult{Success: true, SessionID: id.SessionID, StepID: stepID, Receipt: r.Receipt, Session: r.Session}), nil
}

func newCmdStatus(e cmdutil.Env) *cli.Command {
	o := &identityOptions{}
	return &cli.Command{
		Name:      "agent-status",
		Usage:     "print the session snapshot (this refreshes the device's idle timer)",
		UsageText: "solopi agent-status --session-id ID (--owner-token-file FILE | --owner-token TOKEN)",
		Flags:     o.flags(),
		Action:    cmdutil.OnDevice(e, o.guarded(runStatus)),
	}
}

type statusResult struct {
	Success   bool                `json:"success"`
	SessionID string              `json:"sessionId"`
	State     string              `json:"state"`
	Session   *agent.AgentSession `json:"session"`
}

func runStatus(ctx context.Context, d cmdutil.DeviceDeps, id agent.AgentIdentity) (cmdutil.Result, error) {
	a, err := openAgent(ctx, d, 0)
	if err != nil {
		return cmdutil.Result{}, err
	}
	defer a.Close()
	s, err := a.c.Status(ctx, id)
	if err != nil {
		return cmdutil.Result{}, err
	}
	return cmdutil.OK(statusResult{Success: true, SessionID: id.SessionID, State: s.State, Session: s}), nil
}

type controlOptions struct {
	identityOptions
	wait waitOptions
}

type controlResult struct {
	Success    bool                     `json:"success"`
	SessionID  string                   `json:"sessionId"`
	State      string                   `json:"state"`
	Changed    bool                     `json:"changed"`
	Session    *agent.AgentSession      `json:"session"`
	Foreground *agent.ForegroundRestore `json:"foreground,omitempty"`
}

// controlFunc is one of the session controls of the Agent client.
type controlFunc func(c *agent.AgentClient, ctx context.Context, id agent.AgentIdentity, o agent.ControlOptions) (*agent.ControlResult, error)

func newCmdControl(e cmdutil.Env, name, usage string, fn controlFunc) *cli.Command {
	o := &controlOptions{}
	return &cli.Command{
		Name: name, Usage: usage,
		UsageText: "solopi " + name + " --session-id ID (--owner-token-file FILE | --owner-token TOKEN) [--ack-timeout 15] [--poll-interval 0.2]",
		Flags:     append(o.identityOptions.flags(), o.wait.flags("ack-timeout")...),
		Action: cmdutil.OnDevice(e, o.guarded(func(ctx context.Context, d cmdutil.DeviceDeps, id agent.AgentIdentity) (cmdutil.Result, error) {
			return runControl(ctx, d, o, id, fn)
		})),
	}
}

func runControl(ctx context.Context, d cmdutil.DeviceDeps, o *controlOptions, id agent.AgentIdentity, fn controlFunc) (cmdutil.Result, error) {
	a, err := openAgent(ctx, d, o.wait.poll)
	if err != nil {
		return cmdutil.Result{}, err
	}
	defer a.Close()
	r, err := fn(a.c, ctx, id, agent.ControlOptions{Timeout: o.wait.timeout, PollInterval: o.wait.poll})
	if err != nil {
		e := fault.From(err)
		if r != nil && r.Session != nil {
			if _, ok := e.Details["session"]; !ok {
				e.With("session", r.Session)
			}
		}
		return cmdutil.Result{}, e
	}
	return cmdutil.OK(controlResult{Success: true, SessionID: id.SessionID, State: r.Session.State, Changed: r.Changed,
		Session: r.Session, Foreground: r.Foreground}), nil
}

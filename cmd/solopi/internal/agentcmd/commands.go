package agentcmd

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/agent"
	"github.com/solopi-dev/solopi/solopi/device"
)

// Commands are the dynamic Agent commands (protocol 1.0), command- and
// flag-compatible with solopi-ai: agent-capabilities, agent-session-start,
// agent-observe, agent-act, agent-receipt, agent-status, agent-timeline,
// agent-pause, agent-resume, agent-end, agent-cancel.
//
// No flag is marked Required: the run functions check them and answer with
// a JSON usage error (exit 3) naming the missing option.
func Commands(e cmdutil.Env) []*cli.Command {
	return []*cli.Command{
		newCmdCapabilities(e), newCmdSessionStart(e), newCmdObserve(e), newCmdAct(e), newCmdReceipt(e), newCmdStatus(e), newCmdTimeline(e),
		newCmdControl(e, "agent-pause", "pause an active session (observe still works; act is rejected)", (*agent.AgentClient).Pause),
		newCmdControl(e, "agent-resume", "resume a paused session", (*agent.AgentClient).Resume),
		newCmdControl(e, "agent-end", "end the session normally and release the device", (*agent.AgentClient).End),
		newCmdControl(e, "agent-cancel", "cancel the session, even while an action executes", (*agent.AgentClient).Cancel),
	}
}

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

// waitOptions are a command's wait for the device and its poll interval.
type waitOptions struct {
	timeout, poll time.Duration
}

// flags bind timeoutName and --poll-interval.
func (w *waitOptions) flags(timeoutName string) []cli.Flag {
	return []cli.Flag{
		cmdutil.Seconds(timeoutName, "seconds to wait for the device to publish the outcome", 15, &w.timeout),
		cmdutil.Seconds("poll-interval", "longest pause between polls, in seconds", 0.2, &w.poll),
	}
}

// identityOptions name the session a command acts on and its owner.
type identityOptions struct {
	sessionID string
	token     tokenInput
}

func (o *identityOptions) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "session-id", Destination: &o.sessionID, Usage: "the session's sessionId (from agent-session-start)"},
		&cli.StringFlag{Name: "owner-token", Destination: &o.token.flag, Usage: "the session's owner token (visible in the process list; prefer --owner-token-file or " + envOwnerToken + ")"},
		&cli.StringFlag{Name: "owner-token-file", Destination: &o.token.file, Usage: "read the owner token from this file"},
	}
}

// identity validates the session id and resolves the owner token (exit 3
// when missing or malformed).
func (o *identityOptions) identity(getenv func(string) string) (agent.AgentIdentity, error) {
	tok, _, err := resolveOwnerToken(o.token, getenv)
	if err != nil {
		return agent.AgentIdentity{}, err
	}
	id := agent.AgentIdentity{SessionID: o.sessionID, OwnerToken: tok}
	if err := agent.CheckAgentID("--session-id", o.sessionID); err != nil {
		return id, err
	}
	if tok.IsZero() {
		return id, fault.Usage(fault.CodeMissingOwnerToken, "an owner token is required: --owner-token, --owner-token-file or "+envOwnerToken)
	}
	return id, nil
}

// guarded is the run function of a command on a session: fn runs with the
// identity resolved, and whatever it prints is scrubbed of the owner
// token, whatever path produced it.
func (o *identityOptions) guarded(fn func(ctx context.Context, d cmdutil.DeviceDeps, id agent.AgentIdentity) (cmdutil.Result, error)) func(context.Context, cmdutil.DeviceDeps) (cmdutil.Result, error) {
	return func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
		id, err := o.identity(d.G.Env.Getenv)
		if err != nil {
			return scrubOutput(id.OwnerToken, cmdutil.Result{}, err)
		}
		res, err := fn(ctx, d, id)
		return scrubOutput(id.OwnerToken, res, err)
	}
}

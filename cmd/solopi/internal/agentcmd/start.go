package agentcmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/agent"
)

type startOptions struct {
	token    tokenInput
	tokenOut string
	budget   agent.AgentBudget
	wait     waitOptions
}

func newCmdSessionStart(e cmdutil.Env) *cli.Command {
	o := &startOptions{}
	return &cli.Command{
		Name:  "agent-session-start",
		Usage: "start a dynamic Agent session and wait for its first observation",
		UsageText: "solopi agent-session-start [--owner-token-out FILE] [--max-steps 50] [--max-duration-ms 300000]\n" +
			"   [--idle-timeout-ms 30000] [--max-repeated-actions 3] [--max-no-progress-steps 3] [--ack-timeout 15]\n\n" +
			"A fresh 64-hex owner token is generated unless one is given; it is printed once (as ownerToken) unless\n" +
			"--owner-token-out writes it to a new 0600 file instead.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "owner-token", Destination: &o.token.flag, Usage: "use this owner token instead of a generated one"},
			&cli.StringFlag{Name: "owner-token-file", Destination: &o.token.file, Usage: "read the owner token to use from this file"},
			&cli.StringFlag{Name: "owner-token-out", Destination: &o.tokenOut, Usage: "write the owner token to this new file (mode 0600) instead of printing it"},
			&cli.Int64Flag{Name: "max-steps", Destination: &o.budget.MaxSteps, Usage: "accepted actions allowed (1..200)", Value: protocol.AgentMaxSteps.Default},
			&cli.Int64Flag{Name: "max-duration-ms", Destination: &o.budget.MaxDurationMs, Usage: "session lifetime (1000..1800000)", Value: protocol.AgentMaxDurationMs.Default},
			&cli.Int64Flag{Name: "idle-timeout-ms", Destination: &o.budget.IdleTimeoutMs, Usage: "idle time before the device expires the session (1000..300000)", Value: protocol.AgentIdleTimeoutMs.Default},
			&cli.Int64Flag{Name: "max-repeated-actions", Destination: &o.budget.MaxRepeatedActions, Usage: "identical consecutive actions allowed (1..20)", Value: protocol.AgentMaxRepeatedActions.Default},
			&cli.Int64Flag{Name: "max-no-progress-steps", Destination: &o.budget.MaxNoProgressSteps, Usage: "steps without a UI change allowed (1..20)", Value: protocol.AgentMaxNoProgressSteps.Default},
		}, o.wait.flags("ack-timeout")...),
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			res, printTok, secret, err := runStart(ctx, d, o, e.Getenv)
			res, err = scrubOutput(secret, res, err)
			switch {
			case printTok.IsZero():
			case err != nil:
				return res, fault.From(err).With("ownerToken", printTok.Reveal())
			default:
				return addOwnerToken(res, printTok)
			}
			return res, err
		}),
	}
}

type startResult struct {
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

// runStart starts a session. It returns the token to print (zero when it
// must not be printed) next to the result; the caller adds it after the
// output was scrubbed.
func runStart(ctx context.Context, d cmdutil.DeviceDeps, o *startOptions, getenv func(string) string) (res cmdutil.Result, printTok, secret agent.OwnerToken, err error) {
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
	a, err := openAgent(ctx, d, o.wait.poll)
	if err != nil {
		return res, printTok, secret, err
	}
	defer a.Close()
	out := startResult{Success: true, Budget: o.budget, OwnerTokenSource: src}
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
	st, err := a.c.Start(ctx, agent.StartOptions{OwnerToken: tok, Budget: o.budget, AckTimeout: o.wait.timeout, PollInterval: o.wait.poll})
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
	return cmdutil.OK(out), printTok, secret, nil
}

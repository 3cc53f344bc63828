package agentcmd

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/agent"
)

// Commands are the dynamic Agent commands (protocol 1.0), command- and
// flag-compatible with solopi-ai: agent-capabilities, agent-session-start,
// agent-observe, agent-act, agent-receipt, agent-status, agent-timeline,
// agent-pause, agent-resume, agent-end, agent-cancel.
//
// No flag is marked Required: the run functions check them and answer with
// a JSON usage error (exit 3) naming the missing option.
func Commands(exit *int, e cmdutil.Env) []*cli.Command {
	identityFlags := func() []cli.Flag {
		return []cli.Flag{
			&cli.StringFlag{Name: "session-id", Usage: "the session's sessionId (from agent-session-start)"},
			&cli.StringFlag{Name: "owner-token", Usage: "the session's owner token (visible in the process list; prefer --owner-token-file or " + EnvOwnerToken + ")"},
			&cli.StringFlag{Name: "owner-token-file", Usage: "read the owner token from this file"},
		}
	}
	waitFlags := func(timeoutName string) []cli.Flag {
		return []cli.Flag{
			&cli.Float64Flag{Name: timeoutName, Usage: "seconds to wait for the device to publish the outcome", Value: 15},
			&cli.Float64Flag{Name: "poll-interval", Usage: "longest pause between polls, in seconds", Value: 0.2},
		}
	}
	identity := func(c *cli.Context) agentIdentityOptions {
		return agentIdentityOptions{sessionID: c.String("session-id"), token: tokenInput{flag: c.String("owner-token"), file: c.String("owner-token-file")}}
	}
	// guarded runs fn with the session identity resolved and scrubs the
	// output of the owner token, whatever path produced it.
	guarded := func(fn func(ctx context.Context, g *cmdutil.Globals, c *cli.Context, id agent.AgentIdentity) (outcome.Result, error)) cli.ActionFunc {
		return cmdutil.Action(exit, e, func(ctx context.Context, g *cmdutil.Globals, c *cli.Context) (outcome.Result, error) {
			id, err := identity(c).identity(e.Getenv)
			if err != nil {
				return scrubOutput(id.OwnerToken, outcome.Result{}, err)
			}
			res, err := fn(ctx, g, c, id)
			return scrubOutput(id.OwnerToken, res, err)
		})
	}
	control := func(name, usage string, fn controlFunc) *cli.Command {
		return &cli.Command{
			Name: name, Usage: usage,
			UsageText: "solopi " + name + " --session-id ID (--owner-token-file FILE | --owner-token TOKEN) [--ack-timeout 15] [--poll-interval 0.2]",
			Flags:     append(identityFlags(), waitFlags("ack-timeout")...),
			Action: guarded(func(ctx context.Context, g *cmdutil.Globals, c *cli.Context, id agent.AgentIdentity) (outcome.Result, error) {
				ack, poll, err := waits(c, "ack-timeout")
				if err != nil {
					return outcome.Result{}, err
				}
				o := agentControlOptions{agentIdentityOptions: identity(c), ackTimeout: ack, pollInterval: poll}
				return runAgentControl(ctx, g.Deps(), o, id, fn)
			}),
		}
	}
	return []*cli.Command{
		{
			Name:      "agent-capabilities",
			Usage:     "print the device's Agent protocol version, queries, commands and typed actions",
			UsageText: "solopi agent-capabilities",
			Action: cmdutil.Action(exit, e, func(ctx context.Context, g *cmdutil.Globals, c *cli.Context) (outcome.Result, error) {
				return runAgentCapabilities(ctx, g.Deps())
			}),
		},
		{
			Name:  "agent-session-start",
			Usage: "start a dynamic Agent session and wait for its first observation",
			UsageText: "solopi agent-session-start [--owner-token-out FILE] [--max-steps 50] [--max-duration-ms 300000]\n" +
				"   [--idle-timeout-ms 30000] [--max-repeated-actions 3] [--max-no-progress-steps 3] [--ack-timeout 15]\n\n" +
				"A fresh 64-hex owner token is generated unless one is given; it is printed once (as ownerToken) unless\n" +
				"--owner-token-out writes it to a new 0600 file instead.",
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "owner-token", Usage: "use this owner token instead of a generated one"},
				&cli.StringFlag{Name: "owner-token-file", Usage: "read the owner token to use from this file"},
				&cli.StringFlag{Name: "owner-token-out", Usage: "write the owner token to this new file (mode 0600) instead of printing it"},
				&cli.Int64Flag{Name: "max-steps", Usage: "accepted actions allowed (1..200)", Value: protocol.AgentMaxSteps.Default},
				&cli.Int64Flag{Name: "max-duration-ms", Usage: "session lifetime (1000..1800000)", Value: protocol.AgentMaxDurationMs.Default},
				&cli.Int64Flag{Name: "idle-timeout-ms", Usage: "idle time before the device expires the session (1000..300000)", Value: protocol.AgentIdleTimeoutMs.Default},
				&cli.Int64Flag{Name: "max-repeated-actions", Usage: "identical consecutive actions allowed (1..20)", Value: protocol.AgentMaxRepeatedActions.Default},
				&cli.Int64Flag{Name: "max-no-progress-steps", Usage: "steps without a UI change allowed (1..20)", Value: protocol.AgentMaxNoProgressSteps.Default},
			}, waitFlags("ack-timeout")...),
			Action: cmdutil.Action(exit, e, func(ctx context.Context, g *cmdutil.Globals, c *cli.Context) (outcome.Result, error) {
				ack, poll, err := waits(c, "ack-timeout")
				if err != nil {
					return outcome.Result{}, err
				}
				o := agentStartOptions{
					token:    tokenInput{flag: c.String("owner-token"), file: c.String("owner-token-file")},
					tokenOut: c.String("owner-token-out"),
					budget: agent.AgentBudget{
						MaxSteps: c.Int64("max-steps"), MaxDurationMs: c.Int64("max-duration-ms"), IdleTimeoutMs: c.Int64("idle-timeout-ms"),
						MaxRepeatedActions: c.Int64("max-repeated-actions"), MaxNoProgressSteps: c.Int64("max-no-progress-steps"),
					},
					ackTimeout: ack, pollInterval: poll,
				}
				res, printTok, secret, err := runAgentStart(ctx, g.Deps(), o, e.Getenv)
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
		},
		{
			Name:      "agent-observe",
			Usage:     "take a new observation (UI tree with nodeIds, tree and screenshot hashes); the previous one becomes stale",
			UsageText: "solopi agent-observe --session-id ID (--owner-token-file FILE | --owner-token TOKEN) [--screenshot-output FILE [--overwrite]]",
			Flags: append(identityFlags(),
				&cli.StringFlag{Name: "screenshot-output", Usage: "pull the observation's screenshot to this file (SHA-256 checked)"},
				&cli.BoolFlag{Name: "overwrite", Usage: "replace --screenshot-output if it exists"},
			),
			Action: guarded(func(ctx context.Context, g *cmdutil.Globals, c *cli.Context, id agent.AgentIdentity) (outcome.Result, error) {
				o := agentObserveOptions{agentIdentityOptions: identity(c), screenshotOutput: c.String("screenshot-output"), overwrite: c.Bool("overwrite")}
				return runAgentObserve(ctx, g.Deps(), o, id)
			}),
		},
		{
			Name:  "agent-act",
			Usage: "send one typed action and wait for its receipt and settled observation",
			UsageText: "solopi agent-act --session-id ID (--owner-token-file FILE | --owner-token TOKEN) --action ACTION\n" +
				"   [--observation-id ID] [--step-id ID] [--node-id ID | --resource-id R --selector-text T --description D\n" +
				"   --class-name C --package-name P --id N] [--text T] [--direction up|down|left|right] [--duration-ms MS] [--distance N]\n\n" +
				"A selector must match exactly one node of the observation (--observation-id, read back from the timeline;\n" +
				"without it a fresh observation is taken). Reuse --step-id to retry: the device returns the stored receipt.",
			Flags: append(identityFlags(), append([]cli.Flag{
				&cli.StringFlag{Name: "action", Usage: "click, longClick, input, back, home, scroll or wait"},
				&cli.StringFlag{Name: "step-id", Usage: "idempotency key of this step (default: a fresh one)"},
				&cli.StringFlag{Name: "observation-id", Usage: "the current observation the action refers to"},
				&cli.StringFlag{Name: "node-id", Usage: "target node of that observation (click, longClick, input; optional for scroll)"},
				&cli.StringFlag{Name: "text", Usage: "text to type (input only; may be empty)"},
				&cli.StringFlag{Name: "direction", Usage: "scroll direction: up, down, left or right"},
				&cli.Int64Flag{Name: "duration-ms", Usage: "100..5000 (required for wait, optional for longClick)"},
				&cli.Int64Flag{Name: "distance", Usage: "scroll distance 1..90"},
				&cli.StringFlag{Name: "resource-id", Usage: "selector: exact resourceId"},
				&cli.StringFlag{Name: "selector-text", Usage: "selector: exact text"},
				&cli.StringFlag{Name: "description", Usage: "selector: exact content description"},
				&cli.StringFlag{Name: "class-name", Usage: "selector: exact className"},
				&cli.StringFlag{Name: "package-name", Usage: "selector: exact packageName"},
				&cli.StringFlag{Name: "id", Usage: "selector: exact accessibility node id"},
			}, waitFlags("action-timeout")...)...),
			Action: guarded(func(ctx context.Context, g *cmdutil.Globals, c *cli.Context, id agent.AgentIdentity) (outcome.Result, error) {
				timeout, poll, err := waits(c, "action-timeout")
				if err != nil {
					return outcome.Result{}, err
				}
				o := agentActOptions{
					agentIdentityOptions: identity(c),
					stepID:               c.String("step-id"),
					observationID:        c.String("observation-id"),
					action:               c.String("action"),
					args:                 actArgs(c),
					selector: agent.Selector{
						ResourceID: c.String("resource-id"), Text: c.String("selector-text"), Description: c.String("description"),
						ClassName: c.String("class-name"), PackageName: c.String("package-name"), ID: c.String("id"),
					},
					actionTimeout: timeout, pollInterval: poll,
				}
				return runAgentAct(ctx, g.Deps(), o, id)
			}),
		},
		{
			Name:      "agent-receipt",
			Usage:     "print the receipt of one step",
			UsageText: "solopi agent-receipt --session-id ID (--owner-token-file FILE | --owner-token TOKEN) --step-id ID",
			Flags:     append(identityFlags(), &cli.StringFlag{Name: "step-id", Usage: "the step's stepId"}),
			Action: guarded(func(ctx context.Context, g *cmdutil.Globals, c *cli.Context, id agent.AgentIdentity) (outcome.Result, error) {
				return runAgentReceipt(ctx, g.Deps(), id, c.String("step-id"))
			}),
		},
		{
			Name:      "agent-status",
			Usage:     "print the session snapshot (this refreshes the device's idle timer)",
			UsageText: "solopi agent-status --session-id ID (--owner-token-file FILE | --owner-token TOKEN)",
			Flags:     identityFlags(),
			Action: guarded(func(ctx context.Context, g *cmdutil.Globals, c *cli.Context, id agent.AgentIdentity) (outcome.Result, error) {
				return runAgentStatus(ctx, g.Deps(), id)
			}),
		},
		{
			Name:      "agent-timeline",
			Usage:     "print the session's events with a sequence check; --output also pulls timeline.jsonl (SHA-256 checked)",
			UsageText: "solopi agent-timeline --session-id ID (--owner-token-file FILE | --owner-token TOKEN) [--output FILE [--overwrite]]",
			Flags: append(identityFlags(),
				&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "pull the device's timeline.jsonl to this file"},
				&cli.BoolFlag{Name: "overwrite", Usage: "replace --output if it exists"},
			),
			Action: guarded(func(ctx context.Context, g *cmdutil.Globals, c *cli.Context, id agent.AgentIdentity) (outcome.Result, error) {
				o := agentTimelineOptions{agentIdentityOptions: identity(c), output: c.String("output"), overwrite: c.Bool("overwrite")}
				return runAgentTimeline(ctx, g.Deps(), o, id)
			}),
		},
		control("agent-pause", "pause an active session (observe still works; act is rejected)", (*agent.AgentClient).Pause),
		control("agent-resume", "resume a paused session", (*agent.AgentClient).Resume),
		control("agent-end", "end the session normally and release the device", (*agent.AgentClient).End),
		control("agent-cancel", "cancel the session, even while an action executes", (*agent.AgentClient).Cancel),
	}
}

// waits reads a timeout flag and --poll-interval as durations (exit 3 when
// not positive).
func waits(c *cli.Context, timeoutName string) (time.Duration, time.Duration, error) {
	t, err := cmdutil.Seconds(timeoutName, c.Float64(timeoutName))
	if err != nil {
		return 0, 0, err
	}
	p, err := cmdutil.Seconds("poll-interval", c.Float64("poll-interval"))
	if err != nil {
		return 0, 0, err
	}
	return t, p, nil
}

// actArgs reads the typed action arguments; a flag that was not given is
// absent on the wire (--text "" is present and empty).
func actArgs(c *cli.Context) protocol.ActionArgs {
	var a protocol.ActionArgs
	str := func(name string) *string {
		if !c.IsSet(name) {
			return nil
		}
		v := c.String(name)
		return &v
	}
	num := func(name string) *int64 {
		if !c.IsSet(name) {
			return nil
		}
		v := c.Int64(name)
		return &v
	}
	a.NodeID, a.Text, a.Direction = str("node-id"), str("text"), str("direction")
	a.DurationMs, a.Distance = num("duration-ms"), num("distance")
	return a
}

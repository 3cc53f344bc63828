package agentcmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/agent"
)

// The commands that read a session's evidence: agent-observe (a new
// observation, optionally its screenshot) and agent-timeline.

type observeOptions struct {
	identityOptions
	screenshotOutput string
	overwrite        bool
}

func newCmdObserve(e cmdutil.Env) *cli.Command {
	o := &observeOptions{}
	return &cli.Command{
		Name:      "agent-observe",
		Usage:     "take a new observation (UI tree with nodeIds, tree and screenshot hashes); the previous one becomes stale",
		UsageText: "solopi agent-observe --session-id ID (--owner-token-file FILE | --owner-token TOKEN) [--screenshot-output FILE [--overwrite]]",
		Flags: append(o.identityOptions.flags(),
			&cli.StringFlag{Name: "screenshot-output", Destination: &o.screenshotOutput, Usage: "pull the observation's screenshot to this file (SHA-256 checked)"},
			&cli.BoolFlag{Name: "overwrite", Destination: &o.overwrite, Usage: "replace --screenshot-output if it exists"},
		),
		Action: cmdutil.OnDevice(e, o.guarded(func(ctx context.Context, d cmdutil.DeviceDeps, id agent.AgentIdentity) (cmdutil.Result, error) {
			return runObserve(ctx, d, o, id)
		})),
	}
}

type observeResult struct {
	Success     bool                `json:"success"`
	SessionID   string              `json:"sessionId"`
	Session     *agent.AgentSession `json:"session"`
	Observation *agent.Observation  `json:"observation"`
	Screenshot  *agent.SavedFile    `json:"screenshot,omitempty"`
}

func runObserve(ctx context.Context, d cmdutil.DeviceDeps, o *observeOptions, id agent.AgentIdentity) (cmdutil.Result, error) {
	if o.screenshotOutput != "" {
		// Fail before observing: an observe makes the previous observation
		// stale, so it must not be spent on a command that cannot finish.
		if err := agent.CheckOutputPath(o.screenshotOutput, o.overwrite); err != nil {
			return cmdutil.Result{}, err
		}
	}
	a, err := openAgent(ctx, d, 0)
	if err != nil {
		return cmdutil.Result{}, err
	}
	defer a.Close()
	ob, err := a.c.Observe(ctx, id)
	if err != nil {
		return cmdutil.Result{}, err
	}
	out := observeResult{Success: true, SessionID: id.SessionID, Session: ob.Session, Observation: ob.Observation}
	if o.screenshotOutput != "" {
		f, err := a.c.SaveScreenshot(ctx, id, ob.Observation, o.screenshotOutput, o.overwrite)
		if err != nil {
			// The new observation is current now: the caller needs it.
			e := fault.From(err).With("sessionId", id.SessionID).With("session", ob.Session).With("observation", ob.Observation)
			return cmdutil.Result{}, e
		}
		out.Screenshot = f
	}
	return cmdutil.OK(out), nil
}

type timelineOptions struct {
	identityOptions
	output    string
	overwrite bool
}

func newCmdTimeline(e cmdutil.Env) *cli.Command {
	o := &timelineOptions{}
	return &cli.Command{
		Name:      "agent-timeline",
		Usage:     "print the session's events with a sequence check; --output also pulls timeline.jsonl (SHA-256 checked)",
		UsageText: "solopi agent-timeline --session-id ID (--owner-token-file FILE | --owner-token TOKEN) [--output FILE [--overwrite]]",
		Flags: append(o.identityOptions.flags(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Destination: &o.output, Usage: "pull the device's timeline.jsonl to this file"},
			&cli.BoolFlag{Name: "overwrite", Destination: &o.overwrite, Usage: "replace --output if it exists"},
		),
		Action: cmdutil.OnDevice(e, o.guarded(func(ctx context.Context, d cmdutil.DeviceDeps, id agent.AgentIdentity) (cmdutil.Result, error) {
			return runTimeline(ctx, d, o, id)
		})),
	}
}

type timelineResult struct {
	Success      bool               `json:"success"`
	SessionID    string             `json:"sessionId"`
	TimelinePath string             `json:"timelinePath"`
	Events       []agent.AgentEvent `json:"events"`
	agent.TimelineCheck
	File *agent.SavedTimeline `json:"file,omitempty"`
}

func runTimeline(ctx context.Context, d cmdutil.DeviceDeps, o *timelineOptions, id agent.AgentIdentity) (cmdutil.Result, error) {
	if o.output != "" {
		if err := agent.CheckOutputPath(o.output, o.overwrite); err != nil {
			return cmdutil.Result{}, err
		}
	}
	a, err := openAgent(ctx, d, 0)
	if err != nil {
		return cmdutil.Result{}, err
	}
	defer a.Close()
	tl, err := a.c.Timeline(ctx, id)
	if err != nil {
		return cmdutil.Result{}, err
	}
	events := tl.Events
	if events == nil {
		events = []agent.AgentEvent{}
	}
	out := timelineResult{Success: true, SessionID: id.SessionID, TimelinePath: tl.TimelinePath, Events: events, TimelineCheck: tl.Check}
	if o.output != "" {
		f, err := a.c.SaveTimeline(ctx, id, tl.TimelinePath, o.output, o.overwrite)
		if err != nil {
			return cmdutil.Result{}, err
		}
		out.File = f
	}
	return cmdutil.OK(out), nil
}

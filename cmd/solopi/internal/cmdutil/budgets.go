package cmdutil

import (
	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/verify/onphone"
)

// RunBudgets are the values of verify-run's device budget flags, which a
// managed worker's shards share.
type RunBudgets struct {
	restart, noRestart bool
	b                  onphone.Budgets
}

// RunBudgetFlags bind the budget flags to o (solopi-ai's names and
// defaults).
func RunBudgetFlags(o *RunBudgets) []cli.Flag {
	p := &o.b.Phone
	return []cli.Flag{
		&cli.BoolFlag{Name: "restart-app", Destination: &o.restart, Usage: "force-stop and relaunch the target app before each test and precondition replay"},
		&cli.BoolFlag{Name: "no-restart-app", Destination: &o.noRestart, Usage: "never restart the target app before a replay"},
		Seconds("run-timeout", "seconds per replay; the replay is cancelled after", 600, &p.RunTimeout),
		Seconds("import-timeout", "seconds to wait for a case import receipt", 30, &p.ImportTimeout),
		Seconds("ack-timeout", "seconds to wait for SoloPi to acknowledge a replay start", 20, &p.AckTimeout),
		Seconds("agent-start-timeout", "seconds to wait for an Agent session's first observation", 30, &p.AgentStartTimeout),
		Seconds("agent-action-timeout", "seconds to wait for each Agent action's receipt", 20, &p.AgentActionTimeout),
		Seconds("agent-end-timeout", "seconds to wait for an Agent session to end or cancel", 15, &p.AgentEndTimeout),
		Seconds("poll-interval", "longest pause between device polls, seconds", 0.2, &p.PollInterval),
	}
}

// Budgets are the budgets the flags give (their seconds already read by
// the command adapter).
func (o *RunBudgets) Budgets() (onphone.Budgets, error) {
	b := o.b
	if o.restart && o.noRestart {
		return b, fault.Usage(fault.CodeInvalidOption, "--restart-app and --no-restart-app exclude each other")
	}
	if o.restart || o.noRestart {
		v := o.restart
		b.RestartApp = &v
	}
	return b, nil
}

package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/agentcmd"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/devicecmd"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/managedcmd"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/plannercmd"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/replaycmd"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/sessioncmd"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/verifycmd"
)

// commands lists every command. The app's own commands (version, actions,
// sim, demo, report, solopi-ai's model-* refusals) live beside main; every feature area contributes its
// list from its package under internal/.
func commands(e cmdutil.Env) []*cli.Command {
	cmds := []*cli.Command{newCmdVersion(e), newCmdActions(e), newCmdSim(e), newCmdDemo(e), newCmdReport(e), newCmdSchema(e)}
	for _, group := range []func(cmdutil.Env) []*cli.Command{devicecmd.Commands, replaycmd.Commands, agentcmd.Commands,
		sessioncmd.Commands, plannercmd.Commands, verifycmd.Commands, managedcmd.Commands, newModelCommands} {
		cmds = append(cmds, group(e)...)
	}
	return cmds
}

// run executes the CLI with args and returns the process exit code.
func run(ctx context.Context, args []string, e cmdutil.Env) int {
	return cmdutil.App{Version: versionLine(), Commands: commands}.Run(ctx, args, e)
}

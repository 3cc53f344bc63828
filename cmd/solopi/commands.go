package main

import (
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
// sim, demo, report) live beside main; every feature area contributes its
// list from its package under internal/.
func commands(exit *int, e cmdutil.Env) []*cli.Command {
	cmds := []*cli.Command{
		versionCommand(exit, e),
		actionsCommand(exit, e),
		simCommand(exit, e),
		demoCommand(exit, e),
		reportCommand(exit, e),
	}
	cmds = append(cmds, devicecmd.Commands(exit, e)...)
	cmds = append(cmds, replaycmd.Commands(exit, e)...)
	cmds = append(cmds, agentcmd.Commands(exit, e)...)
	cmds = append(cmds, sessioncmd.Commands(exit, e)...)
	cmds = append(cmds, plannercmd.Commands(exit, e)...)
	cmds = append(cmds, verifycmd.Commands(exit, e)...)
	cmds = append(cmds, managedcmd.Commands(exit, e)...)
	return cmds
}

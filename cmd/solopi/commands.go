package main

import "github.com/urfave/cli/v2"

// commands lists every command. Each lives in its own file as an options
// struct plus a run function that is testable without a terminal; each
// feature area contributes its list.
func commands(exit *int, e Env) []*cli.Command {
	cmds := []*cli.Command{
		versionCommand(exit, e),
		actionsCommand(exit, e),
		simCommand(exit, e),
		demoCommand(exit, e),
		reportCommand(exit, e),
	}
	cmds = append(cmds, deviceCommands(exit, e)...)
	cmds = append(cmds, replayCommands(exit, e)...)
	cmds = append(cmds, agentCommands(exit, e)...)
	cmds = append(cmds, sessionCommands(exit, e)...)
	cmds = append(cmds, plannerCommands(exit, e)...)
	cmds = append(cmds, verifyCommands(exit, e)...)
	cmds = append(cmds, managedCommands(exit, e)...)
	return cmds
}

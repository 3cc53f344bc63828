package devicecmd

import (
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/urfave/cli/v2"
)

// Commands are readiness, internal adb connection, configuration and
// device information: doctor, adb-connect, config-*, capabilities, apps,
// app-info, app-status, inspect, screenshot, logs, startup-time.
func Commands(exit *int, e cmdutil.Env) []*cli.Command {
	cmds := []*cli.Command{doctorCommand(exit, e), adbConnectCommand(exit, e)}
	cmds = append(cmds, configCommands(exit, e)...)
	cmds = append(cmds, infoCommands(exit, e)...)
	return append(cmds, startupTimeCommand(exit, e))
}

package devicecmd

import (
	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
)

// Commands are readiness, internal adb connection, configuration and
// device information: doctor, adb-connect, config-*, capabilities, apps,
// app-info, app-status, inspect, screenshot, logs, startup-time.
func Commands(e cmdutil.Env) []*cli.Command {
	cmds := []*cli.Command{newCmdDoctor(e), newCmdAdbConnect(e), newCmdConfigList(e), newCmdConfigGet(e), newCmdConfigSet(e)}
	cmds = append(cmds, infoCommands(e)...)
	return append(cmds, newCmdStartupTime(e))
}

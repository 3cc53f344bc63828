package main

import "github.com/urfave/cli/v2"

// deviceCommands are readiness, internal adb connection, configuration and
// device information: doctor, adb-connect, config-*, capabilities, apps,
// app-info, app-status, inspect, screenshot, logs, startup-time.
func deviceCommands(exit *int, e env) []*cli.Command {
	return nil
}

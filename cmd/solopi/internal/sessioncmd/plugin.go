package sessioncmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/sessions"
)

func runPluginList(ctx context.Context, d cmdutil.DeviceDeps, _ struct{}) (outcome.Result, error) {
	return onDeviceMap(ctx, d, sessions.PluginList)
}

func parsePluginInstall(c *cli.Context) (sessions.PluginInstallOptions, error) {
	o := sessions.PluginInstallOptions{File: c.String("file")}
	// The archive is checked before any device contact.
	if _, err := sessions.ReadPluginZip(o.File); err != nil {
		return o, err
	}
	var err error
	o.SessionTimings, err = timings(c, "install-timeout")
	return o, err
}

type pluginRemoveOptions struct {
	id string
	t  sessions.SessionTimings
}

func runPluginRemove(ctx context.Context, d cmdutil.DeviceDeps, o pluginRemoveOptions) (outcome.Result, error) {
	return onDevice(ctx, d, func(ctx context.Context, dev *device.Device) (*sessions.SessionResult, error) {
		return sessions.RemovePlugin(ctx, dev, o.id, o.t)
	})
}

func pluginCommands(exit *int, e cmdutil.Env) []*cli.Command {
	return []*cli.Command{
		{
			Name:      "plugin-list",
			Usage:     "list installed SoloPi plugins and the archives waiting in its import directory",
			UsageText: "solopi plugin-list",
			Action:    sessionAction(exit, e, noOptions, runPluginList),
		},
		{
			Name:  "plugin-install",
			Usage: "install a local plugin ZIP through SoloPi's import directory",
			Description: "The ZIP is checked and hashed locally, pushed under a generated name, imported by fileId and\n" +
				"SHA-256, and the staged copy is deleted whatever happens (see cleanup). completed_restart_required\n" +
				"is success, but the plugin is fully active only after SoloPi restarts. Nothing is downloaded or uploaded.",
			UsageText: "solopi plugin-install --file PLUGIN.zip [--install-timeout 120] [--poll-interval 0.5]",
			Flags: append([]cli.Flag{&cli.StringFlag{Name: "file", Usage: "local plugin archive (.zip with desc.json)", Required: true}},
				timingFlags("install-timeout", 120, 0.5, "the import receipt")...),
			Action: sessionAction(exit, e, parsePluginInstall, sessionCall(sessions.InstallPlugin)),
		},
		{
			Name:      "plugin-remove",
			Usage:     "remove an installed plugin (effective after SoloPi restarts)",
			UsageText: "solopi plugin-remove --id plugin-<64 hex> [--remove-timeout 30] [--poll-interval 0.5]",
			Flags: append([]cli.Flag{&cli.StringFlag{Name: "id", Usage: "plugin id from plugin-list", Required: true}},
				timingFlags("remove-timeout", 30, 0.5, "the removal receipt")...),
			Action: sessionAction(exit, e, func(c *cli.Context) (pluginRemoveOptions, error) {
				o := pluginRemoveOptions{id: c.String("id")}
				if err := sessions.CheckPluginID(o.id); err != nil {
					return o, err
				}
				var err error
				o.t, err = timings(c, "remove-timeout")
				return o, err
			}, runPluginRemove),
		},
	}
}

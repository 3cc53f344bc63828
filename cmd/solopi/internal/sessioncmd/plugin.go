package sessioncmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/sessions"
)

func newCmdPluginList(e cmdutil.Env) *cli.Command {
	return newCmdQuery(e, "plugin-list", "list installed SoloPi plugins and the archives waiting in its import directory", sessions.PluginList)
}

func newCmdPluginInstall(e cmdutil.Env) *cli.Command {
	o := &sessions.PluginInstallOptions{}
	return &cli.Command{
		Name:  "plugin-install",
		Usage: "install a local plugin ZIP through SoloPi's import directory",
		Description: "The ZIP is checked and hashed locally, pushed under a generated name, imported by fileId and\n" +
			"SHA-256, and the staged copy is deleted whatever happens (see cleanup). completed_restart_required\n" +
			"is success, but the plugin is fully active only after SoloPi restarts. Nothing is downloaded or uploaded.",
		UsageText: "solopi plugin-install --file PLUGIN.zip [--install-timeout 120] [--poll-interval 0.5]",
		Flags: append([]cli.Flag{&cli.StringFlag{Name: "file", Destination: &o.File, Usage: "local plugin archive (.zip with desc.json)", Required: true}},
			timingFlags(&o.SessionTimings, "install-timeout", 120, 0.5, "the import receipt")...),
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			// The archive is checked before any device contact.
			if _, err := sessions.ReadPluginZip(o.File); err != nil {
				return cmdutil.Result{}, err
			}
			return cmdutil.DeviceQuery(ctx, d, func(ctx context.Context, dev *device.Device) (*sessions.PluginInstallResult, error) {
				return sessions.InstallPlugin(ctx, dev, *o)
			})
		}),
	}
}

func newCmdPluginRemove(e cmdutil.Env) *cli.Command {
	var id string
	var t sessions.SessionTimings
	return &cli.Command{
		Name:      "plugin-remove",
		Usage:     "remove an installed plugin (effective after SoloPi restarts)",
		UsageText: "solopi plugin-remove --id plugin-<64 hex> [--remove-timeout 30] [--poll-interval 0.5]",
		Flags: append([]cli.Flag{&cli.StringFlag{Name: "id", Destination: &id, Usage: "plugin id from plugin-list", Required: true}},
			timingFlags(&t, "remove-timeout", 30, 0.5, "the removal receipt")...),
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			if err := sessions.CheckPluginID(id); err != nil {
				return cmdutil.Result{}, err
			}
			return cmdutil.DeviceQuery(ctx, d, func(ctx context.Context, dev *device.Device) (*sessions.PluginRemoveResult, error) {
				return sessions.RemovePlugin(ctx, dev, id, t)
			})
		}),
	}
}

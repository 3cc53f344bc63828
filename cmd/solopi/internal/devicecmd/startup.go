package devicecmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/readiness"
)

func newCmdStartupTime(e cmdutil.Env) *cli.Command {
	o := &readiness.StartupOptions{}
	interval := cmdutil.Seconds("interval", "seconds to wait between launches (>= 0)", 1.0, &o.Interval)
	interval.Rule = cmdutil.SecondsRule{NonNegative: true, Max: 3600}
	return &cli.Command{
		Name:  "startup-time",
		Usage: "measure an app's launch time with the Activity Manager (adb only, no SoloPi needed)",
		Description: "Each iteration runs `am start -W -S` (cold) or `am start -W -R 2` (warm, the second launch is\n" +
			"measured). Any unusable iteration fails the command (exit 4) without partial statistics.",
		UsageText: "solopi startup-time --target-package PKG [--mode cold|warm] [--count 5] [--interval 1.0] [--launch-timeout 30]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "target-package", Destination: &o.TargetPackage, Usage: "package of the app to launch", Required: true},
			&cli.StringFlag{Name: "mode", Destination: &o.Mode, Usage: "cold or warm", Value: readiness.StartupCold},
			&cli.IntFlag{Name: "count", Aliases: []string{"iterations"}, Destination: &o.Count, Usage: "number of launches", Value: 5},
			interval,
			cmdutil.Seconds("launch-timeout", "seconds allowed per launch", 30, &o.LaunchTimeout),
		},
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			if d.G.Changed("count") && o.Count < 1 {
				return cmdutil.Result{}, fault.Usage(fault.CodeInvalidOption, "--count must be at least 1")
			}
			return runStartupTime(ctx, d, *o)
		}),
	}
}

func runStartupTime(ctx context.Context, d cmdutil.DeviceDeps, o readiness.StartupOptions) (cmdutil.Result, error) {
	// Bad options are refused before any device contact.
	if err := o.Normalize(); err != nil {
		return cmdutil.Result{}, err
	}
	t, err := d.Transport(ctx)
	if err != nil {
		return cmdutil.Result{}, err
	}
	r, err := readiness.MeasureStartup(ctx, t, o)
	if err != nil {
		return cmdutil.Result{}, err
	}
	return cmdutil.OK(r), nil
}

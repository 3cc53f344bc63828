package devicecmd

import (
	"context"
	"math"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/solopi/readiness"
)

func runStartupTime(ctx context.Context, d cmdutil.DeviceDeps, o readiness.StartupOptions) (outcome.Result, error) {
	// Bad options are refused before any device contact.
	if err := o.Normalize(); err != nil {
		return outcome.Result{}, err
	}
	t, err := d.Transport(ctx)
	if err != nil {
		return outcome.Result{}, err
	}
	r, err := readiness.MeasureStartup(ctx, t, o)
	if err != nil {
		return outcome.Result{}, err
	}
	return outcome.OK(r), nil
}

func startupTimeCommand(exit *int, e cmdutil.Env) *cli.Command {
	return &cli.Command{
		Name:  "startup-time",
		Usage: "measure an app's launch time with the Activity Manager (adb only, no SoloPi needed)",
		Description: "Each iteration runs `am start -W -S` (cold) or `am start -W -R 2` (warm, the second launch is\n" +
			"measured). Any unusable iteration fails the command (exit 4) without partial statistics.",
		UsageText: "solopi startup-time --target-package PKG [--mode cold|warm] [--count 5] [--interval 1.0] [--launch-timeout 30]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "target-package", Usage: "package of the app to launch", Required: true},
			&cli.StringFlag{Name: "mode", Usage: "cold or warm", Value: readiness.StartupCold},
			&cli.IntFlag{Name: "count", Aliases: []string{"iterations"}, Usage: "number of launches", Value: 5},
			&cli.Float64Flag{Name: "interval", Usage: "seconds to wait between launches (>= 0)", Value: 1.0},
			&cli.Float64Flag{Name: "launch-timeout", Usage: "seconds allowed per launch", Value: 30},
		},
		Action: cmdutil.Action(exit, e, func(ctx context.Context, g *cmdutil.Globals, c *cli.Context) (outcome.Result, error) {
			o := readiness.StartupOptions{TargetPackage: c.String("target-package"), Mode: c.String("mode"), Count: c.Int("count")}
			iv := c.Float64("interval")
			if iv < 0 || math.IsNaN(iv) || iv > 3600 {
				return outcome.Result{}, fault.Usage("invalid_option", "--interval must be between 0 and 3600 seconds")
			}
			o.Interval = time.Duration(iv * float64(time.Second))
			var err error
			if o.LaunchTimeout, err = cmdutil.Seconds("launch-timeout", c.Float64("launch-timeout")); err != nil {
				return outcome.Result{}, err
			}
			if c.IsSet("count") && o.Count < 1 {
				return outcome.Result{}, fault.Usage("invalid_option", "--count must be at least 1")
			}
			return runStartupTime(ctx, g.Deps(), o)
		}),
	}
}

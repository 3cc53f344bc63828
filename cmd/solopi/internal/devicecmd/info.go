package devicecmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/readiness"
)

// sessionQuery runs one read-only query on a fresh session.
func sessionQuery(ctx context.Context, d cmdutil.DeviceDeps, q func(ctx context.Context, s *device.Session) (map[string]any, error)) (outcome.Result, error) {
	return cmdutil.WithSession(ctx, d, func(s *device.Session) (outcome.Result, error) {
		m, err := q(ctx, s)
		if err != nil {
			return outcome.Result{}, err
		}
		return outcome.OK(m), nil
	})
}

func runCapabilities(ctx context.Context, d cmdutil.DeviceDeps) (outcome.Result, error) {
	return sessionQuery(ctx, d, func(_ context.Context, s *device.Session) (map[string]any, error) {
		return readiness.CapabilitiesOf(s)
	})
}

type fileOptions struct {
	output string
	lines  int
}

func runScreenshot(ctx context.Context, d cmdutil.DeviceDeps, o fileOptions) (outcome.Result, error) {
	// An unusable output is refused before any device contact.
	if err := readiness.CheckOutput(o.output); err != nil {
		return outcome.Result{}, err
	}
	t, err := d.Transport(ctx)
	if err != nil {
		return outcome.Result{}, err
	}
	r, err := readiness.Screenshot(ctx, t, o.output)
	if err != nil {
		return outcome.Result{}, err
	}
	return outcome.OK(r), nil
}

func runLogs(ctx context.Context, d cmdutil.DeviceDeps, o fileOptions) (outcome.Result, error) {
	if o.lines <= 0 {
		return outcome.Result{}, fault.Usage("invalid_option", "--lines must be a positive number")
	}
	if err := readiness.CheckOutput(o.output); err != nil {
		return outcome.Result{}, err
	}
	t, err := d.Transport(ctx)
	if err != nil {
		return outcome.Result{}, err
	}
	r, err := readiness.Logs(ctx, t, o.output, o.lines)
	if err != nil {
		return outcome.Result{}, err
	}
	return outcome.OK(r), nil
}

func infoCommands(exit *int, e cmdutil.Env) []*cli.Command {
	query := func(name, usage string, q func(ctx context.Context, s *device.Session) (map[string]any, error)) *cli.Command {
		return &cli.Command{
			Name: name, Usage: usage, UsageText: "solopi " + name,
			Action: cmdutil.Action(exit, e, func(ctx context.Context, g *cmdutil.Globals, c *cli.Context) (outcome.Result, error) {
				return sessionQuery(ctx, g.Deps(), q)
			}),
		}
	}
	outputFlags := []cli.Flag{
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "file to write", Required: true},
		&cli.BoolFlag{Name: "overwrite", Usage: "accepted for compatibility: an existing file is always replaced (atomically; a symlink is refused)"},
	}
	return []*cli.Command{
		{
			Name: "capabilities", Usage: "print SoloPi's protocol versions and supported queries and commands",
			UsageText: "solopi capabilities",
			Action: cmdutil.Action(exit, e, func(ctx context.Context, g *cmdutil.Globals, c *cli.Context) (outcome.Result, error) {
				return runCapabilities(ctx, g.Deps())
			}),
		},
		query("apps", "list the apps SoloPi can target (harness apps query)", readiness.Apps),
		query("app-info", "print SoloPi's version and the device's model and Android version", readiness.AppInfo),
		query("app-status", "print SoloPi's activity status (none or record)", readiness.AppStatus),
		query("inspect", "print the current page's accessibility tree", readiness.Inspect),
		{
			Name: "screenshot", Usage: "save a PNG screenshot of the device (adb only, no SoloPi needed)",
			UsageText: "solopi screenshot --output FILE [--overwrite]",
			Flags:     outputFlags,
			Action: cmdutil.Action(exit, e, func(ctx context.Context, g *cmdutil.Globals, c *cli.Context) (outcome.Result, error) {
				return runScreenshot(ctx, g.Deps(), fileOptions{output: c.String("output")})
			}),
		},
		{
			Name: "logs", Usage: "save the newest logcat lines (threadtime) to a file (adb only)",
			UsageText: "solopi logs --output FILE [--lines 2000] [--overwrite]",
			Flags: append([]cli.Flag{&cli.IntFlag{Name: "lines", Usage: "how many of the newest lines to keep", Value: 2000}},
				outputFlags...),
			Action: cmdutil.Action(exit, e, func(ctx context.Context, g *cmdutil.Globals, c *cli.Context) (outcome.Result, error) {
				return runLogs(ctx, g.Deps(), fileOptions{output: c.String("output"), lines: c.Int("lines")})
			}),
		},
	}
}

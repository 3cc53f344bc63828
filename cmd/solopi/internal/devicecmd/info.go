package devicecmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/readiness"
)

// infoCommands are the device information commands: the read-only
// session queries and the adb-only file commands.
func infoCommands(e cmdutil.Env) []*cli.Command {
	return []*cli.Command{
		newCmdQuery(e, "capabilities", "print SoloPi's protocol versions and supported queries and commands",
			func(_ context.Context, s *device.Session) (map[string]any, error) { return readiness.CapabilitiesOf(s) }),
		newCmdQuery(e, "apps", "list the apps SoloPi can target (harness apps query)", readiness.Apps),
		newCmdQuery(e, "app-info", "print SoloPi's version and the device's model and Android version", readiness.AppInfo),
		newCmdQuery(e, "app-status", "print SoloPi's activity status (none or record)", readiness.AppStatus),
		newCmdInspect(e),
		newCmdScreenshot(e),
		newCmdLogs(e),
	}
}

// newCmdQuery is a command that runs one read-only query on a fresh
// session and prints SoloPi's answer unchanged with success laid over it
// (the device's own success is absent or true once q accepted it).
func newCmdQuery(e cmdutil.Env, name, usage string, q func(ctx context.Context, s *device.Session) (map[string]any, error)) *cli.Command {
	return &cli.Command{
		Name: name, Usage: usage, UsageText: "solopi " + name,
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			return cmdutil.SessionQuery(ctx, d, func(ctx context.Context, s *device.Session) (canonjson.Overlay, error) {
				m, err := q(ctx, s)
				return canonjson.Overlay{Base: m, Fields: answerResult{Success: true}}, err
			})
		}),
	}
}

// answerResult is what inspect and the query commands add to the SoloPi
// answer they print unchanged beside it.
type answerResult struct {
	Success bool `json:"success"`
}

// fileOptions are the options of the commands that save a device file.
type fileOptions struct {
	output    string
	overwrite bool
	lines     int
}

// outputFlags bind --output and the compatibility --overwrite.
func (o *fileOptions) outputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Destination: &o.output, Usage: "file to write", Required: true},
		&cli.BoolFlag{Name: "overwrite", Destination: &o.overwrite, Usage: "accepted for compatibility: an existing file is always replaced (atomically; a symlink is refused)"},
	}
}

func newCmdScreenshot(e cmdutil.Env) *cli.Command {
	o := &fileOptions{}
	return &cli.Command{
		Name: "screenshot", Usage: "save a PNG screenshot of the device (adb only, no SoloPi needed)",
		UsageText: "solopi screenshot --output FILE [--overwrite]",
		Flags:     o.outputFlags(),
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			return runScreenshot(ctx, d, o)
		}),
	}
}

func runScreenshot(ctx context.Context, d cmdutil.DeviceDeps, o *fileOptions) (cmdutil.Result, error) {
	// An unusable output is refused before any device contact.
	if err := readiness.CheckOutput(o.output); err != nil {
		return cmdutil.Result{}, err
	}
	t, err := d.Transport(ctx)
	if err != nil {
		return cmdutil.Result{}, err
	}
	r, err := readiness.Screenshot(ctx, t, o.output)
	if err != nil {
		return cmdutil.Result{}, err
	}
	return cmdutil.OK(r), nil
}

func newCmdLogs(e cmdutil.Env) *cli.Command {
	o := &fileOptions{}
	return &cli.Command{
		Name: "logs", Usage: "save the newest logcat lines (threadtime) to a file (adb only)",
		UsageText: "solopi logs --output FILE [--lines 2000] [--overwrite]",
		Flags: append([]cli.Flag{&cli.IntFlag{Name: "lines", Destination: &o.lines, Usage: "how many of the newest lines to keep", Value: 2000}},
			o.outputFlags()...),
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			return runLogs(ctx, d, o)
		}),
	}
}

func runLogs(ctx context.Context, d cmdutil.DeviceDeps, o *fileOptions) (cmdutil.Result, error) {
	if o.lines <= 0 {
		return cmdutil.Result{}, fault.Usage(fault.CodeInvalidOption, "--lines must be a positive number")
	}
	if err := readiness.CheckOutput(o.output); err != nil {
		return cmdutil.Result{}, err
	}
	t, err := d.Transport(ctx)
	if err != nil {
		return cmdutil.Result{}, err
	}
	r, err := readiness.Logs(ctx, t, o.output, o.lines)
	if err != nil {
		return cmdutil.Result{}, err
	}
	return cmdutil.OK(r), nil
}

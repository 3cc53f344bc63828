package replaycmd

import (
	"context"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/report"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/replay"
)

func runCommands(exit *int, e cmdutil.Env) []*cli.Command {
	return []*cli.Command{
		{
			Name:  "run",
			Usage: "replay one SoloPi case and wait for its verdict (exit 0 passed, 2 failed, 124 timeout, 130 cancelled)",
			UsageText: "solopi run --case NAME [--artifacts DIR] [--junit FILE] [--no-wait]\n\n" +
				"The case is read back first (id and fingerprint bound), auto-start is turned on (and left on, as\n" +
				"solopi-ai does), and only the run carrying this command's requestId is claimed. On --run-timeout or\n" +
				"Ctrl-C exactly that run is cancelled before the JSON (with its runId) is printed. --artifacts DIR may\n" +
				"hold an earlier solopi evidence set: it is replaced (the JSON says what was replaced).\n\nExample:\n  solopi run --case login-smoke --artifacts ./out/login --junit ./out/junit.xml",
			Flags: append(runFlags(true), &cli.StringFlag{Name: "case", Usage: "SoloPi case name", Required: true}),
			Action: cmdutil.DeviceAction(exit, e, func(ctx context.Context, c *cli.Context, d cmdutil.DeviceDeps) (outcome.Result, error) {
				o, err := runOptionsFrom(c, d.G)
				if err != nil {
					return outcome.Result{}, err
				}
				o.CaseName = c.String("case")
				return runOne(ctx, d, o, c.String("junit"))
			}),
		},
		{
			Name:      "status",
			Usage:     "show the device's current replay snapshot (harness?type=status)",
			UsageText: "solopi status",
			Action: cmdutil.DeviceAction(exit, e, func(ctx context.Context, c *cli.Context, d cmdutil.DeviceDeps) (outcome.Result, error) {
				return runStatus(ctx, d)
			}),
		},
		{
			Name:      "result",
			Usage:     "show the latest replay result; exit 0 only when it passed",
			UsageText: "solopi result [--run-id RUN_ID]",
			Flags:     []cli.Flag{&cli.StringFlag{Name: "run-id", Usage: "require the latest run to be this runId"}},
			Action: cmdutil.DeviceAction(exit, e, func(ctx context.Context, c *cli.Context, d cmdutil.DeviceDeps) (outcome.Result, error) {
				return runResult(ctx, d, c.String("run-id"))
			}),
		},
		{
			Name:  "cancel",
			Usage: "cancel exactly the given active run (never another one)",
			UsageText: "solopi cancel --run-id RUN_ID [--cancel-timeout 30] [--poll-interval 0.5]\n\n" +
				"Nothing is sent unless the device's active run is exactly RUN_ID.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "run-id", Usage: "the runId the run command printed", Required: true},
				&cli.Float64Flag{Name: "cancel-timeout", Usage: "seconds to wait for a terminal state", Value: 30},
				&cli.Float64Flag{Name: "poll-interval", Usage: "longest pause between status polls, seconds", Value: 0.5},
			},
			Action: cmdutil.DeviceAction(exit, e, func(ctx context.Context, c *cli.Context, d cmdutil.DeviceDeps) (outcome.Result, error) {
				timeout, poll, err := replayWait(c, "cancel-timeout")
				if err != nil {
					return outcome.Result{}, err
				}
				return runCancel(ctx, d, c.String("run-id"), timeout, poll)
			}),
		},
	}
}

// runFlags are the options shared by run, run-repeat and run-batch
// (upstream's names and defaults); withWait adds --wait/--no-wait.
func runFlags(withWait bool) []cli.Flag {
	fl := []cli.Flag{
		&cli.StringFlag{Name: "target-package", Usage: "replay against this app instead of the case's target"},
		&cli.BoolFlag{Name: "restart-app", Usage: "force-stop and relaunch the target app first"},
		&cli.BoolFlag{Name: "no-restart-app", Usage: "launch the target app without force-stopping it"},
		&cli.Float64Flag{Name: "ack-timeout", Usage: "seconds to wait for SoloPi to acknowledge the start", Value: 15},
		&cli.Float64Flag{Name: "run-timeout", Usage: "seconds to wait for a terminal state; the run is cancelled after", Value: 600},
		&cli.Float64Flag{Name: "poll-interval", Usage: "longest pause between status polls, seconds (a started run is polled at least every 0.05)", Value: 1},
		&cli.BoolFlag{Name: "no-auto-start", Usage: "do not enable KEY_REPLAY_AUTO_START; refuse if it is off"},
		&cli.BoolFlag{Name: "confirm-high-risk", Usage: "accept CLEAR_DATA, KILL_PROCESS and JUMP_TO_PAGE steps"},
		&cli.StringFlag{Name: "artifacts", Usage: "evidence directory (result.json, case.json, screen.png, logcat.txt, device/, manifest.json, report.html)"},
		&cli.BoolFlag{Name: "overwrite", Usage: "also reuse an --artifacts directory holding files no solopi manifest names, and replace an existing --junit file"},
		&cli.Float64Flag{Name: "evidence-timeout", Usage: "seconds each evidence item (screenshot, logcat, each device file) may take", Value: 10},
		&cli.Float64Flag{Name: "unreachable-timeout", Usage: "seconds a started run keeps polling SoloPi while it cannot be reached (app restart, adb reconnect)", Value: 30},
		&cli.StringFlag{Name: "junit", Usage: "write a JUnit XML report to this file"},
	}
	if withWait {
		fl = append(fl,
			&cli.BoolFlag{Name: "wait", Usage: "wait for the verdict (default)"},
			&cli.BoolFlag{Name: "no-wait", Usage: "return once the run is claimed and active (exit 0 means only active)"})
	}
	return fl
}

// runOptionsFrom reads the shared run flags; every check that needs no
// device happens here or in RunOptions.Validate, before the session opens.
func runOptionsFrom(c *cli.Context, g *cmdutil.Globals) (replay.RunOptions, error) {
	o := replay.RunOptions{
		TargetPackage:   c.String("target-package"),
		NoAutoStart:     c.Bool("no-auto-start"),
		ConfirmHighRisk: c.Bool("confirm-high-risk"),
		ArtifactsDir:    c.String("artifacts"),
		Overwrite:       c.Bool("overwrite"),
		Secrets:         g.Env.SecretsStore(),
		Progress:        g.DeviceProgress(),
	}
	if c.IsSet("target-package") && o.TargetPackage == "" {
		return o, fault.Usage(replay.CodeInvalidRunOption, "--target-package must not be empty")
	}
	if c.Bool("restart-app") && c.Bool("no-restart-app") {
		return o, fault.Usage(replay.CodeInvalidRunOption, "--restart-app and --no-restart-app exclude each other")
	}
	if c.Bool("restart-app") || c.Bool("no-restart-app") {
		v := c.Bool("restart-app")
		o.RestartApp = &v
	}
	if c.Bool("wait") && c.Bool("no-wait") {
		return o, fault.Usage(replay.CodeInvalidRunOption, "--wait and --no-wait exclude each other")
	}
	o.NoWait = c.Bool("no-wait")
	var err error
	if o.AckTimeout, err = replaySeconds(c, "ack-timeout"); err != nil {
		return o, err
	}
	if o.RunTimeout, err = replaySeconds(c, "run-timeout"); err != nil {
		return o, err
	}
	if o.PollInterval, err = replaySeconds(c, "poll-interval"); err != nil {
		return o, err
	}
	if o.EvidenceTimeout, err = replaySeconds(c, "evidence-timeout"); err != nil {
		return o, err
	}
	if o.UnreachableTimeout, err = replaySeconds(c, "unreachable-timeout"); err != nil {
		return o, err
	}
	return o, nil
}

// runOne is the run command: local checks, the run, the JUnit report.
func runOne(ctx context.Context, d cmdutil.DeviceDeps, o replay.RunOptions, junit string) (outcome.Result, error) {
	if err := o.Validate(); err != nil {
		return outcome.Result{}, err
	}
	if junit != "" {
		if _, err := artifacts.JUnitOutput(o.Overwrite).CheckFile(junit); err != nil {
			return outcome.Result{}, err
		}
	}
	return cmdutil.WithDevice(ctx, d, func(d *device.Device) (outcome.Result, error) {
		rep := replay.RunReplay(ctx, d, o)
		exit := outcome.ExitOf(rep.Err)
		writeRunReport(rep)
		if junit != "" {
			suite := artifacts.JUnitSuite{Name: "solopi.run", Timestamp: rep.Started, Cases: []artifacts.JUnitCase{replay.RunJUnitCase(rep, rep.CaseName, exit)}}
			exit = writeJUnitReport(rep.Payload, junit, o.Overwrite, exit, suite)
		}
		return outcome.Result{Value: rep.Payload, Exit: exit}, nil
	})
}

// writeRunReport renders report.html into the run's evidence directory
// and says where in the payload's artifacts object. A report that cannot
// be written is a warning there (reportError): it never changes the
// verdict, the evidence it would render is all in place.
func writeRunReport(rep *replay.RunReport) {
	a, ok := rep.Payload["artifacts"].(map[string]any)
	if !ok || rep.Artifacts == nil || rep.Artifacts.Manifest == "" {
		return
	}
	res, err := report.Write(rep.Artifacts.Dir, report.Options{})
	if err != nil {
		a["reportError"] = err.Error()
		return
	}
	a["report"] = res.Path
}

// writeJUnitReport writes the report and records where (or why not) in the
// payload. A report that cannot be written turns a passing exit into 3:
// CI would otherwise gate on a report that does not exist.
func writeJUnitReport(payload map[string]any, path string, overwrite bool, exit int, suites ...artifacts.JUnitSuite) int {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	if err := artifacts.WriteJUnit(abs, overwrite, "solopi", suites...); err != nil {
		payload["junitError"] = err.Error()
		if exit == outcome.ExitOK {
			payload["success"] = false
			payload["errorCode"] = fault.CodeOf(err)
			payload["error"] = "the JUnit report could not be written"
			return outcome.ExitUsage
		}
		return exit
	}
	payload["junit"] = abs
	return exit
}

func runStatus(ctx context.Context, d cmdutil.DeviceDeps) (outcome.Result, error) {
	store := d.G.Env.SecretsStore()
	return cmdutil.WithDevice(ctx, d, func(d *device.Device) (outcome.Result, error) {
		st, err := replay.FetchReplayStatus(ctx, d)
		if err != nil {
			return outcome.Result{}, err
		}
		return outcome.OK(replay.RedactSnapshot(ctx, d, store, st.Object)), nil
	})
}

func runResult(ctx context.Context, d cmdutil.DeviceDeps, runID string) (outcome.Result, error) {
	store := d.G.Env.SecretsStore()
	return cmdutil.WithDevice(ctx, d, func(d *device.Device) (outcome.Result, error) {
		out, failure, err := replay.LatestResult(ctx, d, runID)
		if err != nil {
			return outcome.Result{}, err
		}
		return outcome.Result{Value: replay.RedactSnapshot(ctx, d, store, out), Exit: outcome.ExitOf(failure)}, nil
	})
}

func runCancel(ctx context.Context, d cmdutil.DeviceDeps, runID string, timeout, poll time.Duration) (outcome.Result, error) {
	if runID == "" {
		return outcome.Result{}, fault.Usage(replay.CodeInvalidRunOption, "--run-id must not be empty")
	}
	store := d.G.Env.SecretsStore()
	return cmdutil.WithDevice(ctx, d, func(d *device.Device) (outcome.Result, error) {
		out, err := replay.CancelRun(ctx, d, runID, timeout, poll)
		if err != nil {
			return outcome.Result{}, err
		}
		return outcome.OK(replay.RedactSnapshot(ctx, d, store, out)), nil
	})
}

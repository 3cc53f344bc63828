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
	"github.com/solopi-dev/solopi/perfstats"
	"github.com/solopi-dev/solopi/report"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/replay"
	"github.com/solopi-dev/solopi/solopi/sessions"
	"github.com/solopi-dev/solopi/solopi/video"
)

// runFlagValues are the options shared by run, run-repeat and run-batch
// (upstream's names and defaults).
type runFlagValues struct {
	targetPackage            string
	restartApp, noRestartApp bool
	noAutoStart, confirm     bool
	artifacts, junit         string
	video                    string
	perf, perfBudget         string
	overwrite                bool
	wait, noWait             bool
	o                        replay.RunOptions
}

// flags bind the shared run flags; withWait adds --wait/--no-wait.
func (v *runFlagValues) flags(withWait bool) []cli.Flag {
	fl := []cli.Flag{
		&cli.StringFlag{Name: "target-package", Destination: &v.targetPackage, Usage: "replay against this app instead of the case's target"},
		&cli.BoolFlag{Name: "restart-app", Destination: &v.restartApp, Usage: "force-stop and relaunch the target app first"},
		&cli.BoolFlag{Name: "no-restart-app", Destination: &v.noRestartApp, Usage: "launch the target app without force-stopping it"},
		cmdutil.Seconds("ack-timeout", "seconds to wait for SoloPi to acknowledge the start", 15, &v.o.AckTimeout),
		cmdutil.Seconds("run-timeout", "seconds to wait for a terminal state; the run is cancelled after", 600, &v.o.RunTimeout),
		cmdutil.Seconds("poll-interval", "longest pause between status polls, seconds (a started run is polled at least every 0.05)", 1, &v.o.PollInterval),
		&cli.BoolFlag{Name: "no-auto-start", Destination: &v.noAutoStart, Usage: "do not enable KEY_REPLAY_AUTO_START; refuse if it is off"},
		&cli.BoolFlag{Name: "confirm-high-risk", Destination: &v.confirm, Usage: "accept CLEAR_DATA, KILL_PROCESS and JUMP_TO_PAGE steps"},
		&cli.StringFlag{Name: "artifacts", Destination: &v.artifacts, Usage: "evidence directory (result.json, case.json, screen.png, logcat.txt, device/, manifest.json, report.html)"},
		&cli.BoolFlag{Name: "overwrite", Destination: &v.overwrite, Usage: "also reuse an --artifacts directory holding files no solopi manifest names, and replace an existing --junit file"},
		cmdutil.Seconds("evidence-timeout", "seconds each evidence item (screenshot, logcat, each device file) may take", 10, &v.o.EvidenceTimeout),
		cmdutil.Seconds("unreachable-timeout", "seconds a started run keeps polling SoloPi while it cannot be reached (app restart, adb reconnect)", 30, &v.o.UnreachableTimeout),
		&cli.StringFlag{Name: "junit", Destination: &v.junit, Usage: "write a JUnit XML report to this file"},
		&cli.StringFlag{Name: "video", Value: string(video.ModeOff), Destination: &v.video, Usage: "record the screen with adb screenrecord: off, on-failure (kept only when the run did not pass) or always; needs --artifacts"},
		&cli.StringFlag{Name: "perf", Destination: &v.perf, Usage: "record these SoloPi performance items (perf-list keys, as perf-start --items) during the replay into perf/ of the evidence, e.g. CPU,Memory,FPS; needs --artifacts"},
		&cli.StringFlag{Name: "perf-budget", Destination: &v.perfBudget, Usage: "fail the run when the recording exceeds a budget: metric.stat=number,... e.g. cpu.max=80,memory.max=300,fps.p10=50 (docs/file-formats.md); needs --perf"},
	}
	if withWait {
		fl = append(fl,
			&cli.BoolFlag{Name: "wait", Destination: &v.wait, Usage: "wait for the verdict (default)"},
			&cli.BoolFlag{Name: "no-wait", Destination: &v.noWait, Usage: "return once the run is claimed and active (exit 0 means only active)"})
	}
	return fl
}

// options are the run options the flags give; every check that needs no
// device happens here or in RunOptions.Validate, before the session opens.
func (v *runFlagValues) options(g *cmdutil.Globals) (replay.RunOptions, error) {
	o := v.o
	o.TargetPackage, o.NoAutoStart, o.ConfirmHighRisk = v.targetPackage, v.noAutoStart, v.confirm
	o.ArtifactsDir, o.Overwrite = v.artifacts, v.overwrite
	o.Video = video.Mode(v.video)
	o.Perf, o.PerfSessions = sessions.ParseItems(v.perf), sessions.PerfRecorder{}
	if g.Changed("perf") && len(o.Perf) == 0 {
		return o, fault.Usage(fault.CodeInvalidOption, "--perf must name at least one performance item, e.g. CPU,Memory")
	}
	if g.Changed("perf-budget") {
		b, err := perfstats.ParseBudgets(v.perfBudget)
		if err != nil {
			return o, err
		}
		o.PerfBudget = b
	}
	o.Secrets, o.Progress = g.Env.SecretsStore(), g.DeviceProgress()
	if g.Changed("target-package") && o.TargetPackage == "" {
		return o, fault.Usage(fault.CodeInvalidOption, "--target-package must not be empty")
	}
	if v.restartApp && v.noRestartApp {
		return o, fault.Usage(fault.CodeInvalidOption, "--restart-app and --no-restart-app exclude each other")
	}
	if v.restartApp || v.noRestartApp {
		r := v.restartApp
		o.RestartApp = &r
	}
	if v.wait && v.noWait {
		return o, fault.Usage(fault.CodeInvalidOption, "--wait and --no-wait exclude each other")
	}
	o.NoWait = v.noWait
	return o, nil
}

func newCmdRun(e cmdutil.Env) *cli.Command {
	v := &runFlagValues{}
	sv := &suiteFlagValues{}
	var caseName string
	return &cli.Command{
		Name:  "run",
		Usage: "replay one SoloPi case and wait for its verdict (exit 0 passed, 2 failed, 124 timeout, 130 cancelled)",
		UsageText: "solopi run --case NAME [--artifacts DIR] [--junit FILE] [--no-wait]\n" +
			"solopi run --file CASE.json [--reimport | --replace] [--artifacts DIR] [--junit FILE]\n" +
			"solopi run --dir CASES [--file F]... [--devices all|S1,S2] [--retries N] [...]   (a suite, as run-batch)\n\n" +
			"The case is read back first (id and fingerprint bound), auto-start is turned on (and left on, as\n" +
			"solopi-ai does), and only the run carrying this command's requestId is claimed. On --run-timeout or\n" +
			"Ctrl-C exactly that run is cancelled before the JSON (with its runId) is printed. --artifacts DIR may\n" +
			"hold an earlier solopi evidence set: it is replaced (the JSON says what was replaced).\n\n" +
			"--file CASE.json is validated and normalised locally and imported only when the device does not hold\n" +
			"that case already (--reimport forces it); a different case stored under its name is refused\n" +
			"(case_name_conflict) unless --replace. Several cases, --dir, --devices or retries make a suite: see\n" +
			"run-batch --help; the JSON is then run-batch's.\n\nExample:\n  solopi run --case login-smoke --artifacts ./out/login --junit ./out/junit.xml\n" +
			"  solopi run --file ./cases/login-ok.json --artifacts ./out/login\n" +
			"  solopi run --case login-smoke --artifacts ./out/login --perf CPU,Memory,FPS --perf-budget cpu.max=80,memory.max=300,fps.p10=50",
		Flags: append(append(v.flags(true), &cli.StringFlag{Name: "case", Destination: &caseName, Usage: "SoloPi case name (or --file, --dir)"}), sv.flags()...),
		// A run names its case (--case, --file or --dir): the parser checks
		// it (cmdutil's usage rules).
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			var names []string
			if caseName != "" || d.G.Changed("case") {
				names = []string{caseName}
			}
			files := len(sv.files.Value())
			single := len(names)+files == 1 && len(sv.dirs.Value()) == 0
			for _, n := range suiteFlagNames {
				if n != "file" && d.G.Changed(n) {
					single = false
				}
			}
			if !single {
				return runSuite(ctx, d, suiteRun{name: "solopi.run", v: v, s: sv, names: names})
			}
			o, err := v.options(d.G)
			if err != nil {
				return cmdutil.Result{}, err
			}
			if files == 1 {
				return runCaseFile(ctx, d, o, v, sv)
			}
			o.CaseName = caseName
			return runOne(ctx, d, o, v.junit, nil)
		}),
	}
}

// runOne is the run command: local checks, the run, the JUnit report.
// before, when set, runs on the device first (a case file's import) and
// returns the fingerprint to bind the run to and what it did.
func runOne(ctx context.Context, d cmdutil.DeviceDeps, o replay.RunOptions, junit string,
	before func(*device.Device) (string, *caseFileBinding, error)) (cmdutil.Result, error) {
	if err := o.Validate(); err != nil {
		return cmdutil.Result{}, err
	}
	if junit != "" {
		if _, err := artifacts.JUnitOutput(o.Overwrite).CheckFile(junit); err != nil {
			return cmdutil.Result{}, err
		}
	}
	return cmdutil.WithDevice(ctx, d, func(d *device.Device) (cmdutil.Result, error) {
		var file *caseFileBinding
		if before != nil {
			fp, what, err := before(d)
			if err != nil {
				return cmdutil.Result{}, err
			}
			o.CaseFingerprint, file = fp, what
		}
		rep := replay.RunReplay(ctx, d, o)
		out := rep.Payload
		if file != nil {
			out.CaseFile = file
		}
		res := cmdutil.WithFailure(out, rep.Err)
		writeRunReport(rep)
		if junit != "" {
			suite := artifacts.JUnitSuite{Name: "solopi.run", Timestamp: rep.Started, Cases: []artifacts.JUnitCase{replay.RunJUnitCase(rep, rep.CaseName, res.Exit)}}
			abs, err := writeJUnit(junit, o.Overwrite, suite)
			switch {
			case err == nil:
				out.JUnit = abs
			case res.Exit == outcome.ExitOK:
				out.JUnitError = err.Error()
				out.Fail(junitFailure(err))
				res = cmdutil.WithKind(out, fault.Invalid)
			default:
				out.JUnitError = err.Error()
			}
		}
		return res, nil
	})
}

// writeRunReport renders report.html into the run's evidence directory
// and says where in the result's artifacts object. A report that cannot
// be written is a warning there (reportError): it never changes the
// verdict, the evidence it would render is all in place.
func writeRunReport(rep *replay.RunReport) {
	a := rep.Payload.Artifacts
	if a == nil || rep.Artifacts == nil || rep.Artifacts.Manifest == "" {
		return
	}
	res, err := report.Write(rep.Artifacts.Dir, report.Options{})
	if err != nil {
		a.ReportError = err.Error()
		return
	}
	a.Report = res.Path
}

// writeJUnit writes the report and returns its absolute path.
func writeJUnit(path string, overwrite bool, suites ...artifacts.JUnitSuite) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return abs, artifacts.WriteJUnit(abs, overwrite, "solopi", suites...)
}

// junitFailure is what a JUnit report that could not be written makes of
// a passing result: a usage failure, since CI would otherwise gate on a
// report that does not exist.
func junitFailure(err error) *fault.Error {
	return fault.New(fault.Invalid, fault.CodeOf(err), "the JUnit report could not be written")
}

func newCmdStatus(e cmdutil.Env) *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "show the device's current replay snapshot (harness?type=status)",
		UsageText: "solopi status",
		Action:    cmdutil.OnDevice(e, runStatus),
	}
}

func runStatus(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
	store := d.G.Env.SecretsStore()
	return cmdutil.WithDevice(ctx, d, func(d *device.Device) (cmdutil.Result, error) {
		st, err := replay.FetchReplayStatus(ctx, d)
		if err != nil {
			return cmdutil.Result{}, err
		}
		// The device's snapshot, echoed: the host adds no field, it only
		// hides the case's secrets in the device's texts.
		return cmdutil.OK(replay.RedactSnapshot(ctx, d, store, st.Object)), nil
	})
}

func newCmdResult(e cmdutil.Env) *cli.Command {
	var runID string
	return &cli.Command{
		Name:      "result",
		Usage:     "show the latest replay result; exit 0 only when it passed",
		UsageText: "solopi result [--run-id RUN_ID]",
		Flags:     []cli.Flag{&cli.StringFlag{Name: "run-id", Destination: &runID, Usage: "require the latest run to be this runId"}},
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			return runResult(ctx, d, runID)
		}),
	}
}

func runResult(ctx context.Context, d cmdutil.DeviceDeps, runID string) (cmdutil.Result, error) {
	store := d.G.Env.SecretsStore()
	return cmdutil.WithDevice(ctx, d, func(d *device.Device) (cmdutil.Result, error) {
		out, failure, err := replay.LatestResult(ctx, d, runID)
		if err != nil {
			return cmdutil.Result{}, err
		}
		out.Redact(ctx, d, store)
		return cmdutil.WithFailure(out, failure), nil
	})
}

type cancelOptions struct {
	runID   string
	timeout time.Duration
	poll    time.Duration
}

func newCmdCancel(e cmdutil.Env) *cli.Command {
	o := &cancelOptions{}
	return &cli.Command{
		Name:  "cancel",
		Usage: "cancel exactly the given active run (never another one)",
		UsageText: "solopi cancel --run-id RUN_ID [--cancel-timeout 30] [--poll-interval 0.5]\n\n" +
			"Nothing is sent unless the device's active run is exactly RUN_ID.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "run-id", Destination: &o.runID, Usage: "the runId the run command printed", Required: true},
			cmdutil.Seconds("cancel-timeout", "seconds to wait for a terminal state", 30, &o.timeout),
			cmdutil.Seconds("poll-interval", "longest pause between status polls, seconds", 0.5, &o.poll),
		},
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			return runCancel(ctx, d, o)
		}),
	}
}

func runCancel(ctx context.Context, d cmdutil.DeviceDeps, o *cancelOptions) (cmdutil.Result, error) {
	if o.runID == "" {
		return cmdutil.Result{}, fault.Usage(fault.CodeInvalidOption, "--run-id must not be empty")
	}
	store := d.G.Env.SecretsStore()
	return cmdutil.WithDevice(ctx, d, func(d *device.Device) (cmdutil.Result, error) {
		out, err := replay.CancelRun(ctx, d, o.runID, o.timeout, o.poll)
		if err != nil {
			return cmdutil.Result{}, err
		}
		out.Redact(ctx, d, store)
		return cmdutil.OK(out), nil
	})
}

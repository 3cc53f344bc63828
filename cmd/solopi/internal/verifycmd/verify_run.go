package verifycmd

import (
	"context"
	"os"
	"path/filepath"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/progress"
	"github.com/solopi-dev/solopi/report"
	"github.com/solopi-dev/solopi/report/console"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/video"
	"github.com/solopi-dev/solopi/verify"
	"github.com/solopi-dev/solopi/verify/execution"
	"github.com/solopi-dev/solopi/verify/onphone"
)

// onDeviceFlags configure only solopi-ai's on-device provider, which this
// tool refuses (provider_not_supported): given with any other provider
// they are refused too, rather than silently ignored.
var onDeviceFlags = []string{"model-package", "model-id", "model-version", "public-key"}

// verifyRunFlags are verify-run's flags as given.
type verifyRunFlags struct {
	plan, artifacts, decisions, provider string
	onDevice                             [4]string
	cloud, cloudFallback, junit          string
	devices                              string
	video                                string
	console                              bool
	space                                string
	budgets                              cmdutil.RunBudgets
	model                                cmdutil.ModelOptions
	hooks                                verifyRunHooks
}

// verifyRunHooks are what the process that builds the command hands it
// beside the flags: consoleStarted, when set, learns the live console's
// URL as it starts (a caller that drives the page while the run goes on;
// the announcement on stderr is for a person).
type verifyRunHooks struct {
	consoleStarted func(url string)
}

func newCmdVerifyRun(e cmdutil.Env, h verifyRunHooks) *cli.Command {
	f := &verifyRunFlags{hooks: h}
	return &cli.Command{
		Name:  "verify-run",
		Usage: "run a verification plan on the phone and judge it (exit 0 passed, 2 failed or not_tested, 130 interrupted)",
		UsageText: "solopi verify-run --plan PLAN.json --artifacts NEW_DIR [--agent-decisions FILE] [--decision-provider static|cloud|vision]\n" +
			"    [--junit FILE] [--devices all|S1,S2] [--video off|on-failure|always] [--console] [--restart-app|--no-restart-app] [--run-timeout 600] ...\n\n" +
			"Every input (plan, decisions, provider options, output paths) is checked before the phone is touched; with\n" +
			"--decision-provider vision, or a plan with vision oracles, the planner-check preflight runs next, still before\n" +
			"the phone. Deterministic segments are imported and replayed like case-import --replace and run --case; explore\n" +
			"steps drive one Agent session each. Ctrl-C cancels exactly the replay or session that is active and still\n" +
			"writes the report, marked interrupted (exit 130); so does the --console page's stop button. --video records each\n" +
			"phone's screen for the whole run (one recording per phone, kept with on-failure only when the verdict is not\n" +
			"passed); timeline.json and the output's segments[] give every segment's steps and durations.\n\nExample:\n  solopi verify-run --plan login.plan.json --artifacts ./verify-$(date +%s) --junit ./junit.xml\n  solopi verify-run --plan login.plan.json --artifacts ./v2 --decision-provider vision --console\n  solopi verify-run --plan login.plan.json --artifacts ./v3 --video on-failure",
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "plan", Destination: &f.plan, Usage: "verification plan JSON (verify-compile)", Required: true},
			&cli.StringFlag{Name: "artifacts", Destination: &f.artifacts, Usage: "evidence directory to create (must not exist)", Required: true},
			&cli.StringFlag{Name: "agent-decisions", Destination: &f.decisions, Usage: "static Agent decisions {scenarioId: {exploreStepId: [decision, ...]}}"},
			&cli.StringFlag{Name: "decision-provider", Destination: &f.provider, Usage: "static (the decisions file), cloud (--cloud-endpoint), vision (the pure-vision planner) or on-device (refused: not deployed by this tool)", Value: execution.ProviderStatic},
			&cli.StringFlag{Name: "model-package", Destination: &f.onDevice[0], Usage: "on-device provider only (refused)"},
			&cli.StringFlag{Name: "model-id", Destination: &f.onDevice[1], Usage: "on-device provider only (refused)"},
			&cli.StringFlag{Name: "model-version", Destination: &f.onDevice[2], Usage: "on-device provider only (refused)"},
			&cli.StringFlag{Name: "public-key", Destination: &f.onDevice[3], Usage: "on-device provider only (refused)"},
			&cli.StringFlag{Name: "cloud-endpoint", Destination: &f.cloud, Usage: "the cloud provider's URL (POST the decision context, read one decision)"},
			&cli.StringFlag{Name: "cloud-fallback-endpoint", Destination: &f.cloudFallback, Usage: "asked when the cloud or vision provider's model is unreachable"},
			&cli.StringFlag{Name: "junit", Destination: &f.junit, Usage: "also write a JUnit XML report (one testcase per checkpoint, grouped by scenario)"},
			cmdutil.DevicesFlag(&f.devices, "all, or S1,S2,…: run independent scenarios on these phones at once, in the plan's dependency order; the report is the one a single phone gives (default: the selected device)"),
			&cli.StringFlag{Name: "video", Value: string(video.ModeOff), Destination: &f.video, Usage: "record each phone's screen for the whole run with adb screenrecord: off, on-failure (kept only when the verdict is not passed) or always; the parts land in --artifacts (video.mp4) with their digests in manifest.json"},
			&cli.BoolFlag{Name: "console", Destination: &f.console, Usage: "vision provider: serve the live console on 127.0.0.1 (URL on stderr and in the output)"},
			&cli.StringFlag{Name: "coordinate-space", Destination: &f.space, Usage: "vision: auto negotiates in the preflight; or force relative_0_999, image_pixels, display_pixels (env " + chat.EnvCoordinateSpace + ")", Value: string(coord.SpaceAuto)},
		}, cmdutil.RunBudgetFlags(&f.budgets)...), cmdutil.ModelFlags(&f.model)...),
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			o, err := f.options(d.G)
			if err != nil {
				return cmdutil.Result{}, err
			}
			if d.G.Changed("devices") {
				if o.serials, err = d.G.DeviceSerials(ctx, f.devices, true); err != nil {
					return cmdutil.Result{}, err
				}
			}
			return runVerifyRun(ctx, d, o)
		}),
	}
}

// verifyRunOptions are verify-run's flags, checked.
type verifyRunOptions struct {
	run     execution.RunOptions
	budgets onphone.Budgets
	console bool
	// serials are --devices' phones (nil: the selected device).
	serials []string
	// vision reads the model flags: only when the run needs the planner.
	vision func() (*agentloop.ModelSetup, coord.Space, error)
	stdin  *os.File
	verifyRunHooks
}

func (f *verifyRunFlags) options(g *cmdutil.Globals) (*verifyRunOptions, error) {
	plan, err := cmdutil.ReadInput(f.plan, "plan")
	if err != nil {
		return nil, err
	}
	o := &verifyRunOptions{console: f.console, stdin: g.Env.Stdin, verifyRunHooks: f.hooks}
	o.run = execution.RunOptions{Plan: plan, Artifacts: f.artifacts, DecisionsFile: f.decisions, JUnit: f.junit, Video: video.Mode(f.video),
		Provider: execution.ProviderOptions{Name: f.provider, CloudEndpoint: f.cloud, CloudFallbackEndpoint: f.cloudFallback}}
	for _, name := range onDeviceFlags {
		if g.Changed(name) {
			o.run.Provider.OnDeviceFlags = append(o.run.Provider.OnDeviceFlags, name)
		}
	}
	if o.run.Artifacts == "" {
		return nil, fault.Usage(fault.CodeInvalidOption, "--artifacts must name a new directory")
	}
	if f.junit != "" {
		// verify-run has no --overwrite: an existing JUnit file is never
		// replaced, and the error says so instead of naming a flag the
		// command does not have.
		if _, err := artifacts.JUnitOutput(false).CheckFile(f.junit); fault.CodeOf(err) == fault.CodeOutputExists {
			abs, _ := filepath.Abs(f.junit)
			return nil, fault.Usage(fault.CodeOutputExists, "the --junit file already exists and verify-run never replaces one").With("output", abs).
				WithUserAction("Remove the file or name a new one (--junit).")
		}
	}
	if o.console && o.run.Provider.Name != execution.ProviderVision {
		return nil, fault.Usage(fault.CodeInvalidOption, "--console shows the vision planner live: it needs --decision-provider vision")
	}
	if o.budgets, err = f.budgets.Budgets(); err != nil {
		return nil, err
	}
	o.vision = func() (*agentloop.ModelSetup, coord.Space, error) {
		s, err := f.model.Setup(g)
		if err != nil {
			return nil, "", err
		}
		space, err := cmdutil.CoordinateSpace(g, f.space)
		return s, space, err
	}
	return o, nil
}

// verifyRunResult is solopi-ai's summary plus the live console's address.
type verifyRunResult struct {
	execution.RunSummary
	Console string `json:"console,omitempty"`
	// HTMLReport is report.html in the artifacts directory (report is
	// solopi-ai's report.json), or HTMLReportError why it is missing.
	HTMLReport      string `json:"htmlReport,omitempty"`
	HTMLReportError string `json:"htmlReportError,omitempty"`
}

// segmentProgress renders verify-run's segments on the status line:
// segment i of the plan's, the scenario and segment, the verdicts so far.
func segmentProgress(line *progress.Line) func(execution.SegmentProgress) {
	if !line.Enabled() {
		return nil
	}
	return func(p execution.SegmentProgress) {
		line.Update(func(s *progress.State) {
			s.Index, s.Total = p.Index, p.Total
			s.Label = p.ScenarioID + " · " + p.Phase
			if p.State == "" {
				s.Phase = p.Route
				return
			}
			s.Phase = p.State
			switch p.State {
			case "passed", "done":
				s.Passed++
			case "failed":
				s.Failed++
			default:
				s.NotTested++
			}
		})
	}
}

// runVerifyRun checks every input, runs the planner preflight when the
// run needs the planner, then opens the phone and runs the plan
// (verify/onphone, the farm's shards' path too).
func runVerifyRun(ctx context.Context, d cmdutil.DeviceDeps, o *verifyRunOptions) (cmdutil.Result, error) {
	g := d.G
	var live *console.Server
	defer func() {
		if live != nil {
			_ = live.Close()
		}
	}()
	// The console's stop button cancels the run's context: the engine
	// cancels the active replay or session and writes the report marked
	// interrupted, exactly as on Ctrl-C.
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	o.run.Setup = func(plan *verify.Plan) (execution.DecisionProvider, execution.VisionJudge, error) {
		isVision := o.run.Provider.Name == execution.ProviderVision
		if !isVision && !plan.HasVision() {
			return nil, nil, nil
		}
		s, space, err := o.vision()
		if err != nil {
			return nil, nil, err
		}
		// The model is checked before the phone is opened.
		pre, err := s.Preflight(ctx, space, 0, 0)
		if err != nil {
			return nil, nil, err
		}
		cfg := execution.VisionConfig{Model: s.Model, Preflight: pre, Runtime: s.Runtime(space)}
		if isVision {
			var terminal agentloop.Confirmer
			if o.stdin != nil && isatty.IsTerminal(o.stdin.Fd()) && isatty.IsTerminal(os.Stderr.Fd()) {
				terminal = &agentloop.TerminalConfirmer{In: o.stdin, Out: g.Env.Stderr}
			}
			var viewer agentloop.Confirmer
			if o.console {
				if live, err = console.Start("verify-run " + plan.Requirement.ID); err != nil {
					return nil, nil, err
				}
				_ = live.Announce(g.Env.Stderr)
				live.OnStop(stopRun)
				if o.consoleStarted != nil {
					o.consoleStarted(live.URL())
				}
				cfg.Runtime.OnEvent, cfg.OnScreen, viewer = live.OnEvent, live.OnScreen, live
			}
			cfg.Runtime.Confirmer = agentloop.FirstAnswer(terminal, viewer)
		}
		judge, err := execution.NewVisionReviewer(cfg)
		if err != nil || !isVision {
			return nil, judge, err
		}
		prov, err := execution.NewVisionProvider(cfg)
		return prov, judge, err
	}
	b := o.budgets
	b.Phone.Progress = d.Progress()
	opens := []onphone.SessionOpener{func(ctx context.Context) (*device.Session, error) { return d.Session(ctx, true) }}
	if o.serials != nil {
		opens = opens[:0]
		for _, serial := range o.serials {
			opens = append(opens, func(ctx context.Context) (*device.Session, error) { return d.SessionOn(ctx, serial, true) })
		}
	}
	sum, err := onphone.VerifyAcross(runCtx, opens, o.run, b, segmentProgress(g.Progress))
	if err != nil {
		if live != nil {
			e := fault.From(err)
			live.Finish(console.Final{Outcome: "error", Message: e.Message, ExitCode: outcome.ExitOf(e)})
		}
		return cmdutil.Result{}, err
	}
	out := verifyRunResult{RunSummary: *sum}
	html := cmdutil.ReportOf(filepath.Dir(sum.Report), report.Options{}, nil)
	out.HTMLReport, out.HTMLReportError = html.Report, html.ReportError
	res := cmdutil.Failed(out)
	switch {
	case sum.Interrupted:
		res = cmdutil.WithKind(out, fault.Interrupted)
	case sum.Success:
		res = cmdutil.OK(out)
	}
	if live != nil {
		out.Console = live.URL()
		res.Value = out
		status := sum.Status
		if sum.Interrupted {
			status = "interrupted"
		}
		live.Finish(console.Final{Outcome: status, Message: "verification " + sum.ReportID + ": " + sum.Status, ExitCode: res.Exit,
			Report: out.HTMLReport, ReportError: out.HTMLReportError})
	}
	return res, nil
}

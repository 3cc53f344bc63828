package verifycmd

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/plannercmd"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/progress"
	"github.com/solopi-dev/solopi/report"
	"github.com/solopi-dev/solopi/report/console"
	"github.com/solopi-dev/solopi/verify"
	"github.com/solopi-dev/solopi/verify/execution"
	"github.com/solopi-dev/solopi/verify/onphone"
)

// onDeviceFlags configure only solopi-ai's on-device provider, which this
// tool refuses (provider_not_supported): given with any other provider
// they are refused too, rather than silently ignored.
var onDeviceFlags = []string{"model-package", "model-id", "model-version", "public-key"}

func verifyRunCommand(exit *int, e cmdutil.Env) *cli.Command {
	return &cli.Command{
		Name:  "verify-run",
		Usage: "run a verification plan on the phone and judge it (exit 0 passed, 2 failed or not_tested, 130 interrupted)",
		UsageText: "solopi verify-run --plan PLAN.json --artifacts NEW_DIR [--agent-decisions FILE] [--decision-provider static|cloud|vision]\n" +
			"    [--junit FILE] [--console] [--restart-app|--no-restart-app] [--run-timeout 600] ...\n\n" +
			"Every input (plan, decisions, provider options, output paths) is checked before the phone is touched; with\n" +
			"--decision-provider vision, or a plan with vision oracles, the planner-check preflight runs next, still before\n" +
			"the phone. Deterministic segments are imported and replayed like case-import --replace and run --case; explore\n" +
			"steps drive one Agent session each. Ctrl-C cancels exactly the replay or session that is active and still\n" +
			"writes the report, marked interrupted (exit 130).\n\nExample:\n  solopi verify-run --plan login.plan.json --artifacts ./verify-$(date +%s) --junit ./junit.xml\n  solopi verify-run --plan login.plan.json --artifacts ./v2 --decision-provider vision --console",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "plan", Usage: "verification plan JSON (verify-compile)", Required: true},
			&cli.StringFlag{Name: "artifacts", Usage: "evidence directory to create (must not exist)", Required: true},
			&cli.StringFlag{Name: "agent-decisions", Usage: "static Agent decisions {scenarioId: {exploreStepId: [decision, ...]}}"},
			&cli.StringFlag{Name: "decision-provider", Usage: "static (the decisions file), cloud (--cloud-endpoint), vision (the pure-vision planner) or on-device (refused: not deployed by this tool)", Value: execution.ProviderStatic},
			&cli.StringFlag{Name: "model-package", Usage: "on-device provider only (refused)"},
			&cli.StringFlag{Name: "model-id", Usage: "on-device provider only (refused)"},
			&cli.StringFlag{Name: "model-version", Usage: "on-device provider only (refused)"},
			&cli.StringFlag{Name: "public-key", Usage: "on-device provider only (refused)"},
			&cli.StringFlag{Name: "cloud-endpoint", Usage: "the cloud provider's URL (POST the decision context, read one decision)"},
			&cli.StringFlag{Name: "cloud-fallback-endpoint", Usage: "asked when the cloud or vision provider's model is unreachable"},
			&cli.StringFlag{Name: "junit", Usage: "also write a JUnit XML report (one testcase per checkpoint, grouped by scenario)"},
			&cli.BoolFlag{Name: "console", Usage: "vision provider: serve the live console on 127.0.0.1 (URL on stderr and in the output)"},
			&cli.StringFlag{Name: "coordinate-space", Usage: "vision: auto negotiates in the preflight; or force relative_0_999, image_pixels, display_pixels (env " + chat.EnvCoordinateSpace + ")", Value: string(coord.SpaceAuto)},
		}, append(RunBudgetFlags(), plannercmd.ModelFlags()...)...),
		Action: cmdutil.Action(exit, e, func(ctx context.Context, g *cmdutil.Globals, c *cli.Context) (outcome.Result, error) {
			o, err := readVerifyRunOptions(c)
			if err != nil {
				return outcome.Result{}, err
			}
			o.vision = func() (*plannercmd.Setup, coord.Space, error) {
				s, err := plannercmd.ReadSetup(c, e)
				if err != nil {
					return nil, "", err
				}
				space, err := plannercmd.Space(c, e)
				return s, space, err
			}
			o.stdin = e.Stdin
			return runVerifyRun(ctx, g, g.Deps(), o)
		}),
	}
}

// RunBudgets are verify-run's device budgets, which the managed workers
// share: whether to restart the app under test, and the phone's timeouts.
type RunBudgets struct {
	restartApp *bool
	phone      onphone.Options
}

// RunBudgetFlags are the flags of runBudgets (solopi-ai's names and
// defaults).
func RunBudgetFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "restart-app", Usage: "force-stop and relaunch the target app before each test and precondition replay"},
		&cli.BoolFlag{Name: "no-restart-app", Usage: "never restart the target app before a replay"},
		&cli.Float64Flag{Name: "run-timeout", Usage: "seconds per replay; the replay is cancelled after", Value: 600},
		&cli.Float64Flag{Name: "import-timeout", Usage: "seconds to wait for a case import receipt", Value: 30},
		&cli.Float64Flag{Name: "ack-timeout", Usage: "seconds to wait for SoloPi to acknowledge a replay start", Value: 20},
		&cli.Float64Flag{Name: "agent-start-timeout", Usage: "seconds to wait for an Agent session's first observation", Value: 30},
		&cli.Float64Flag{Name: "agent-action-timeout", Usage: "seconds to wait for each Agent action's receipt", Value: 20},
		&cli.Float64Flag{Name: "agent-end-timeout", Usage: "seconds to wait for an Agent session to end or cancel", Value: 15},
		&cli.Float64Flag{Name: "poll-interval", Usage: "longest pause between device polls, seconds", Value: 0.2},
	}
}

// ReadRunBudgets reads runBudgetFlags.
func ReadRunBudgets(c *cli.Context) (RunBudgets, error) {
	var b RunBudgets
	if c.Bool("restart-app") && c.Bool("no-restart-app") {
		return b, fault.Usage(plannercmd.CodeOption, "--restart-app and --no-restart-app exclude each other")
	}
	if c.Bool("restart-app") || c.Bool("no-restart-app") {
		v := c.Bool("restart-app")
		b.restartApp = &v
	}
	for _, d := range []struct {
		flag string
		v    *time.Duration
	}{
		{"run-timeout", &b.phone.RunTimeout}, {"import-timeout", &b.phone.ImportTimeout}, {"ack-timeout", &b.phone.AckTimeout},
		{"agent-start-timeout", &b.phone.AgentStartTimeout}, {"agent-action-timeout", &b.phone.AgentActionTimeout},
		{"agent-end-timeout", &b.phone.AgentEndTimeout}, {"poll-interval", &b.phone.PollInterval},
	} {
		var err error
		if *d.v, err = cmdutil.Seconds(d.flag, c.Float64(d.flag)); err != nil {
			return b, err
		}
	}
	return b, nil
}

// verifyRunOptions are verify-run's flags, checked.
type verifyRunOptions struct {
	run execution.RunOptions
	RunBudgets
	console bool
	// vision reads the model flags: only when the run needs the planner.
	vision func() (*plannercmd.Setup, coord.Space, error)
	stdin  *os.File
}

func readVerifyRunOptions(c *cli.Context) (*verifyRunOptions, error) {
	plan, err := ReadInput(c.String("plan"), "plan")
	if err != nil {
		return nil, err
	}
	o := &verifyRunOptions{console: c.Bool("console")}
	o.run = execution.RunOptions{Plan: plan, Artifacts: c.String("artifacts"), DecisionsFile: c.String("agent-decisions"), JUnit: c.String("junit"),
		Provider: execution.ProviderOptions{Name: c.String("decision-provider"), CloudEndpoint: c.String("cloud-endpoint"),
			CloudFallbackEndpoint: c.String("cloud-fallback-endpoint")}}
	for _, f := range onDeviceFlags {
		if c.IsSet(f) {
			o.run.Provider.OnDeviceFlags = append(o.run.Provider.OnDeviceFlags, f)
		}
	}
	if o.run.Artifacts == "" {
		return nil, fault.Usage(plannercmd.CodeOption, "--artifacts must name a new directory")
	}
	if o.console && o.run.Provider.Name != execution.ProviderVision {
		return nil, fault.Usage(plannercmd.CodeOption, "--console shows the vision planner live: it needs --decision-provider vision")
	}
	if o.RunBudgets, err = ReadRunBudgets(c); err != nil {
		return nil, err
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
// run needs the planner, then opens the phone and runs the plan.
func runVerifyRun(ctx context.Context, g *cmdutil.Globals, d cmdutil.DeviceDeps, o *verifyRunOptions) (outcome.Result, error) {
	var live *console.Server
	defer func() {
		if live != nil {
			_ = live.Close()
		}
	}()
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
		pre, err := plannercmd.Preflight(ctx, s, space, 0, 0)
		if err != nil {
			return nil, nil, err
		}
		cfg := execution.VisionConfig{Model: s.Model, Preflight: pre, Runtime: agentloop.Config{
			Space: space, Policy: s.Policy, ProfileKey: s.ProfileKey(), CacheDir: s.CacheDir, Recalibrate: s.Refresh, Redact: s.Redact}}
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
	sum, err := VerifyOnPhone(ctx, d, o.run, o.RunBudgets, segmentProgress(g.Progress))
	if err != nil {
		return outcome.Result{}, err
	}
	out := verifyRunResult{RunSummary: *sum}
	html := cmdutil.ReportOf(filepath.Dir(sum.Report), report.Options{}, nil)
	out.HTMLReport, out.HTMLReportError = html.Report, html.ReportError
	if live != nil {
		out.Console = live.URL()
	}
	exit := outcome.ExitFailure
	switch {
	case sum.Interrupted:
		exit = outcome.ExitInterrupted
	case sum.Success:
		exit = outcome.ExitOK
	}
	return outcome.Result{Value: out, Exit: exit}, nil
}

// VerifyOnPhone is verify-run's one path to the phone, the managed worker's
// too: it checks every input (execution.Prepare, which runs o.Setup), then
// opens the SoloPi session on the device d names and runs the plan there.
// observe, when set, follows the segments (the status line); the replays
// inside them then report nothing of their own.
func VerifyOnPhone(ctx context.Context, d cmdutil.DeviceDeps, o execution.RunOptions, b RunBudgets, observe func(execution.SegmentProgress)) (*execution.RunSummary, error) {
	prep, err := execution.Prepare(o)
	if err != nil {
		return nil, err
	}
	sess, err := d.Session(ctx, true)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	b.phone.Foreground = sess.Foreground
	if observe == nil {
		b.phone.Progress = d.Progress()
	}
	phone := onphone.New(sess.Device, b.phone)
	defer phone.Close()
	return prep.Run(ctx, execution.Engine{Runner: phone, Agent: phone, RestartApp: b.restartApp,
		Clock: sess.Device.Clock(), Observe: observe})
}

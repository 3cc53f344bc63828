package plannercmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/adbdevice"
	"github.com/solopi-dev/solopi/agentloop/agentdevice"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/video"
)

// agentRunFlags are the agent-run flags as given.
type agentRunFlags struct {
	task, mode, trajectory    string
	overwrite                 bool
	maxSteps                  int
	maxDuration               time.Duration
	space                     string
	settle                    float64
	interactive               string
	console                   bool
	actionTimeout, ackTimeout time.Duration
	poll                      time.Duration
	video                     string
	model                     cmdutil.ModelOptions
	hooks                     agentRunHooks
}

// agentRunOptions are the agent-run flags, checked.
type agentRunOptions struct {
	task          string
	mode          string
	trajectory    string
	overwrite     bool
	maxSteps      int
	maxDuration   time.Duration
	space         coord.Space
	settle        time.Duration
	interactive   string
	console       bool
	actionTimeout time.Duration
	ackTimeout    time.Duration
	poll          time.Duration
	setup         *agentloop.ModelSetup
	stdin         *os.File
	video         video.Mode
	agentRunHooks
}

// agentRunHooks are what the process that builds the command hands it
// beside the flags: consoleStarted, when set, learns the live console's
// URL as it starts (a caller that drives the page while the run goes on;
// the announcement on stderr is for a person).
type agentRunHooks struct {
	consoleStarted func(url string)
}

func newCmdAgentRun(e cmdutil.Env, h agentRunHooks) *cli.Command {
	f := &agentRunFlags{hooks: h}
	return &cli.Command{
		Name:  "agent-run",
		Usage: "run a task with the strict pure-vision planner (the model sees only the task and screenshots)",
		UsageText: "solopi agent-run --task TEXT [--device-mode solopi|adb] [--trajectory FILE] [--console] [--video off|on-failure|always] [--max-steps 30] [--max-duration 600]\n" +
			"    [--coordinate-space auto|relative_0_999|image_pixels|display_pixels] [--model-base-url URL] [--model NAME] ...\n\n" +
			"The planner-check preflight runs first, before the device is opened (and in adb mode the ADB Keyboard is checked\n" +
			"before anything is sent to the phone).\n\n" +
			"With --trajectory the screenshots are kept in screens/ beside it and report.html is written there (named\n" +
			"\"report\" in the JSON). --console serves the run live on 127.0.0.1 with a random token in the URL: the phone's\n" +
			"screen from the first frame, a stop button that cancels the run as Ctrl-C does, and at the end the outcome and\n" +
			"the report's path; it stops serving when the command ends. --video records the screen with adb screenrecord for the\n" +
			"whole run (video.mp4 beside the trajectory, its digest in the JSON's video.files; each step in report.html seeks it).\n\n" +
			"Exit: 0 completed and confirmed by the isolated review; 2 not completed or blocked, or the preflight found a model\n" +
			"that refuses images (model_rejects_images) or no ADB Keyboard (adb_keyboard_missing); 3 usage; 4 model, calibration\n" +
			"or device protocol error (model_unreachable, model_auth_failed, ...); 124 --max-duration; 130 interrupted.\n\nExample:\n  SOLOPI_MODEL_API_KEY=... solopi agent-run --task \"open Settings and turn on dark mode\" --model-base-url https://llm.example/v1 --model ui-tars --trajectory ./run/t.json\n  solopi agent-run --task \"turn on dark mode\" --model-base-url https://llm.example/v1 --trajectory ./run/t.json --video always",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "task", Destination: &f.task, Usage: "what to do, in the user's words"},
			&cli.StringFlag{Name: "device-mode", Destination: &f.mode, Usage: "solopi (a SoloPi Agent session: taps become clicks on the node under the point) or adb (plain input)", Value: agentloop.ModeSoloPi},
			&cli.StringFlag{Name: "trajectory", Destination: &f.trajectory, Usage: "write the audit trajectory (schema 1.3) to this file"},
			&cli.BoolFlag{Name: "overwrite", Destination: &f.overwrite, Usage: "replace an existing trajectory file"},
			&cli.IntFlag{Name: "max-steps", Destination: &f.maxSteps, Usage: "planning steps before giving up", Value: 30},
			cmdutil.Seconds("max-duration", "seconds before the task times out (exit 124)", 600, &f.maxDuration),
			&cli.StringFlag{Name: "coordinate-space", Destination: &f.space, Usage: "auto negotiates with synthetic images before the first plan; or force relative_0_999, image_pixels, display_pixels (env " + chat.EnvCoordinateSpace + ")", Value: string(coord.SpaceAuto)},
			&cli.Float64Flag{Name: "settle", Destination: &f.settle, Usage: "seconds to wait after an action before verifying it (default 0.5 for adb, 0 for solopi, which settles on the device)", Value: -1},
			&cli.StringFlag{Name: "interactive", Destination: &f.interactive, Usage: "ask a human on the terminal for confirmations and takeovers: auto (when stdin and stderr are terminals), always, never", Value: "auto"},
			&cli.BoolFlag{Name: "console", Destination: &f.console, Usage: "serve a live view of the run on this machine (announced on stderr as {\"console\":{\"url\":...}}); confirmations and takeovers can be answered there too"},
			cmdutil.Seconds("action-timeout", "solopi mode: seconds to wait for each action's receipt", 15, &f.actionTimeout),
			cmdutil.Seconds("ack-timeout", "solopi mode: seconds to wait for the session's first observation", 15, &f.ackTimeout),
			cmdutil.Seconds("poll-interval", "solopi mode: longest pause between polls, in seconds", 0.2, &f.poll),
			&cli.StringFlag{Name: "video", Value: string(video.ModeOff), Destination: &f.video, Usage: "record the screen with adb screenrecord: off, on-failure (kept only when the task did not complete) or always; kept beside --trajectory (video.mp4), which it needs"},
		}, cmdutil.ModelFlags(&f.model)...),
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			o, err := f.options(d.G)
			if err != nil {
				return cmdutil.Result{}, err
			}
			return runAgentRun(ctx, d, o)
		}),
	}
}

// options checks the flags before anything runs.
func (f *agentRunFlags) options(g *cmdutil.Globals) (*agentRunOptions, error) {
	o := &agentRunOptions{task: strings.TrimSpace(f.task), mode: f.mode, trajectory: f.trajectory, overwrite: f.overwrite,
		maxSteps: f.maxSteps, maxDuration: f.maxDuration, interactive: f.interactive, console: f.console,
		actionTimeout: f.actionTimeout, ackTimeout: f.ackTimeout, poll: f.poll, stdin: g.Env.Stdin, agentRunHooks: f.hooks}
	// The parser requires --task and checks --device-mode's choices.
	if o.task == "" {
		return nil, fault.Usage(fault.CodeInvalidOption, "--task is blank: say what the agent should do")
	}
	if o.maxSteps < 1 || o.maxSteps > 1000 {
		return nil, fault.Usage(fault.CodeInvalidOption, "--max-steps must be between 1 and 1000")
	}
	var err error
	if o.space, err = cmdutil.CoordinateSpace(g, f.space); err != nil {
		return nil, err
	}
	switch o.interactive {
	case "auto", "always", "never":
	default:
		return nil, fault.Usagef(fault.CodeInvalidOption, "--interactive must be auto, always or never, not %s", plannerQuote(o.interactive))
	}
	settle := f.settle
	if settle < 0 {
		settle = map[string]float64{agentloop.ModeADB: 0.5, agentloop.ModeSoloPi: 0}[o.mode]
	}
	if o.settle, err = cmdutil.ParseSeconds("settle", settle, cmdutil.NonNegative); err != nil {
		return nil, err
	}
	var ok bool
	if o.video, ok = video.ParseMode(f.video); !ok {
		return nil, fault.Usage(fault.CodeInvalidOption, "--video must be off, on-failure or always")
	}
	if o.video != video.ModeOff && o.trajectory == "" {
		return nil, fault.Usage(fault.CodeInvalidOption, "--video needs --trajectory (the recording is kept beside it, with the report)")
	}
	if o.trajectory != "" {
		if _, err := (artifacts.Output{Mode: artifacts.ModeOf(o.overwrite)}).CheckFile(o.trajectory); err != nil {
			return nil, err
		}
	}
	if o.setup, err = f.model.Setup(g); err != nil {
		return nil, err
	}
	return o, nil
}

// agentRunResult is the JSON agent-run prints.
type agentRunResult struct {
	Success    bool                   `json:"success"`
	ErrorCode  string                 `json:"errorCode,omitempty"`
	Error      string                 `json:"error,omitempty"`
	UserAction string                 `json:"userActionRequired,omitempty"`
	Outcome    string                 `json:"outcome"`
	Message    string                 `json:"message"`
	RunID      string                 `json:"runId"`
	Task       string                 `json:"task"`
	DeviceMode string                 `json:"deviceMode"`
	SessionID  string                 `json:"sessionId,omitempty"`
	Steps      int                    `json:"steps"`
	Counters   agentloop.Counters     `json:"counters"`
	Metrics    agentloop.Metrics      `json:"metrics"`
	Profile    *agentloop.Profile     `json:"coordinateProfile"`
	Frame      *coord.Frame           `json:"frame"`
	Model      chat.Info              `json:"model"`
	Policy     agentloop.Policy       `json:"policy"`
	Duration   float64                `json:"durationSeconds"`
	Trajectory *plannerTrajectoryFile `json:"trajectory,omitempty"`
	// The report is report.html beside the trajectory.
	cmdutil.EvidenceReport
	Console   *consoleInfo   `json:"console,omitempty"`
	Cleanup   plannerCleanup `json:"cleanup"`
	CauseCode string         `json:"causeCode,omitempty"`
	// Preflight lists the checks that passed before the device was used.
	Preflight []agentloop.PreflightCheck `json:"preflight"`
	// Video is the screen recording (--video on-failure or always).
	Video *agentloop.VideoRecord `json:"video,omitempty"`
	// StepTimeline is each planning step's start, duration and status
	// (and, with a kept recording, its moment in it).
	StepTimeline []agentloop.StepTime `json:"stepTimeline"`
}

type plannerTrajectoryFile struct {
	Path   string `json:"path"`
	Events int    `json:"events"`
	Error  string `json:"error,omitempty"`
}

type plannerCleanup struct {
	Attempted bool   `json:"attempted"`
	Success   bool   `json:"success"`
	Error     string `json:"error,omitempty"`
}

// plannerUserAction tells a tester what to do next for each outcome.
var plannerUserAction = map[string]string{
	agentloop.OutcomeBlocked:     "A human must act on the phone (login, captcha, confirmation); run again with --interactive always on a terminal, or finish the step by hand and rerun.",
	agentloop.OutcomeCalibration: "The model answered in inconsistent coordinate spaces. Force one with --coordinate-space if you know the model's convention, or use another model.",
}

// runAgentRun runs the whole loop on the chosen device and prints the
// result; the trajectory is written whatever the outcome.
func runAgentRun(ctx context.Context, d cmdutil.DeviceDeps, o *agentRunOptions) (cmdutil.Result, error) {
	g := d.G
	s := o.setup
	// The model is checked before any device is opened.
	pre, err := s.Preflight(ctx, o.space, 0, 0)
	if err != nil {
		return cmdutil.Result{}, err
	}
	rec, err := agentloop.OpenVideo(filepath.Dir(o.trajectory), o.video, video.Options{}, o.overwrite)
	if err != nil {
		return cmdutil.Result{}, err
	}
	var dev agentloop.Device
	var sessionID string
	var screen video.Device
	switch o.mode {
	case agentloop.ModeADB:
		t, err := d.Transport(ctx)
		if err != nil {
			return cmdutil.Result{}, err
		}
		screen = device.NewDevice(t, d.SessionOptions(false).Device).RecorderView()
		ad := adbdevice.New(t)
		if err := s.RunCheck(pre, agentloop.CheckADBKeyboard, func() error { return ad.CheckKeyboard(ctx) }); err != nil {
			return cmdutil.Result{}, err
		}
		dev = ad
	default:
		sess, err := d.Session(ctx, true)
		if err != nil {
			return cmdutil.Result{}, err
		}
		defer sess.Close()
		screen = sess.Device.RecorderView()
		sd, closeClient, err := agentdevice.StartPlanner(ctx, sess, agentdevice.PlannerOptions{MaxSteps: o.maxSteps,
			MaxDuration: o.maxDuration, AckTimeout: o.ackTimeout, ActionTimeout: o.actionTimeout, PollInterval: o.poll})
		if err != nil {
			return cmdutil.Result{}, err
		}
		defer closeClient()
		dev, sessionID = sd, sd.SessionID()
	}
	// abandon gives the device back when the run cannot start.
	abandon := func() {
		cctx, cancel := device.Cleanup(ctx, 15*time.Second)
		defer cancel()
		_ = dev.Close(cctx)
	}
	watch, err := startAgentRunWatch(g, o)
	if err != nil {
		abandon()
		return cmdutil.Result{}, err
	}
	defer watch.Close()
	var terminal agentloop.Confirmer
	if o.interactive == "always" || (o.interactive == "auto" && o.stdin != nil && isatty.IsTerminal(o.stdin.Fd()) && isatty.IsTerminal(os.Stderr.Fd())) {
		terminal = &agentloop.TerminalConfirmer{In: o.stdin, Out: g.PromptWriter()}
	}
	cfg := s.Runtime(o.space)
	cfg.SettleDelay, cfg.Confirmer, cfg.Preflight, cfg.OnEvent = o.settle, watch.confirmer(terminal), pre, watch.events
	// The runtime observes through the watchers; dev stays the device to
	// close or cancel.
	agent, err := agentloop.New(cfg, watch.device(dev), s.Model)
	if err != nil {
		abandon()
		return cmdutil.Result{}, err
	}
	// The console's stop button cancels the run's context: the runtime
	// ends cancelled and the session is cancelled below, as on Ctrl-C.
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	watch.start(runCtx, dev, stopRun)
	rec.Start(runCtx, screen)
	res, runErr := agent.Run(runCtx, agentloop.Task{Goal: o.task, MaxSteps: o.maxSteps, MaxDuration: o.maxDuration})
	// The recording stops before the device is given back, on every
	// ending (an interrupt leaves it a short budget of its own).
	recorded := rec.Stop(runCtx, runErr == nil && res.Success)

	// Restore the input method / end the session even after an interrupt.
	cctx, cancel := device.Cleanup(ctx, 15*time.Second)
	defer cancel()
	cl := plannerCleanup{Attempted: true, Success: true}
	if err := agentdevice.Release(cctx, dev, res); err != nil {
		cl.Success, cl.Error = false, s.Redact(err.Error())
	}
	if runErr != nil {
		watch.finish("error", s.Redact(runErr.Error()), outcome.ExitFor(fault.Transport), cmdutil.EvidenceReport{})
		return cmdutil.Result{}, fault.Wrap(fault.Transport, fault.CodeRuntimeError, s.Redact(runErr.Error()), runErr)
	}

	out := agentRunResult{
		Success: res.Success, Outcome: res.Outcome, Message: res.Message, RunID: res.RunID, Task: res.Goal, DeviceMode: o.mode,
		SessionID: sessionID, Steps: res.Steps, Counters: res.Counters, Metrics: res.Metrics, Profile: res.Profile, Frame: res.Frame,
		Model: s.Info(), Policy: agentloop.StrictPolicy(), Duration: res.FinishedAt.Sub(res.StartedAt).Seconds(), Cleanup: cl,
		CauseCode: res.ErrorCode, Preflight: pre.Checks, Console: watch.consoleInfo(), Video: recorded,
	}
	if recorded != nil {
		recorded.Error = s.Redact(recorded.Error)
	}
	out.StepTimeline = append([]agentloop.StepTime{}, agentloop.StepTimeline(agent.State().Events(), res.StartedAt, recorded)...)
	for i := range out.StepTimeline {
		out.StepTimeline[i].Message = s.Redact(out.StepTimeline[i].Message)
	}
	if !res.Success {
		out.ErrorCode, out.Error = res.Outcome, res.Message
		if out.Error == "" {
			out.Error = "the task ended " + res.Outcome
		}
		out.UserAction = plannerUserAction[res.Outcome]
	}
	if o.trajectory != "" {
		st := agent.State()
		tr := agentloop.BuildTrajectory(res, st.Events(), s.Info(), s.Policy)
		abs, _ := filepath.Abs(o.trajectory)
		out.Trajectory = &plannerTrajectoryFile{Path: abs, Events: len(tr.Events)}
		if err := agentloop.WriteTrajectory(o.trajectory, tr); err != nil {
			out.Trajectory.Error = err.Error()
		} else {
			watch.writeReport(&out, o.trajectory)
		}
	}
	watch.finish(out.Outcome, s.Redact(out.Message), res.Exit, out.EvidenceReport)
	// res.Exit is outcome's table's code of the run's outcome.
	return cmdutil.Result{Value: s.Scrub(out), Exit: res.Exit}, nil
}

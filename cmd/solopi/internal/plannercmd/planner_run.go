package plannercmd

import (
	"context"
	"encoding/json"
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
	"github.com/solopi-dev/solopi/solopi/agent"
	"github.com/solopi-dev/solopi/solopi/device"
)

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
	setup         *Setup
	stdin         *os.File
}

func readAgentRunOptions(c *cli.Context, e cmdutil.Env) (*agentRunOptions, error) {
	o := &agentRunOptions{task: strings.TrimSpace(c.String("task")), mode: c.String("device-mode"), trajectory: c.String("trajectory"),
		overwrite: c.Bool("overwrite"), maxSteps: c.Int("max-steps"), interactive: c.String("interactive"), console: c.Bool("console")}
	if o.task == "" {
		return nil, fault.Usage(CodeOption, "--task is required: say what the agent should do")
	}
	if o.mode != agentloop.ModeSoloPi && o.mode != agentloop.ModeADB {
		return nil, fault.Usagef(CodeOption, "--device-mode must be solopi or adb, not %s", plannerQuote(o.mode))
	}
	if o.maxSteps < 1 || o.maxSteps > 1000 {
		return nil, fault.Usage(CodeOption, "--max-steps must be between 1 and 1000")
	}
	var err error
	if o.maxDuration, err = cmdutil.Seconds("max-duration", c.Float64("max-duration")); err != nil {
		return nil, err
	}
	if o.space, err = Space(c, e); err != nil {
		return nil, err
	}
	switch o.interactive {
	case "auto", "always", "never":
	default:
		return nil, fault.Usagef(CodeOption, "--interactive must be auto, always or never, not %s", plannerQuote(o.interactive))
	}
	settle := c.Float64("settle")
	if settle < 0 {
		settle = map[string]float64{agentloop.ModeADB: 0.5, agentloop.ModeSoloPi: 0}[o.mode]
	}
	if o.settle, err = plannerSeconds("settle", settle); err != nil {
		return nil, err
	}
	if o.actionTimeout, err = cmdutil.Seconds("action-timeout", c.Float64("action-timeout")); err != nil {
		return nil, err
	}
	if o.ackTimeout, err = cmdutil.Seconds("ack-timeout", c.Float64("ack-timeout")); err != nil {
		return nil, err
	}
	if o.poll, err = cmdutil.Seconds("poll-interval", c.Float64("poll-interval")); err != nil {
		return nil, err
	}
	if o.trajectory != "" {
		if err := checkPlannerTrajectoryPath(o.trajectory, o.overwrite); err != nil {
			return nil, err
		}
	}
	if o.setup, err = ReadSetup(c, e); err != nil {
		return nil, err
	}
	return o, nil
}

// checkPlannerTrajectoryPath refuses to replace a file silently and checks that
// the directory exists before anything runs.
func checkPlannerTrajectoryPath(p string, overwrite bool) error {
	_, err := artifacts.Output{Mode: artifacts.ModeOf(overwrite)}.CheckFile(p)
	return err
}

// AgentRunResult is the JSON agent-run prints.
type AgentRunResult struct {
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
	Console   *ConsoleInfo   `json:"console,omitempty"`
	Cleanup   plannerCleanup `json:"cleanup"`
	CauseCode string         `json:"causeCode,omitempty"`
	// Preflight lists the checks that passed before the device was used.
	Preflight []agentloop.PreflightCheck `json:"preflight"`
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
func runAgentRun(ctx context.Context, g *cmdutil.Globals, d cmdutil.DeviceDeps, o *agentRunOptions) (outcome.Result, error) {
	s := o.setup
	// The model is checked before any device is opened.
	pre, err := Preflight(ctx, s, o.space, 0, 0)
	if err != nil {
		return outcome.Result{}, err
	}
	var dev agentloop.Device
	var sessionID string
	switch o.mode {
	case agentloop.ModeADB:
		t, err := d.Transport(ctx)
		if err != nil {
			return outcome.Result{}, err
		}
		ad := adbdevice.New(t)
		if err := agentRunKeyboardCheck(ctx, s, pre, ad); err != nil {
			return outcome.Result{}, err
		}
		dev = ad
	default:
		sess, err := d.Session(ctx, true)
		if err != nil {
			return outcome.Result{}, err
		}
		defer sess.Close()
		client := agent.NewAgentClient(sess.Device, agent.AgentOptions{Foreground: sess.Foreground, PollInterval: o.poll})
		defer client.Close()
		budget := agent.DefaultAgentBudget()
		// Every plan may act once; freshness and verification observe
		// without spending steps. The model's latency must not idle the
		// session out, so the idle timeout is the device's maximum.
		budget.MaxSteps = int64(min(200, o.maxSteps))
		budget.MaxDurationMs = min(1800000, max(1000, o.maxDuration.Milliseconds()+60000))
		budget.IdleTimeoutMs = 300000
		// Repeating the same click is how a counter goes up; the host's
		// own guard stops repeats that change nothing on the screen.
		budget.MaxRepeatedActions = 20
		budget.MaxNoProgressSteps = 5
		sd, err := agentdevice.Start(ctx, client, agentdevice.Options{Budget: budget, AckTimeout: o.ackTimeout,
			ActionTimeout: o.actionTimeout, PollInterval: o.poll, StepIDPrefix: "planner"})
		if err != nil {
			return outcome.Result{}, err
		}
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
		return outcome.Result{}, err
	}
	defer watch.Close()
	var terminal agentloop.Confirmer
	if o.interactive == "always" || (o.interactive == "auto" && o.stdin != nil && isatty.IsTerminal(o.stdin.Fd()) && isatty.IsTerminal(os.Stderr.Fd())) {
		terminal = &agentloop.TerminalConfirmer{In: o.stdin, Out: g.PromptWriter()}
	}
	cfg := agentloop.Config{
		Space: o.space, Policy: s.Policy, ProfileKey: s.ProfileKey(), CacheDir: s.CacheDir, Recalibrate: s.Refresh,
		SettleDelay: o.settle, Confirmer: watch.confirmer(terminal), Redact: s.Redact, Preflight: pre, OnEvent: watch.events,
	}
	// The runtime observes through the watchers; dev stays the device to
	// close or cancel.
	agent, err := agentloop.New(cfg, watch.device(dev), s.Model)
	if err != nil {
		abandon()
		return outcome.Result{}, err
	}
	res, runErr := agent.Run(ctx, agentloop.Task{Goal: o.task, MaxSteps: o.maxSteps, MaxDuration: o.maxDuration})
	watch.Close()

	// Restore the input method / end the session even after an interrupt.
	cctx, cancel := device.Cleanup(ctx, 15*time.Second)
	defer cancel()
	cl := plannerCleanup{Attempted: true, Success: true}
	closeDev := dev.Close
	if sd, ok := dev.(*agentdevice.Device); ok && res != nil &&
		(res.Outcome == agentloop.OutcomeCancelled || res.Outcome == agentloop.OutcomeMaxDuration) {
		// Interrupted or timed out: cancel exactly the session we started.
		closeDev = sd.Cancel
	}
	if err := closeDev(cctx); err != nil {
		cl.Success, cl.Error = false, s.Redact(err.Error())
	}
	if runErr != nil {
		return outcome.Result{}, fault.Wrap(fault.Transport, "runtime_error", s.Redact(runErr.Error()), runErr)
	}

	out := AgentRunResult{
		Success: res.Success, Outcome: res.Outcome, Message: res.Message, RunID: res.RunID, Task: res.Goal, DeviceMode: o.mode,
		SessionID: sessionID, Steps: res.Steps, Counters: res.Counters, Metrics: res.Metrics, Profile: res.Profile, Frame: res.Frame,
		Model: s.modelInfo(), Policy: agentloop.StrictPolicy(), Duration: res.FinishedAt.Sub(res.StartedAt).Seconds(), Cleanup: cl,
		CauseCode: res.ErrorCode, Preflight: pre.Checks, Console: watch.consoleInfo(),
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
		tr := agentloop.BuildTrajectory(res, st.Events(), s.modelInfo(), s.Policy)
		abs, _ := filepath.Abs(o.trajectory)
		out.Trajectory = &plannerTrajectoryFile{Path: abs, Events: len(tr.Events)}
		if err := agentloop.WriteTrajectory(o.trajectory, tr); err != nil {
			out.Trajectory.Error = err.Error()
		} else {
			watch.writeReport(&out, o.trajectory)
		}
	}
	return outcome.Result{Value: plannerScrub(out, s.Redact), Exit: res.Exit}, nil
}

// plannerScrub is the last line of defence for the API key: the result is
// encoded, redacted and printed from the redacted bytes.
func plannerScrub(v any, redact func(string) string) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	return json.RawMessage(redact(string(b)))
}

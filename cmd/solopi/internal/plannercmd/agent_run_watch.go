package plannercmd

import (
	"context"
	"path/filepath"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/report"
	"github.com/solopi-dev/solopi/report/console"
)

// agentRunWatch is everything that watches an agent run from outside the
// runtime: the screenshots kept beside the trajectory for its report, the
// live console and the status line. The runtime sees only a device whose
// observations pass through it, an event observer and a confirmer.
type agentRunWatch struct {
	screens *agentloop.ScreenDir
	console *console.Server
	events  func(agentloop.AgentEvent)
}

// consoleInfo names the live console in agent-run's JSON.
type consoleInfo struct {
	URL string `json:"url"`
}

// startAgentRunWatch prepares the watchers the options ask for. With
// --console the console is listening and announced on stderr when it
// returns; Close stops it.
func startAgentRunWatch(g *cmdutil.Globals, o *agentRunOptions) (*agentRunWatch, error) {
	w := &agentRunWatch{}
	if o.trajectory != "" {
		dir, err := agentloop.NewScreenDir(filepath.Join(filepath.Dir(o.trajectory), report.ScreensDir))
		if err != nil {
			return nil, err
		}
		w.screens = dir
	}
	var onConsole func(agentloop.AgentEvent)
	if o.console {
		s, err := console.Start(o.task)
		if err != nil {
			return nil, err
		}
		// A stderr nobody reads loses only the announcement: the JSON
		// names the URL too.
		_ = s.Announce(g.PromptWriter())
		if o.consoleStarted != nil {
			o.consoleStarted(s.URL())
		}
		w.console, onConsole = s, s.OnEvent
	}
	w.events = chainEvents(agentProgress(g.Progress, o.maxSteps), onConsole)
	return w, nil
}

// device is dev with every screenshot kept and shown; dev itself stays
// the one to close or cancel.
func (w *agentRunWatch) device(dev agentloop.Device) agentloop.Device {
	if w.screens == nil && w.console == nil {
		return dev
	}
	return agentloop.ObserveScreens(dev, func(s *agentloop.Screen) {
		if w.screens != nil {
			w.screens.Save(s)
		}
		if w.console != nil {
			w.console.OnScreen(s)
		}
	})
}

// confirmer asks the terminal (when there is one to ask) and the console
// at once; the first answer counts.
func (w *agentRunWatch) confirmer(terminal agentloop.Confirmer) agentloop.Confirmer {
	if w.console == nil {
		return terminal
	}
	return agentloop.FirstAnswer(terminal, w.console)
}

// start readies the console for the run: the phone's current screen is
// its first frame (before the model is first asked) and its stop button
// calls stop. A screenshot that fails is left to the run's first
// observation.
func (w *agentRunWatch) start(ctx context.Context, dev agentloop.Device, stop func()) {
	if w.console == nil {
		return
	}
	w.console.OnStop(stop)
	if sc, err := dev.Observe(ctx); err == nil {
		w.console.OnScreen(sc)
	}
}

// finish shows the command's end on the console (the outcome and the
// report) and closes it; the page keeps what it shows.
func (w *agentRunWatch) finish(outcome, message string, exit int, rep cmdutil.EvidenceReport) {
	if w.console == nil {
		return
	}
	w.console.Finish(console.Final{Outcome: outcome, Message: message, ExitCode: exit, Report: rep.Report, ReportError: rep.ReportError})
	w.Close()
}

// consoleInfo is the console's entry in the JSON (nil without one).
func (w *agentRunWatch) consoleInfo() *consoleInfo {
	if w.console == nil {
		return nil
	}
	return &consoleInfo{URL: w.console.URL()}
}

// Close stops the console: open pages get the end of the stream and the
// port is released; nobody is waited for.
func (w *agentRunWatch) Close() {
	if w.console != nil {
		w.console.Close()
	}
}

// writeReport writes report.html beside the trajectory (and its
// screenshots) and records where, or why not, in out.
func (w *agentRunWatch) writeReport(out *agentRunResult, trajectory string) {
	out.EvidenceReport = cmdutil.ReportOf(filepath.Dir(trajectory), report.Options{Trajectory: filepath.Base(trajectory)}, nil)
	if w.screens == nil || out.ReportError != "" {
		return
	}
	if err := w.screens.Err(); err != nil {
		out.ReportError = "some screenshots were not kept: " + err.Error()
	}
}

package plannercmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/browsertest"
	"github.com/solopi-dev/solopi/internal/mp4check"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
)

// TestAgentRunConsoleStop drives agent-run --console --video on-failure
// from Chromium: the page's first frame is the phone's screen, taken
// before the first observation the runtime asks for; the stop button ends
// the run as Ctrl-C does (outcome cancelled, exit 130, the Agent session
// cancelled on the simulator, the trajectory, the report and the
// recording kept); the page then shows the outcome and the report and
// keeps showing them after the command has exited.
func TestAgentRunConsoleStop(t *testing.T) {
	t.Parallel()
	browser := browsertest.Start(t)
	d := cmdtest.CounterPhone(t, sim.Options{TimeScale: 10})
	// A slow model: the run is still planning when the stop is clicked.
	srv := startFakeModel(t, fakemodel.Options{Coords: fakemodel.CoordsImagePixels, PlanDelay: time.Second})
	dir := t.TempDir()
	traj := filepath.Join(dir, "trajectory.json")
	task := "increase the counter to 15 (console stop test)"
	urls := make(chan string, 1)
	app := plannerApp{env: fakeModelEnv(srv), open: func(ctx context.Context) (device.Transport, error) { return d, nil },
		hooks: agentRunHooks{consoleStarted: func(u string) { urls <- u }}}
	type result struct {
		out, errOut []byte
		code        int
	}
	done := make(chan result, 1)
	go func() {
		out, errOut, code := app.run(t, "--startup-timeout", "30", "agent-run", "--task", task, "--device-mode", agentloop.ModeSoloPi,
			"--console", "--trajectory", traj, "--calibration-cache", filepath.Join(dir, "cache"), "--max-steps", "40",
			"--max-duration", "300", "--settle", "0.2", "--interactive", "never", "--video", "on-failure")
		done <- result{out, errOut, code}
	}()
	var consoleURL string
	select {
	case consoleURL = <-urls:
	case r := <-done:
		t.Fatalf("the command ended before its console started: exit %d\n%s\n%s", r.code, r.out, r.errOut)
	}
	p := browsertest.Open(t, browser, consoleURL, 1280, 900)
	ctx, cancel := context.WithTimeout(p.Ctx, 120*time.Second)
	defer cancel()
	// The page's own history, in order, as a second listener sees it.
	browsertest.Eval[bool](t, p, `(() => { window.kinds = []; const es = new EventSource("/events" + location.search);
		es.onmessage = (e) => { const m = JSON.parse(e.data); window.kinds.push(m.kind === "agent" ? "agent:" + m.data.type : m.kind === "stop" && m.data.requested ? "stop:requested" : m.kind); }; return true; })()`)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const i = document.getElementById("screen"); return i.complete && i.naturalWidth > 0; })()`)); err != nil {
		t.Fatalf("the first frame has no screenshot: %v", err)
	}
	if !browsertest.Eval[bool](t, p, `document.getElementById("waiting").hidden`) {
		t.Error("the page still says it waits for the screen")
	}
	browsertest.Screenshot(t, p, "console-first-frame")
	browsertest.ConsoleStop(ctx, t)
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("the run did not end after the stop")
	}
	if r.code != outcome.ExitFor(fault.Interrupted) {
		t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", r.code, outcome.ExitFor(fault.Interrupted), r.out, r.errOut)
	}
	validatePlannerSchema(t, "agent-run", r.out)
	var res agentRunResult
	if err := json.Unmarshal(r.out, &res); err != nil {
		t.Fatal(err)
	}
	if res.Outcome != agentloop.OutcomeCancelled || !res.Cleanup.Success || res.SessionID == "" {
		t.Fatalf("%s", r.out)
	}
	// The recording of the stopped run is kept (not completed, so
	// on-failure keeps it), stopped within its budget.
	if res.Video == nil || !res.Video.Kept || len(res.Video.Files) == 0 || res.Video.Error != "" {
		t.Fatalf("video %s", r.out)
	}
	if b, err := os.ReadFile(filepath.Join(dir, res.Video.Files[0].Path)); err != nil {
		t.Fatal(err)
	} else if info, err := mp4check.Check(b); err != nil || info.Frames < 1 {
		t.Fatalf("the stopped run's recording is not playable: %+v %v", info, err)
	}
	// Exactly the run's own session was cancelled on the phone.
	var cancelled []string
	for _, m := range d.Mutations() {
		u := protocol.ParseMutationURI(m)
		if len(u.Segments) == 1 && u.Segments[0] == protocol.ActionAgent && u.Params[protocol.ParamType] == protocol.AgentCancel {
			cancelled = append(cancelled, u.Params[protocol.ParamSessionID])
		}
	}
	if len(cancelled) != 1 || cancelled[0] != res.SessionID {
		t.Fatalf("agent cancels on the simulator %v, want one for %s", cancelled, res.SessionID)
	}
	if _, err := os.Stat(traj); err != nil {
		t.Fatalf("the trajectory was not kept: %v", err)
	}
	if res.Report != filepath.Join(dir, "report.html") || res.ReportError != "" {
		t.Fatalf("report %q (%s)", res.Report, res.ReportError)
	}
	// The command has exited; the page shows its end and the report.
	browsertest.ConsoleFinal(ctx, t, p, consoleURL, "cancelled (exit code 130)", res.Report)
	if got := browsertest.Eval[string](t, p, `document.getElementById("state").textContent`); got != agentloop.OutcomeCancelled {
		t.Errorf("state %q", got)
	}
	if browsertest.Eval[string](t, p, `document.getElementById("phase").textContent`) != "finished" {
		t.Error("the page lost its final state when the command exited")
	}
	browsertest.Screenshot(t, p, "console-stopped")
	// The console had the phone's screen before the model was first asked
	// (the coordinate negotiation, then the plans): the first frame does
	// not wait for the runtime's first observation. The stop came from the
	// page, before the end.
	kinds := browsertest.Eval[[]string](t, p, `window.kinds`)
	first := func(k string) int {
		for i, v := range kinds {
			if v == k {
				return i
			}
		}
		return len(kinds)
	}
	if s, m := first("screen"), first("agent:model_request"); s >= m {
		t.Errorf("the first screen (%d) came after the first model request (%d): %v", s, m, kinds)
	}
	if s, f := first("stop:requested"), first("final"); s >= f || f == len(kinds) {
		t.Errorf("stop %d, final %d in %v", s, f, kinds)
	}
}

package verifycmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/browsertest"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
)

// TestVerifyRunConsoleStop drives verify-run --console from Chromium: the
// page's stop button cancels the run as Ctrl-C does (exit 130, the
// summary and report.json marked interrupted, the report still written),
// and the page then shows the end with a link to report.html.
func TestVerifyRunConsoleStop(t *testing.T) {
	t.Parallel()
	browser := browsertest.Start(t)
	urls := make(chan string, 1)
	r := &rig{cmdtest.NewRig(t, func(e cmdutil.Env) []*cli.Command {
		return commands(e, verifyRunHooks{consoleStarted: func(u string) { urls <- u }})
	}, sim.Options{TimeScale: verifyTimeScale})}
	// A slow planner: the explore step is still deciding when the stop is
	// clicked.
	r.vision(fakemodel.Options{Coords: fakemodel.CoordsRelative, PlanDelay: time.Second})
	art := filepath.Join(t.TempDir(), "run")
	done := make(chan cmdtest.Result, 1)
	go func() {
		done <- r.Run("verify-run", "--plan", cmdtest.FixturePlan(t, "counter-outcome-matrix"), "--artifacts", art,
			"--decision-provider", "vision", "--no-calibration-cache", "--console")
	}()
	var consoleURL string
	select {
	case consoleURL = <-urls:
	case res := <-done:
		t.Fatalf("the run ended before its console started: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	p := browsertest.Open(t, browser, consoleURL, 1280, 900)
	ctx, cancel := context.WithTimeout(p.Ctx, 120*time.Second)
	defer cancel()
	browsertest.ConsoleStop(ctx, t)
	var res cmdtest.Result
	select {
	case res = <-done:
	case <-ctx.Done():
		t.Fatal("the run did not end after the stop")
	}
	if res.Code != outcome.ExitFor(fault.Interrupted) {
		t.Fatalf("exit %d, want %d\n%s\n%s", res.Code, outcome.ExitFor(fault.Interrupted), res.Stdout, res.Stderr)
	}
	schematest.Validate(t, "verify-run", res.Stdout)
	var m struct {
		Interrupted bool   `json:"interrupted"`
		Report      string `json:"report"`
		HTMLReport  string `json:"htmlReport"`
		Console     string `json:"console"`
	}
	if err := json.Unmarshal(res.Stdout, &m); err != nil {
		t.Fatal(err)
	}
	if !m.Interrupted || m.Console != consoleURL || m.HTMLReport != filepath.Join(art, "report.html") {
		t.Fatalf("%s", res.Stdout)
	}
	if rep := cmdtest.ReadVerifyReport(t, m.Report); !rep.Interrupted {
		t.Error("report.json is not marked interrupted")
	}
	if _, err := os.Stat(m.HTMLReport); err != nil {
		t.Fatal(err)
	}
	browsertest.ConsoleFinal(ctx, t, p, consoleURL, "interrupted (exit code 130)", m.HTMLReport)
	browsertest.Screenshot(t, p, "verify-console-stopped")
}

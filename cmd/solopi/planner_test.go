package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/plannercmd"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/schemas"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
)

const plannerTestKey = "sk-planner-SECRET-0a1b2c3d4e5f"

// plannerApp runs the planner commands in process with a device handed in
// by the test, through the real command list.
type plannerApp struct {
	open  func(ctx context.Context) (device.Transport, error)
	env   map[string]string
	stdin *os.File
}

func (p plannerApp) run(t *testing.T, args ...string) (stdout, stderr []byte, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	// A planner command that must not touch a device fails the test if it
	// tries: without a transport the CLI would go looking for an adb server.
	e := cmdutil.Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return p.env[k] }, Stdin: p.stdin,
		Transport: func(ctx context.Context) (device.Transport, error) {
			if p.open == nil {
				t.Fatal("the command opened a device although it must not")
			}
			return p.open(ctx)
		}}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	exit := run(ctx, append([]string{"solopi"}, args...), e)
	return out.Bytes(), errb.Bytes(), exit
}

func validatePlannerSchema(t *testing.T, name string, b []byte) {
	t.Helper()
	if err := schemas.NewSet().ValidateBytes(name, b); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
}

func plannerStdin(t *testing.T, s string) *os.File {
	t.Helper()
	p := filepath.Join(t.TempDir(), "stdin")
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestPlannerParseCommand(t *testing.T) {
	out, _, code := plannerApp{stdin: plannerStdin(t, "<think>tap +1</think><answer>do(action=\"Tap\", element=[362,825])</answer>")}.
		run(t, "planner-parse", "--coordinate-space", "image_pixels", "--image-size", "590x1280", "--display-size", "1216x2640")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	validatePlannerSchema(t, "planner-parse", out)
	var r plannercmd.ParseResult
	json.Unmarshal(out, &r)
	if r.Fields["element"].Device != [2]int{747, 1702} || r.Reasoning != "tap +1" {
		t.Fatalf("%s", out)
	}
	out, _, code = plannerApp{stdin: plannerStdin(t, "```\ndo(action=\"Back\")\n```")}.run(t, "planner-parse")
	if code != 2 {
		t.Fatalf("exit %d: %s", code, out)
	}
	schemas.Validate(t, "planner-parse", out)
	if !strings.Contains(string(out), `"errorCode":"markdown_wrapped"`) || !strings.Contains(string(out), `"commandDispatched":false`) {
		t.Fatalf("%s", out)
	}
	// A pixel space without its size is a usage error.
	_, _, code = plannerApp{stdin: plannerStdin(t, "do(action=\"Back\")")}.run(t, "planner-parse", "--coordinate-space", "image_pixels")
	if code != 3 {
		t.Fatalf("exit %d", code)
	}
}

func startFakeModel(t *testing.T, o fakemodel.Options) *fakemodel.Server {
	t.Helper()
	o.APIKey = plannerTestKey
	srv, err := fakemodel.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func fakeModelEnv(srv *fakemodel.Server) map[string]string {
	return map[string]string{chat.EnvModelBaseURL: srv.URL, chat.EnvModel: "fake-vision", chat.EnvModelAPIKey: plannerTestKey}
}

func TestPlannerCalibrateCommand(t *testing.T) {
	cache := t.TempDir()
	srv := startFakeModel(t, fakemodel.Options{Coords: fakemodel.CoordsImagePixels})
	out, errOut, code := plannerApp{env: fakeModelEnv(srv)}.run(t, "planner-calibrate", "--display-size", "1216x2640", "--calibration-cache", cache)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	validatePlannerSchema(t, "planner-calibrate", out)
	var r plannercmd.CalibrateResult
	json.Unmarshal(out, &r)
	if r.Profile.Space != coord.SpaceImage || r.Image != [2]int{590, 1280} || r.Metrics.ByPurpose["calibration"] < 6 {
		t.Fatalf("%s", out)
	}
	if _, err := os.Stat(r.CacheFile); err != nil {
		t.Fatalf("cache file: %v", err)
	}
	// Inconsistent family: fail closed, exit 4, candidates reported.
	bad := startFakeModel(t, fakemodel.Options{Coords: fakemodel.CoordsInconsistent})
	out, _, code = plannerApp{env: fakeModelEnv(bad)}.run(t, "planner-calibrate", "--no-calibration-cache")
	if code != 4 || !strings.Contains(string(out), `"errorCode":"coordinate_calibration_failed"`) || !strings.Contains(string(out), `"candidates"`) {
		t.Fatalf("exit %d: %s", code, out)
	}
	schemas.Validate(t, "planner-calibrate", out)
	for _, b := range [][]byte{out} {
		if bytes.Contains(b, []byte(plannerTestKey)) {
			t.Fatal("output contains the API key")
		}
	}
	// No endpoint: usage error with what to do.
	out, _, code = plannerApp{env: map[string]string{}}.run(t, "planner-calibrate", "--no-calibration-cache")
	if code != 3 || !strings.Contains(string(out), "model_config_invalid") {
		t.Fatalf("exit %d: %s", code, out)
	}
}

func TestAgentRunUsageErrors(t *testing.T) {
	srv := startFakeModel(t, fakemodel.Options{Coords: fakemodel.CoordsRelative})
	for _, args := range [][]string{
		{"agent-run"},
		{"agent-run", "--task", "x", "--device-mode", "bluetooth"},
		{"agent-run", "--task", "x", "--coordinate-space", "pixels"},
		{"agent-run", "--task", "x", "--max-steps", "0"},
		{"agent-run", "--task", "x", "--interactive", "sometimes"},
	} {
		out, _, code := plannerApp{env: fakeModelEnv(srv)}.run(t, args...)
		if code != 3 {
			t.Errorf("%v: exit %d %s", args, code, out)
		}
		schemas.Validate(t, "agent-run", out)
	}
}

// newSimCounter starts a simulated device showing the counter app.
func newSimCounter(t *testing.T) *sim.Device {
	t.Helper()
	d := sim.New(sim.Options{Serial: "sim-planner", TimeScale: 5})
	t.Cleanup(func() { d.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.WaitReady(ctx); err != nil {
		t.Fatalf("simulator not ready: %v", err)
	}
	if _, stderr, code, err := d.Shell(ctx, "am start -W -n com.example.counter/.MainActivity"); err != nil || code != 0 {
		t.Fatalf("launch the counter: %v %d %s", err, code, stderr)
	}
	return d
}

// counterOnScreen reads the counter from a fresh screenshot with the fake
// model's own vision (the test needs no access to the simulator's state).
func counterOnScreen(t *testing.T, d *sim.Device) string {
	t.Helper()
	b, err := d.Exec(context.Background(), "screencap -p")
	if err != nil {
		t.Fatal(err)
	}
	s, err := agentloop.NewScreen(b, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range fakemodel.FindControls(s.Image, "text", []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}) {
		if c.Label != "" {
			return c.Label
		}
	}
	return ""
}

// TestAgentRunOnSimulator runs the whole loop through both device modes on
// the real simulator: the counter app, the fake model reading pixels.
func TestAgentRunOnSimulator(t *testing.T) {
	for _, mode := range []string{agentloop.ModeADB, agentloop.ModeSoloPi} {
		t.Run(mode, func(t *testing.T) {
			d := newSimCounter(t)
			srv := startFakeModel(t, fakemodel.Options{Coords: fakemodel.CoordsImagePixels})
			dir := t.TempDir()
			traj := filepath.Join(dir, "trajectory.json")
			cache := filepath.Join(dir, "cache")
			app := plannerApp{env: fakeModelEnv(srv), open: func(ctx context.Context) (device.Transport, error) { return d, nil }}
			out, errOut, code := app.run(t, "--startup-timeout", "30", "agent-run", "--task", "increase the counter to 4", "--device-mode", mode,
				"--trajectory", traj, "--calibration-cache", cache, "--max-steps", "12", "--max-duration", "120", "--settle", "0.2")
			if code != 0 {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
			}
			validatePlannerSchema(t, "agent-run", out)
			var r plannercmd.AgentRunResult
			if err := json.Unmarshal(out, &r); err != nil {
				t.Fatal(err)
			}
			if !r.Success || r.Outcome != agentloop.OutcomeCompleted || r.Profile.Space != coord.SpaceImage || !r.Cleanup.Success {
				t.Fatalf("%s", out)
			}
			// Four identical clicks: more than the device's default
			// repeated-action limit, which agent-run raises.
			if got := counterOnScreen(t, d); got != "4" {
				t.Fatalf("the simulator's counter shows %q", got)
			}
			tb, err := os.ReadFile(traj)
			if err != nil {
				t.Fatal(err)
			}
			validatePlannerSchema(t, "trajectory", tb)
			// The report and the screenshots it shows are beside the
			// trajectory.
			if r.Report != filepath.Join(dir, "report.html") || r.ReportError != "" {
				t.Fatalf("report %q (%s)", r.Report, r.ReportError)
			}
			if shots, _ := filepath.Glob(filepath.Join(dir, "screens", "*.png")); len(shots) < 2 {
				t.Fatalf("%d screenshots kept", len(shots))
			}
			noKeyIn(t, plannerTestKey, [][]byte{out, errOut, tb}, dir)
			// A second run refuses to overwrite the trajectory silently.
			out, _, code = app.run(t, "agent-run", "--task", "increase the counter to 3", "--device-mode", mode, "--trajectory", traj)
			if code != outcome.ExitUsage || !strings.Contains(string(out), "output_exists") {
				t.Fatalf("exit %d %s", code, out)
			}
		})
	}
}

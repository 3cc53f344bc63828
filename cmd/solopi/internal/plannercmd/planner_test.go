package plannercmd

// The planner commands in process: planner-parse and planner-check touch
// no device (the rig fails a test whose command selects one), agent-run
// drives a simulated phone showing the counter app with the fake model
// reading its pixels.

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
)

func TestPlannerParseCommand(t *testing.T) {
	t.Parallel()
	out, _, code := plannerApp{stdin: plannerStdin(t, "<think>tap +1</think><answer>do(action=\"Tap\", element=[362,825])</answer>")}.
		run(t, "planner-parse", "--coordinate-space", "image_pixels", "--image-size", "590x1280", "--display-size", "1216x2640")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	validatePlannerSchema(t, "planner-parse", out)
	var r parseResult
	json.Unmarshal(out, &r)
	if r.Fields["element"].Device != [2]int{747, 1702} || r.Reasoning != "tap +1" {
		t.Fatalf("%s", out)
	}
	out, _, code = plannerApp{stdin: plannerStdin(t, "```\ndo(action=\"Back\")\n```")}.run(t, "planner-parse")
	if code != 2 {
		t.Fatalf("exit %d: %s", code, out)
	}
	schematest.Validate(t, "planner-parse", out)
	if !strings.Contains(string(out), `"errorCode":"markdown_wrapped"`) || !strings.Contains(string(out), `"commandDispatched":false`) {
		t.Fatalf("%s", out)
	}
	// A pixel space without its size is a usage error.
	_, _, code = plannerApp{stdin: plannerStdin(t, "do(action=\"Back\")")}.run(t, "planner-parse", "--coordinate-space", "image_pixels")
	if code != 3 {
		t.Fatalf("exit %d", code)
	}
}

func fakeModelEnv(srv *fakemodel.Server) map[string]string {
	return map[string]string{chat.EnvModelBaseURL: srv.URL, chat.EnvModel: "fake-vision", chat.EnvModelAPIKey: plannerTestKey}
}

func TestPlannerCalibrateCommand(t *testing.T) {
	t.Parallel()
	cache := t.TempDir()
	srv := startFakeModel(t, fakemodel.Options{Coords: fakemodel.CoordsImagePixels})
	out, errOut, code := plannerApp{env: fakeModelEnv(srv)}.run(t, "planner-calibrate", "--display-size", "1216x2640", "--calibration-cache", cache)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	validatePlannerSchema(t, "planner-calibrate", out)
	var r calibrateResult
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
	schematest.Validate(t, "planner-calibrate", out)
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

// A missing --task or a --device-mode outside its choices is the parser's
// (text on stderr, nothing on stdout); the values the command checks are
// its JSON usage error. All exit 3 before the device.
func TestAgentRunUsageErrors(t *testing.T) {
	t.Parallel()
	srv := startFakeModel(t, fakemodel.Options{Coords: fakemodel.CoordsRelative})
	for _, c := range []struct{ args []string }{{[]string{"agent-run"}}, {[]string{"agent-run", "--task", "x", "--device-mode", "bluetooth"}}} {
		out, errOut, code := plannerApp{env: fakeModelEnv(srv)}.run(t, c.args...)
		if code != 3 || len(out) != 0 || len(errOut) == 0 {
			t.Errorf("%v: exit %d\nstdout %q\nstderr %q", c.args, code, out, errOut)
		}
	}
	for _, args := range [][]string{
		{"agent-run", "--task", "  "},
		{"agent-run", "--task", "x", "--coordinate-space", "pixels"},
		{"agent-run", "--task", "x", "--max-steps", "0"},
		{"agent-run", "--task", "x", "--interactive", "sometimes"},
	} {
		out, _, code := plannerApp{env: fakeModelEnv(srv)}.run(t, args...)
		if code != 3 {
			t.Errorf("%v: exit %d %s", args, code, out)
		}
		schematest.Validate(t, "agent-run", out)
	}
}

// TestAgentRunOnSimulator runs the whole loop through both device modes on
// the real simulator: the counter app, the fake model reading pixels.
func TestAgentRunOnSimulator(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{agentloop.ModeADB, agentloop.ModeSoloPi} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			d := cmdtest.CounterPhone(t, sim.Options{TimeScale: 10})
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
			var r agentRunResult
			if err := json.Unmarshal(out, &r); err != nil {
				t.Fatal(err)
			}
			if !r.Success || r.Outcome != agentloop.OutcomeCompleted || r.Profile.Space != coord.SpaceImage || !r.Cleanup.Success {
				t.Fatalf("%s", out)
			}
			// Four identical clicks: more than the device's default
			// repeated-action limit, which agent-run raises.
			if got := cmdtest.CounterOnScreen(t, d); got != "4" {
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
			cmdtest.NoSecretIn(t, plannerTestKey, [][]byte{out, errOut, tb}, dir)
			// A second run refuses to overwrite the trajectory silently.
			out, _, code = app.run(t, "agent-run", "--task", "increase the counter to 3", "--device-mode", mode, "--trajectory", traj)
			if code != outcome.ExitUsage || !strings.Contains(string(out), "output_exists") {
				t.Fatalf("exit %d %s", code, out)
			}
		})
	}
}
func TestPlannerCheckPasses(t *testing.T) {
	t.Parallel()
	srv := startFakeModel(t, fakemodel.Options{Coords: fakemodel.CoordsImagePixels})
	cache := t.TempDir()
	app := plannerApp{env: fakeModelEnv(srv)}
	out, errOut, code := app.run(t, "planner-check", "--calibration-cache", cache)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	validatePlannerSchema(t, "planner-check", out)
	var r checkResult
	decode := func(out []byte) {
		r = checkResult{}
		json.Unmarshal(out, &r)
	}
	decode(out)
	if r.Profile.Source != agentloop.SourceNegotiated || r.Profile.Space != coord.SpaceImage || r.DeviceActions != 0 ||
		r.Model.Image == nil || r.Model.Image.Format != chat.ImageJPEG || r.Endpoint.Source != chat.ParamsDefault {
		t.Fatalf("%s", out)
	}
	if _, err := os.Stat(r.CacheFile); err != nil {
		t.Fatalf("cache file: %v", err)
	}
	// Read from the cache the second time.
	out, _, code = app.run(t, "planner-check", "--calibration-cache", cache)
	decode(out)
	if code != 0 || r.Profile.Source != agentloop.SourceCache {
		t.Fatalf("exit %d: %s", code, out)
	}
	// SOLOPI_MODEL_COORDINATE_SPACE overrides the cache, and the flag
	// overrides the variable.
	envSpace := fakeModelEnv(srv)
	envSpace[chat.EnvCoordinateSpace] = "relative_0_999"
	out, _, code = plannerApp{env: envSpace}.run(t, "planner-check", "--calibration-cache", cache)
	decode(out)
	if code != 0 || r.Profile.Source != agentloop.SourceConfigured || r.Profile.Space != coord.SpaceRelative || r.CacheFile != "" {
		t.Fatalf("exit %d: %s", code, out)
	}
	out, _, code = plannerApp{env: envSpace}.run(t, "planner-check", "--calibration-cache", cache, "--coordinate-space", "display_pixels")
	decode(out)
	if code != 0 || r.Profile.Space != coord.SpaceDisplay {
		t.Fatalf("exit %d: %s", code, out)
	}
	envSpace[chat.EnvCoordinateSpace] = "pixels"
	if out, _, code = (plannerApp{env: envSpace}).run(t, "planner-check", "--calibration-cache", cache); code != 3 {
		t.Fatalf("a bad %s: exit %d %s", chat.EnvCoordinateSpace, code, out)
	}
	cmdtest.NoSecretIn(t, plannerTestKey, [][]byte{out}, cache)
}

// TestPlannerCheckFailures: each failure has its stable code and exit,
// says which check failed and what to do, and never shows the key.
func TestPlannerCheckFailures(t *testing.T) {
	t.Parallel()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	textOnly := startFakeModel(t, fakemodel.Options{Provider: fakemodel.ProviderTextOnly})
	other, err := fakemodel.Start(fakemodel.Options{APIKey: "sk-another-key-entirely"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	for _, tc := range []struct {
		name   string
		env    map[string]string
		code   int
		error  string
		failed string
	}{
		{"wrong key", fakeModelEnv(other), 4, "model_auth_failed", agentloop.CheckAuth},
		{"text-only", fakeModelEnv(textOnly), 2, "model_rejects_images", agentloop.CheckImages},
		{"unreachable", map[string]string{chat.EnvModelBaseURL: closed, chat.EnvModel: "m", chat.EnvModelAPIKey: plannerTestKey}, 4, "model_unreachable", agentloop.CheckReachable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cache := t.TempDir()
			out, errOut, code := plannerApp{env: tc.env}.run(t, "planner-check", "--calibration-cache", cache, "--model-retries", "0")
			if code != tc.code || !strings.Contains(string(out), `"errorCode":"`+tc.error+`"`) {
				t.Fatalf("exit %d: %s", code, out)
			}
			validatePlannerSchema(t, "planner-check", out)
			schematest.Validate(t, "planner-check", out)
			if st := checkStatuses(t, out); st[tc.failed] != agentloop.CheckFailed {
				t.Fatalf("checks %v", st)
			}
			// One spelling: the failed check's code is errorCode, as the
			// object's own.
			if strings.Contains(string(out), `"error_code"`) || strings.Count(string(out), `"errorCode":"`) < 2 {
				t.Errorf("the failed check does not carry errorCode: %s", out)
			}
			cmdtest.NoSecretIn(t, plannerTestKey, [][]byte{out, errOut}, cache)
		})
	}
}

// TestAgentRunPreflightFailsBeforeTheDevice: a wrong key or a text-only
// model ends agent-run before any device is opened.
func TestAgentRunPreflightFailsBeforeTheDevice(t *testing.T) {
	t.Parallel()
	other, err := fakemodel.Start(fakemodel.Options{APIKey: "sk-another-key-entirely"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	textOnly := startFakeModel(t, fakemodel.Options{Provider: fakemodel.ProviderTextOnly})
	for _, tc := range []struct {
		env   map[string]string
		code  int
		error string
	}{{fakeModelEnv(other), 4, "model_auth_failed"}, {fakeModelEnv(textOnly), 2, "model_rejects_images"}} {
		for _, mode := range []string{agentloop.ModeADB, agentloop.ModeSoloPi} {
			traj := filepath.Join(t.TempDir(), "t.json")
			// plannerApp without a device fails the test if one is opened.
			out, errOut, code := plannerApp{env: tc.env}.run(t, "agent-run", "--task", "increase the counter to 3", "--device-mode", mode,
				"--model-retries", "0", "--no-calibration-cache", "--trajectory", traj)
			if code != tc.code || !strings.Contains(string(out), `"errorCode":"`+tc.error+`"`) {
				t.Fatalf("%s %s: exit %d: %s", tc.error, mode, code, out)
			}
			schematest.Validate(t, "agent-run", out)
			validatePlannerSchema(t, "planner-check", out)
			cmdtest.NoSecretIn(t, plannerTestKey, [][]byte{out, errOut})
		}
	}
}

// TestAgentRunNeedsTheADBKeyboard: in adb mode a phone without the ADB
// Keyboard fails the preflight (exit 2, how to install it) before anything
// is sent to it.
func TestAgentRunNeedsTheADBKeyboard(t *testing.T) {
	t.Parallel()
	d := cmdtest.CounterPhone(t, sim.Options{TimeScale: 10})
	if err := d.Phone.UninstallApp("com.android.adbkeyboard"); err != nil {
		t.Fatal(err)
	}
	srv := startFakeModel(t, fakemodel.Options{Coords: fakemodel.CoordsImagePixels})
	app := plannerApp{env: fakeModelEnv(srv), open: func(ctx context.Context) (device.Transport, error) { return d, nil }}
	out, _, code := app.run(t, "agent-run", "--task", "increase the counter to 3", "--device-mode", "adb", "--no-calibration-cache")
	if code != 2 || !strings.Contains(string(out), `"errorCode":"adb_keyboard_missing"`) || !strings.Contains(string(out), "adb install") {
		t.Fatalf("exit %d: %s", code, out)
	}
	validatePlannerSchema(t, "planner-check", out)
	if st := checkStatuses(t, out); st[agentloop.CheckADBKeyboard] != agentloop.CheckFailed || st[agentloop.CheckCoordinates] != agentloop.CheckPassed {
		t.Fatalf("checks %v", st)
	}
	for _, r := range srv.Requests() {
		if r.Kind == "plan" {
			t.Fatal("the planner was asked although the preflight failed")
		}
	}
	if got := cmdtest.CounterOnScreen(t, d); got != "0" {
		t.Fatalf("the counter shows %q: something reached the phone", got)
	}
}

// --model-api-key-file and --reasoning-file are user input files: a
// directory, or more than a key or an answer can be, is refused (exit 3)
// before any model or device is reached.
func TestPlannerInputFilesRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := cmdtest.WriteFile(t, "big", make([]byte, 2<<20))
	for _, tc := range []struct {
		args []string
		code string
	}{
		{[]string{"planner-check", "--model-api-key-file", dir}, fault.CodeModelConfigInvalid},
		{[]string{"planner-check", "--model-api-key-file", big}, fault.CodeModelConfigInvalid},
		{[]string{"planner-parse", "--reasoning-file", dir}, "invalid_option"},
		{[]string{"planner-parse", "--reasoning-file", big}, "invalid_option"},
	} {
		out, _, code := plannerApp{stdin: plannerStdin(t, "click(point=(1,2))")}.run(t, tc.args...)
		if code != 3 || !strings.Contains(string(out), `"errorCode":"`+tc.code+`"`) || !strings.Contains(string(out), tc.args[1]) {
			t.Errorf("%v: exit %d %s", tc.args, code, out)
		}
		validatePlannerSchema(t, "error", out)
	}
}

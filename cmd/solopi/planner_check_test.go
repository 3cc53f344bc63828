package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/plannercmd"
	"github.com/solopi-dev/solopi/schemas"
	"github.com/solopi-dev/solopi/solopi/device"
)

// noKeyIn fails the test when any blob, or any file under the dirs,
// contains the API key.
func noKeyIn(t *testing.T, key string, blobs [][]byte, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		filepath.WalkDir(d, func(p string, de os.DirEntry, err error) error {
			if err == nil && !de.IsDir() {
				b, _ := os.ReadFile(p)
				blobs = append(blobs, b)
			}
			return nil
		})
	}
	for _, b := range blobs {
		if bytes.Contains(b, []byte(key)) {
			t.Fatalf("the API key appears in an output or a file: %.300s", b)
		}
	}
}

func checkStatuses(t *testing.T, out []byte) map[string]string {
	t.Helper()
	var r struct {
		Checks []agentloop.PreflightCheck `json:"checks"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	m := map[string]string{}
	for _, c := range r.Checks {
		m[c.Name] = c.Status
	}
	return m
}

func TestPlannerCheckPasses(t *testing.T) {
	srv := startFakeModel(t, fakemodel.Options{Coords: fakemodel.CoordsImagePixels})
	cache := t.TempDir()
	app := plannerApp{env: fakeModelEnv(srv)}
	out, errOut, code := app.run(t, "planner-check", "--calibration-cache", cache)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	validatePlannerSchema(t, "planner-check", out)
	var r plannercmd.CheckResult
	decode := func(out []byte) {
		r = plannercmd.CheckResult{}
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
	noKeyIn(t, plannerTestKey, [][]byte{out}, cache)
}

// TestPlannerCheckFailures: each failure has its stable code and exit,
// says which check failed and what to do, and never shows the key.
func TestPlannerCheckFailures(t *testing.T) {
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
			cache := t.TempDir()
			out, errOut, code := plannerApp{env: tc.env}.run(t, "planner-check", "--calibration-cache", cache, "--model-retries", "0")
			if code != tc.code || !strings.Contains(string(out), `"errorCode":"`+tc.error+`"`) {
				t.Fatalf("exit %d: %s", code, out)
			}
			validatePlannerSchema(t, "planner-check", out)
			schemas.Validate(t, "planner-check", out)
			if st := checkStatuses(t, out); st[tc.failed] != agentloop.CheckFailed {
				t.Fatalf("checks %v", st)
			}
			noKeyIn(t, plannerTestKey, [][]byte{out, errOut}, cache)
		})
	}
}

// TestAgentRunPreflightFailsBeforeTheDevice: a wrong key or a text-only
// model ends agent-run before any device is opened.
func TestAgentRunPreflightFailsBeforeTheDevice(t *testing.T) {
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
			schemas.Validate(t, "agent-run", out)
			validatePlannerSchema(t, "planner-check", out)
			noKeyIn(t, plannerTestKey, [][]byte{out, errOut})
		}
	}
}

// TestAgentRunNeedsTheADBKeyboard: in adb mode a phone without the ADB
// Keyboard fails the preflight (exit 2, how to install it) before anything
// is sent to it.
func TestAgentRunNeedsTheADBKeyboard(t *testing.T) {
	d := newSimCounter(t)
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
	if got := counterOnScreen(t, d); got != "0" {
		t.Fatalf("the counter shows %q: something reached the phone", got)
	}
}

// cancelOnWrite cancels a context once something was written: `sim serve`
// prints its one object, then serves until interrupted.
type cancelOnWrite struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	cancel context.CancelFunc
}

func (w *cancelOnWrite) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.cancel()
	return w.buf.Write(p)
}

// TestSimServeFakeModelModes: the bare --fake-model keeps meaning the
// default mode, --fake-model=MODE picks a provider, and the printed env
// is what that mode needs.
func TestSimServeFakeModelModes(t *testing.T) {
	for _, tc := range []struct{ arg, provider, env string }{
		{"--fake-model", fakemodel.ProviderOpenAI, ""},
		{"--fake-model=stream-only", fakemodel.ProviderStreamOnly, " SOLOPI_MODEL_STREAM=1"},
		{"--fake-model=azure", fakemodel.ProviderAzure, " SOLOPI_MODEL_API_STYLE=azure SOLOPI_MODEL_API_VERSION=" + fakemodel.AzureAPIVersion},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		w := &cancelOnWrite{cancel: cancel}
		code := run(ctx, []string{"solopi", "sim", "serve", tc.arg, "--no-adbd"}, cmdutil.Env{Stdout: w, Stderr: &bytes.Buffer{}, Getenv: func(string) string { return "" }})
		cancel()
		if code != 0 {
			t.Fatalf("%s: exit %d %s", tc.arg, code, w.buf.String())
		}
		schemas.Validate(t, "sim-serve", w.buf.Bytes())
		var info simServeInfo
		json.Unmarshal(w.buf.Bytes(), &info)
		if fm := info.FakeModel; fm == nil || fm.Provider != tc.provider || fm.Env != chat.EnvModelBaseURL+"="+fm.BaseURL+tc.env {
			t.Fatalf("%s: %s", tc.arg, w.buf.String())
		}
	}
	var errb bytes.Buffer
	if code := run(context.Background(), []string{"solopi", "sim", "serve", "--fake-model=bedrock"}, cmdutil.Env{Stdout: &bytes.Buffer{}, Stderr: &errb, Getenv: func(string) string { return "" }}); code != 3 ||
		!strings.Contains(errb.String(), "stream-only") {
		t.Fatalf("an unknown mode: exit %d %s", code, errb.String())
	}
}

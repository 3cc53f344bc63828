package plannercmd

import (
	"context"
	"encoding/json"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
)

// TestAgentRunEveryProvider runs agent-run from the launcher to
// "increase the counter to 3" against the fake model in every provider
// style, each on its own simulated phone and in parallel. The styles take
// the two device modes in turn, three each: a style is the chat client's
// concern and a mode the device's, and neither reads the other, so the
// pairs add no path. Each style is configured only through its
// environment variables (the API key through the mode's way of giving
// it); the key is in none of the outputs and files.
func TestAgentRunEveryProvider(t *testing.T) {
	t.Parallel()
	providers := []string{fakemodel.ProviderOpenAI, fakemodel.ProviderStreamOnly, fakemodel.ProviderParts, fakemodel.ProviderAzure,
		fakemodel.ProviderNoTemperature, fakemodel.ProviderNoMaxTokens}
	modes := []string{agentloop.ModeADB, agentloop.ModeSoloPi}
	for i, p := range providers {
		mode := modes[i%len(modes)]
		t.Run(p+"/"+mode, func(t *testing.T) {
			t.Parallel()
			dev := cmdtest.Device(t, sim.Options{TimeScale: 10})
			fm, err := fakemodel.Start(fakemodel.Options{Provider: p, APIKey: plannerTestKey})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { fm.Close() })
			dir := t.TempDir()
			cache, traj := filepath.Join(dir, "cache"), filepath.Join(dir, "trajectory.json")
			c := cmdtest.New(t, Commands, dev)
			c.Env[chat.EnvModel], c.Env["SOLOPI_PLANNER_CACHE_DIR"] = "fake-vision", cache
			// What sim serve --fake-model=MODE says to export for the mode.
			c.Env[chat.EnvModelBaseURL] = fm.URL
			switch p {
			case fakemodel.ProviderStreamOnly:
				c.Env[chat.EnvModelStream] = "1"
			case fakemodel.ProviderAzure:
				c.Env[chat.EnvModelAPIStyle], c.Env[chat.EnvModelAPIVersion] = chat.APIStyleAzure, fakemodel.AzureAPIVersion
			}
			wantFormat := chat.ImageJPEG
			if p == fakemodel.ProviderParts {
				// PNG through its variable; every other run sends the
				// default JPEG.
				c.Env[chat.EnvModelImageFormat], wantFormat = "png", chat.ImagePNG
			}
			args := []string{"agent-run", "--task", "increase the counter to 3", "--device-mode", mode, "--trajectory", traj,
				"--max-steps", "20", "--max-duration", "240"}
			if mode == agentloop.ModeADB {
				c.Env[chat.EnvModelAPIKey] = plannerTestKey
			} else {
				keyFile := filepath.Join(t.TempDir(), "key") // outside dir, which is searched for the key
				if err := os.WriteFile(keyFile, []byte(plannerTestKey+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--model-api-key-file", keyFile)
			}
			r := c.Run(args...)
			if r.Code != 0 {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
			}
			schematest.Validate(t, "agent-run", r.Stdout)
			tb, err := os.ReadFile(traj)
			if err != nil {
				t.Fatal(err)
			}
			schematest.Validate(t, "trajectory", tb)
			if got := cmdtest.CounterOnScreen(t, dev); got != "3" {
				t.Fatalf("the counter shows %q", got)
			}
			var out struct {
				Preflight []agentloop.PreflightCheck `json:"preflight"`
				Metrics   agentloop.Metrics          `json:"metrics"`
				Model     chat.Info                  `json:"model"`
			}
			json.Unmarshal(r.Stdout, &out)
			if len(out.Preflight) < 5 || out.Metrics.ImageBytes == 0 || out.Model.Image.Format != wantFormat {
				t.Fatalf("preflight %+v metrics %+v model %+v", out.Preflight, out.Metrics, out.Model)
			}
			cmdtest.NoSecretIn(t, plannerTestKey, [][]byte{r.Stdout, r.Stderr, tb}, dir)

			// The provider saw what its style needs: the key on every
			// request, the image format chosen, streaming where it is
			// required, and each refused field refused exactly once.
			var refused []string
			for _, q := range fm.Requests() {
				if !q.Authorized {
					t.Fatalf("an unauthorized request: %+v", q)
				}
				if q.Refused != "" {
					refused = append(refused, q.Refused)
					continue
				}
				if q.Images > 0 && q.ImageFormat != wantFormat {
					t.Fatalf("image format %s, want %s", q.ImageFormat, wantFormat)
				}
				if p == fakemodel.ProviderStreamOnly && !q.Stream {
					t.Fatal("a request without stream:true reached the stream-only endpoint")
				}
			}
			want := map[string]string{fakemodel.ProviderNoTemperature: "temperature", fakemodel.ProviderNoMaxTokens: "max_tokens"}[p]
			if (want == "" && len(refused) > 0) || (want != "" && strings.Join(refused, ",") != want) {
				t.Fatalf("refused %v, want %q once", refused, want)
			}
		})
	}
}

// TestAgentRunConsoleStopsWithTheRun: in process, so that what outlives
// the command would show: the console announced on stderr is the one the
// JSON names, and when the command returns its port is closed and its
// goroutines are gone. Not parallel: no other test of this package may
// run a console meanwhile.
func TestAgentRunConsoleStopsWithTheRun(t *testing.T) {
	d := cmdtest.CounterPhone(t, sim.Options{TimeScale: 10})
	srv := startFakeModel(t, fakemodel.Options{Coords: fakemodel.CoordsRelative})
	app := plannerApp{env: fakeModelEnv(srv), open: func(ctx context.Context) (device.Transport, error) { return d, nil }}
	out, errOut, code := app.run(t, "agent-run", "--task", "increase the counter to 1", "--console", "--device-mode", "adb",
		"--calibration-cache", t.TempDir(), "--max-steps", "8", "--max-duration", "120")
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	validatePlannerSchema(t, "agent-run", out)
	var r agentRunResult
	json.Unmarshal(out, &r)
	var ann struct {
		Console consoleInfo `json:"console"`
	}
	if err := json.Unmarshal(errOut, &ann); err != nil || r.Console == nil || ann.Console.URL != r.Console.URL {
		t.Fatalf("stderr %q, console %+v", errOut, r.Console)
	}
	u, _ := url.Parse(r.Console.URL)
	if c, err := net.DialTimeout("tcp", u.Host, time.Second); err == nil {
		c.Close()
		t.Fatal("the console still listens after the command returned")
	}
	// The simulator, the fake model and the model client keep theirs;
	// none of the console's (server, listeners, streams) may remain.
	deadline := time.Now().Add(5 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "report/console") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("console goroutines outlive the command:\n%s", stacks)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

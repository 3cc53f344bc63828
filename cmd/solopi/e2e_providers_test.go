package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/schemas"
	"github.com/solopi-dev/solopi/sim"
)

const e2eProviderKey = "sk-e2e-provider-SECRET-9f8e7d6c"

// TestE2EAgentRunEveryProvider runs the built binary from the launcher to
// "increase the counter to 3" against the fake model in every provider
// style, in both device modes, each pair on its own simulated phone and
// in parallel. Each style is configured only through its environment
// variables; the key is in none of the outputs and files.
func TestE2EAgentRunEveryProvider(t *testing.T) {
	providers := []string{fakemodel.ProviderOpenAI, fakemodel.ProviderStreamOnly, fakemodel.ProviderParts, fakemodel.ProviderAzure,
		fakemodel.ProviderNoTemperature, fakemodel.ProviderNoMaxTokens}
	modes := []string{agentloop.ModeADB, agentloop.ModeSoloPi}
	farm, farmEnv := startFarm(t, sim.FarmOptions{NoAdbd: true, TimeScale: 5, Devices: len(providers) * len(modes)})
	devices := farm.Devices()
	for i, p := range providers {
		for j, mode := range modes {
			dev := devices[i*len(modes)+j]
			t.Run(p+"/"+mode, func(t *testing.T) {
				t.Parallel()
				fm, err := fakemodel.Start(fakemodel.Options{Provider: p, APIKey: e2eProviderKey})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { fm.Close() })
				dir := t.TempDir()
				cache, traj := filepath.Join(dir, "cache"), filepath.Join(dir, "trajectory.json")
				env := append(append([]string(nil), farmEnv...), "ANDROID_SERIAL="+dev.Serial(), chat.EnvModel+"=fake-vision",
					"SOLOPI_PLANNER_CACHE_DIR="+cache)
				env = append(env, strings.Fields(simFakeModelEnv(fm))...)
				wantFormat := chat.ImageJPEG
				if p == fakemodel.ProviderParts {
					// PNG through its variable; every other run sends the
					// default JPEG.
					env, wantFormat = append(env, chat.EnvModelImageFormat+"=png"), chat.ImagePNG
				}
				args := []string{"agent-run", "--task", "increase the counter to 3", "--device-mode", mode, "--trajectory", traj,
					"--max-steps", "20", "--max-duration", "240"}
				if mode == agentloop.ModeADB {
					env = append(env, chat.EnvModelAPIKey+"="+e2eProviderKey)
				} else {
					keyFile := filepath.Join(t.TempDir(), "key") // outside dir, which is searched for the key
					if err := os.WriteFile(keyFile, []byte(e2eProviderKey+"\n"), 0o600); err != nil {
						t.Fatal(err)
					}
					args = append(args, "--model-api-key-file", keyFile)
				}
				r := runBinary(t, env, args...)
				if r.code != 0 {
					t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
				}
				schemas.Validate(t, "agent-run", r.stdout)
				tb, err := os.ReadFile(traj)
				if err != nil {
					t.Fatal(err)
				}
				schemas.Validate(t, "trajectory", tb)
				if got := counterOnScreen(t, dev); got != "3" {
					t.Fatalf("the counter shows %q", got)
				}
				var out struct {
					Preflight []agentloop.PreflightCheck `json:"preflight"`
					Metrics   agentloop.Metrics          `json:"metrics"`
					Model     chat.Info                  `json:"model"`
				}
				json.Unmarshal(r.stdout, &out)
				if len(out.Preflight) < 5 || out.Metrics.ImageBytes == 0 || out.Model.Image.Format != wantFormat {
					t.Fatalf("preflight %+v metrics %+v model %+v", out.Preflight, out.Metrics, out.Model)
				}
				noKeyIn(t, e2eProviderKey, [][]byte{r.stdout, r.stderr, tb}, dir)

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
}

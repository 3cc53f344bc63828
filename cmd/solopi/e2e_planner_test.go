package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/schemas"
	"github.com/solopi-dev/solopi/sim"
)

// The pure-vision planner from the built binary, against the simulator and
// the fake model that reads the simulator's pixels: from the launcher in
// adb mode (it must open the app by its icon), then in SoloPi mode.
func TestE2EAgentRunBothDeviceModes(t *testing.T) {
	_, env := startFarm(t, sim.FarmOptions{NoAdbd: true, TimeScale: 5})
	fm, err := fakemodel.Start(fakemodel.Options{APIKey: "sk-test-e2e-secret-key"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fm.Close() })
	keyFile := filepath.Join(t.TempDir(), "key")
	os.WriteFile(keyFile, []byte("sk-test-e2e-secret-key\n"), 0o600)
	env = append(env, "SOLOPI_MODEL_BASE_URL="+fm.URL, "SOLOPI_MODEL=fake", "SOLOPI_PLANNER_CACHE_DIR="+t.TempDir())
	for _, tc := range []struct{ mode, task string }{
		{"adb", "increase the counter to 3"},
		{"solopi", "increase the counter to 5"},
	} {
		traj := filepath.Join(t.TempDir(), tc.mode+"-trajectory.json")
		r := runBinary(t, env, "agent-run", "--task", tc.task, "--device-mode", tc.mode,
			"--model-api-key-file", keyFile, "--trajectory", traj)
		if r.code != 0 {
			t.Fatalf("%s: exit %d %s", tc.mode, r.code, r.stdout)
		}
		schemas.Validate(t, "agent-run", r.stdout)
		b, err := os.ReadFile(traj)
		if err != nil {
			t.Fatal(err)
		}
		schemas.Validate(t, "trajectory", b)
		for _, out := range [][]byte{r.stdout, r.stderr, b} {
			if strings.Contains(string(out), "sk-test-e2e-secret-key") {
				t.Fatalf("%s: the API key leaked", tc.mode)
			}
		}
	}
}

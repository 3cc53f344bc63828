package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/internal/testwait"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
)

// agentStart starts a session with the built binary, keeping the owner
// token in a 0600 file instead of stdout; observationID is the session's
// first observation.
func agentStart(t *testing.T, env []string, extra ...string) (sessionID, tokenFile, observationID string) {
	t.Helper()
	tokenFile = filepath.Join(t.TempDir(), "owner-token")
	args := append([]string{"agent-session-start", "--owner-token-out", tokenFile}, extra...)
	r := runBinary(t, env, args...)
	if r.code != 0 {
		t.Fatalf("agent-session-start exit %d: %s", r.code, r.stdout)
	}
	schematest.Validate(t, "agent-session-start", r.stdout)
	token, err := os.ReadFile(tokenFile)
	if err != nil || len(token) < 16 {
		t.Fatalf("owner token file: %v", err)
	}
	if strings.Contains(string(r.stdout), strings.TrimSpace(string(token))) {
		t.Fatalf("the owner token was printed although --owner-token-out was given")
	}
	m := decodeObject(t, r)
	sess := m["session"].(map[string]any)
	return sess["sessionId"].(string), tokenFile, m["observation"].(map[string]any)["observationId"].(string)
}

// The client goes away mid-session (killed while waiting on an action):
// the device watchdog ends the session and releases the lease exactly once.
func TestE2EAgentClientGoneWatchdogReleasesLease(t *testing.T) {
	t.Parallel()
	// Scale 5: the 15 s idle timeout is 3 s of wall time, enough for the
	// first observation on a busy machine (the device may wait up to 5 s of
	// device time for a controllable root), short enough for the test.
	f, env := startFarm(t, sim.FarmOptions{NoAdbd: true, TimeScale: 5})
	dev := f.Devices()[0]
	if err := dev.Phone.LaunchApp("com.example.counter"); err != nil {
		t.Fatal(err)
	}
	sid, tok, obs := agentStart(t, env, "--idle-timeout-ms", "15000", "--max-duration-ms", "600000")
	if dev.App.LeaseHolder() == "" {
		t.Fatal("no lease held after start")
	}
	// A long wait action, then kill -9 the CLI while it polls the receipt.
	cmd := exec.Command(binPath, "agent-act", "--session-id", sid, "--owner-token-file", tok,
		"--step-id", "step-wait", "--observation-id", obs, "--action", "wait", "--duration-ms", "5000")
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once the act has reached the device and the CLI has put the
	// app under test back in front (the act then runs on its screen).
	acts := func() int { return cmdtest.LogcatCount(dev, "AdbSchemeActivity: scheme agent result") }
	before := acts()
	appInFront := func() bool { pkg, _ := dev.Phone.Foreground(); return pkg == "com.example.counter" }
	for deadline := time.Now().Add(15 * time.Second); acts() == before || !appInFront(); {
		if time.Now().After(deadline) {
			t.Fatal("the act never reached the device")
		}
		dev.Clock().Sleep(context.Background(), 100*time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	testwait.Until(t, 15*time.Second, "the device watchdog to release the lease", func() bool { return dev.App.LeaseHolder() == "" })
	r := runBinary(t, env, "agent-status", "--session-id", sid, "--owner-token-file", tok)
	schematest.Validate(t, "agent-status", r.stdout)
	if !strings.Contains(string(r.stdout), `"state":"expired"`) || !strings.Contains(string(r.stdout), `"terminalReason":"idle_timeout"`) {
		t.Errorf("status after the client vanished: %s", r.stdout)
	}
	r = runBinary(t, env, "agent-timeline", "--session-id", sid, "--owner-token-file", tok)
	schematest.Validate(t, "agent-timeline", r.stdout)
	out := string(r.stdout)
	if strings.Count(out, `"type":"lease_released"`) != 1 || strings.Count(out, `"type":"session_terminal"`) != 1 ||
		!strings.Contains(out, `"sequenceContiguous":true`) {
		t.Errorf("timeline: %s", out)
	}
}

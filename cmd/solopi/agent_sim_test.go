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

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/schemas"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
)

// The agent commands against the product's simulator: start (token to a
// 0600 file), act by selector on a fresh observation, timeline pulled,
// end; the token appears in no output and no written file but its own.
func TestAgentCLIAgainstSimulator(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dev := sim.New(sim.Options{Serial: "sim-agent-cli", TimeScale: 10})
	defer dev.Close()
	if err := dev.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if err := dev.Phone.LaunchApp("com.example.counter"); err != nil {
		t.Fatal(err)
	}
	var outputs [][]byte
	run := func(args ...string) (int, []byte) {
		var stdout, stderr bytes.Buffer
		e := cmdutil.Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" },
			Transport: func(context.Context) (device.Transport, error) { return dev, nil }}
		exit := run(ctx, append([]string{"solopi"}, args...), e)
		outputs = append(outputs, stdout.Bytes(), stderr.Bytes())
		return exit, stdout.Bytes()
	}
	dir := t.TempDir()
	tokFile := filepath.Join(dir, "tok")
	code, out := run("agent-session-start", "--owner-token-out", tokFile, "--poll-interval", "0.02",
		"--idle-timeout-ms", "300000", "--max-duration-ms", "1800000")
	if code != 0 {
		t.Fatalf("start %d %s", code, out)
	}
	schemas.Validate(t, "agent-session-start", out)
	sid := jsonField(t, out, "sessionId")
	id := []string{"--session-id", sid, "--owner-token-file", tokFile}
	for _, c := range []struct {
		schema string
		args   []string
	}{
		{"agent-act", []string{"agent-act", "--action", "click", "--selector-text", "+1", "--poll-interval", "0.02"}},
		{"agent-status", []string{"agent-status"}},
		{"agent-end", []string{"agent-end"}},
		{"agent-timeline", []string{"agent-timeline", "--output", filepath.Join(dir, "timeline.jsonl")}},
	} {
		code, out := run(append(c.args, id...)...)
		if code != 0 {
			t.Fatalf("%v: %d %s", c.args, code, out)
		}
		schemas.Validate(t, c.schema, out)
		if c.schema == "agent-timeline" && !strings.Contains(string(out), `"complete":true`) {
			t.Fatalf("timeline %s", out)
		}
	}
	raw, _ := os.ReadFile(tokFile)
	tok := bytes.TrimSpace(raw)
	for _, o := range outputs {
		if bytes.Contains(o, tok) {
			t.Fatalf("token in output %s", o)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "timeline.jsonl"))
	if len(b) == 0 || bytes.Contains(b, tok) {
		t.Fatal("pulled timeline empty or holds the token")
	}
}

func jsonField(t *testing.T, b []byte, k string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	s, _ := m[k].(string)
	return s
}

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

	"github.com/solopi-dev/solopi/cmd/solopi/internal/agentcmd"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/schemas"
	"github.com/solopi-dev/solopi/solopi/agent"
	"github.com/solopi-dev/solopi/solopi/agentfake"
	"github.com/solopi-dev/solopi/solopi/device"
)

// agentHarness runs agent commands in-process against a fake device and
// keeps every output so that tests can search all of them for the token.
type agentHarness struct {
	t       *testing.T
	fake    *agentfake.Device
	env     map[string]string
	outputs [][]byte // stdout and stderr of every run
}

func newAgentHarness(t *testing.T) *agentHarness {
	t.Helper()
	fake := agentfake.New()
	t.Cleanup(fake.Close)
	return &agentHarness{t: t, fake: fake, env: map[string]string{}}
}

// run executes one command line (without the program name) and returns its
// exit code and stdout. ctx lets a test interrupt the command.
func (h *agentHarness) runCtx(ctx context.Context, args ...string) (int, []byte) {
	h.t.Helper()
	var stdout, stderr bytes.Buffer
	e := cmdutil.Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return h.env[k] },
		Transport: func(context.Context) (device.Transport, error) { return h.fake, nil }}
	exit := run(ctx, append([]string{"solopi"}, args...), e)
	h.outputs = append(h.outputs, append([]byte(nil), stdout.Bytes()...), append([]byte(nil), stderr.Bytes()...))
	return exit, stdout.Bytes()
}

func (h *agentHarness) run(args ...string) (int, []byte) {
	h.t.Helper()
	return h.runCtx(context.Background(), args...)
}

// mustRun runs a command, checks its exit code and schema, and decodes it.
func (h *agentHarness) mustRun(wantExit int, schema string, args ...string) map[string]any {
	h.t.Helper()
	code, out := h.run(args...)
	if code != wantExit {
		h.t.Fatalf("%v: exit %d, want %d\n%s", args, code, wantExit, out)
	}
	schemas.Validate(h.t, schema, out)
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		h.t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return m
}

func obj(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		m, _ = m[p].(map[string]any)
	}
	return m
}

// The CLI flow end to end: start → observe (screenshot) → act by selector
// against the caller's observation → end → timeline (pulled), with the
// owner token passed by file and printed nowhere.
func TestAgentCLIFullFlowNeverPrintsToken(t *testing.T) {
	h := newAgentHarness(t)
	dir := t.TempDir()
	tokFile := filepath.Join(dir, "owner.token")
	start := h.mustRun(0, "agent-session-start", "agent-session-start", "--owner-token-out", tokFile, "--max-steps", "10", "--poll-interval", "0.02")
	if _, ok := start["ownerToken"]; ok {
		t.Fatal("token printed although --owner-token-out was given")
	}
	st, err := os.Stat(tokFile)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file %v %v", st, err)
	}
	raw, _ := os.ReadFile(tokFile)
	tok := strings.TrimSpace(string(raw))
	if len(tok) != 64 {
		t.Fatalf("token length %d", len(tok))
	}
	sid := start["sessionId"].(string)
	if start["ownerTokenSource"] != "generated" || start["ownerTokenFile"] != tokFile || obj(start, "budget")["maxSteps"] != 10.0 {
		t.Fatalf("start %v", start)
	}
	if h.fake.Focus() != agentfake.AppActivity {
		t.Fatalf("foreground not restored: %s", h.fake.Focus())
	}
	id := []string{"--session-id", sid, "--owner-token-file", tokFile}

	caps := h.mustRun(0, "agent-capabilities", "agent-capabilities")
	if caps["protocolVersion"] != "1.0" {
		t.Fatal(caps)
	}
	shot := filepath.Join(dir, "obs.png")
	ob := h.mustRun(0, "agent-observe", append([]string{"agent-observe", "--screenshot-output", shot}, id...)...)
	obsID := obj(ob, "observation")["observationId"].(string)
	if obj(ob, "screenshot")["sha256"] != obj(ob, "observation")["screenshotSha256"] {
		t.Fatalf("screenshot %v", ob["screenshot"])
	}
	// Refusing to overwrite happens before observing (which would make
	// the observation stale).
	before := len(h.fake.EventTypes())
	code, out := h.run(append([]string{"agent-observe", "--screenshot-output", shot}, id...)...)
	if code != 3 || !strings.Contains(string(out), `"errorCode":"output_exists"`) || len(h.fake.EventTypes()) != before {
		t.Fatalf("overwrite: exit %d %s", code, out)
	}

	act := h.mustRun(0, "agent-act", append([]string{"agent-act", "--action", "click", "--observation-id", obsID,
		"--resource-id", agentfake.AppPackage + ":id/login", "--step-id", "cli-step-1", "--poll-interval", "0.02"}, id...)...)
	if act["observationSource"] != "caller" || act["stepId"] != "cli-step-1" || obj(act, "receipt")["status"] != "succeeded" || act["replayed"] != false {
		t.Fatalf("act %v", act)
	}
	if h.fake.Screen() != "home" {
		t.Fatal("click did not reach the device")
	}
	// Same stepId again: the stored receipt, no second action.
	again := h.mustRun(0, "agent-act", append([]string{"agent-act", "--action", "click", "--observation-id", obsID,
		"--resource-id", agentfake.AppPackage + ":id/login", "--step-id", "cli-step-1"}, id...)...)
	if again["replayed"] != true || obj(again, "receipt")["acceptedAt"] != obj(act, "receipt")["acceptedAt"] {
		t.Fatalf("replay %v", again)
	}
	rc := h.mustRun(0, "agent-receipt", append([]string{"agent-receipt", "--step-id", "cli-step-1"}, id...)...)
	if obj(rc, "receipt", "settledObservation")["observationId"] != act["settledObservationId"] {
		t.Fatal("receipt")
	}
	// Without --observation-id a fresh observation is taken.
	act2 := h.mustRun(0, "agent-act", append([]string{"agent-act", "--action", "click", "--selector-text", "Sign out"}, id...)...)
	if act2["observationSource"] != "observe" || !strings.HasPrefix(act2["stepId"].(string), "step-") {
		t.Fatalf("act2 %v", act2)
	}

	h.mustRun(0, "agent-pause", append([]string{"agent-pause"}, id...)...)
	st2 := h.mustRun(0, "agent-status", append([]string{"agent-status"}, id...)...)
	if st2["state"] != "paused" {
		t.Fatal(st2)
	}
	h.mustRun(0, "agent-resume", append([]string{"agent-resume"}, id...)...)
	end := h.mustRun(0, "agent-end", append([]string{"agent-end"}, id...)...)
	if end["state"] != "ended" || end["changed"] != true {
		t.Fatal(end)
	}
	tlFile := filepath.Join(dir, "timeline.jsonl")
	tl := h.mustRun(0, "agent-timeline", append([]string{"agent-timeline", "--output", tlFile}, id...)...)
	if tl["sequenceContiguous"] != true || tl["firstSequence"] != 1.0 || tl["complete"] != true || tl["leaseReleasedEvents"] != 1.0 ||
		obj(tl, "file", "check")["complete"] != true {
		t.Fatalf("timeline %v", tl)
	}
	types := map[string]bool{}
	for _, ev := range tl["events"].([]any) {
		types[ev.(map[string]any)["type"].(string)] = true
	}
	for _, want := range []string{"session_started", "observation_created", "action_accepted", "action_settled", "session_terminal", "lease_released"} {
		if !types[want] {
			t.Errorf("timeline lacks %s", want)
		}
	}
	// Ending again finds the session ended: nothing is sent (exit 0, like
	// solopi-ai's send-then-poll); pausing it is refused (exit 2).
	mutations := len(h.fake.Mutations())
	again2 := h.mustRun(0, "agent-end", append([]string{"agent-end"}, id...)...)
	if again2["changed"] != false || len(h.fake.Mutations()) != mutations {
		t.Fatalf("second end: %v", again2)
	}
	code, out = h.run(append([]string{"agent-pause"}, id...)...)
	if code != 2 || !strings.Contains(string(out), `"errorCode":"terminal_session"`) {
		t.Fatalf("pause after end: %d %s", code, out)
	}
	schemas.Validate(t, "agent-pause", out)

	// The token is in no output and in no file written except its own.
	for i, o := range h.outputs {
		if bytes.Contains(o, []byte(tok)) {
			t.Fatalf("output %d contains the owner token: %s", i, o)
		}
	}
	for _, f := range []string{shot, tlFile} {
		b, _ := os.ReadFile(f)
		if bytes.Contains(b, []byte(tok)) || strings.Contains(f, tok) {
			t.Fatalf("%s contains the owner token", f)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), tok) {
			t.Fatalf("file name %s contains the token", e.Name())
		}
	}
}

// A generated token is printed exactly once, by start; every later
// command given the token (flag or environment) never shows it, not even
// in error objects.
func TestAgentCLITokenPrintedOnlyByStart(t *testing.T) {
	h := newAgentHarness(t)
	code, out := h.run("agent-session-start", "--poll-interval", "0.02")
	if code != 0 {
		t.Fatalf("start %d %s", code, out)
	}
	schemas.Validate(t, "agent-session-start", out)
	var start map[string]any
	_ = json.Unmarshal(out, &start)
	tok := start["ownerToken"].(string)
	if strings.Count(string(out), tok) != 1 {
		t.Fatal("token must appear exactly once in the start output")
	}
	sid := start["sessionId"].(string)
	h.outputs = nil

	viaFlag := []string{"--session-id", sid, "--owner-token", tok}
	h.env[agentcmd.EnvOwnerToken] = tok
	viaEnv := []string{"--session-id", sid}
	cmds := [][]string{
		{"agent-status"}, {"agent-observe"}, {"agent-timeline"}, {"agent-receipt", "--step-id", "missing"},
		{"agent-act", "--action", "click", "--selector-text", "Nothing like it"},
		{"agent-act", "--action", "click", "--class-name", "android.widget.Button"},
		{"agent-act", "--action", "back", "--observation-id", "observation-stale"},
		{"agent-pause"}, {"agent-resume"},
	}
	for _, ids := range [][]string{viaFlag, viaEnv} {
		for _, c := range cmds {
			h.run(append(c, ids...)...)
		}
	}
	// Another session id with the right token, and a wrong token.
	h.run("agent-status", "--session-id", "agent-session-nope", "--owner-token", tok)
	h.run("agent-cancel", "--session-id", sid, "--owner-token", tok)
	h.run("agent-session-start", "--owner-token", tok) // refused: the token's session is... cancelled now, so it starts
	for i, o := range h.outputs {
		if i == len(h.outputs)-2 {
			continue // the last start's stdout: it was given the token with --owner-token
		}
		if bytes.Contains(o, []byte(tok)) {
			t.Fatalf("output %d contains the owner token: %s", i, o)
		}
	}
}

func TestAgentCLIRejectionsMapToExit2(t *testing.T) {
	h := newAgentHarness(t)
	h.env[agentcmd.EnvOwnerToken] = "0123456789abcdef-test-token"
	start := h.mustRun(0, "agent-session-start", "agent-session-start", "--poll-interval", "0.02")
	if _, ok := start["ownerToken"]; ok || start["ownerTokenSource"] != "env" {
		t.Fatalf("env token printed or misreported: %v", start)
	}
	sid := start["sessionId"].(string)
	first := obj(start, "observation")["observationId"].(string)
	id := []string{"--session-id", sid}
	help := "--resource-id=" + agentfake.AppPackage + ":id/help"

	// stale: a newer observation exists
	h.mustRun(0, "agent-observe", append([]string{"agent-observe"}, id...)...)
	m := h.mustRun(2, "agent-act", append([]string{"agent-act", "--action", "click", "--observation-id", first, help}, id...)...)
	if m["errorCode"] != protocol.ErrStaleObservation || obj(m, "receipt")["status"] != "rejected" || m["stepId"] == nil {
		t.Fatalf("stale: %v", m)
	}
	// an unknown observation id cannot be resolved against
	m = h.mustRun(2, "agent-act", append([]string{"agent-act", "--action", "click", "--observation-id", "observation-unknown", help}, id...)...)
	if m["errorCode"] != agent.CodeObservationNotFound {
		t.Fatalf("unknown observation: %v", m)
	}
	// ambiguous and missing selectors name the candidates
	m = h.mustRun(2, "agent-act", append([]string{"agent-act", "--action", "click", "--selector-text", "Sign in"}, id...)...)
	if m["errorCode"] != agent.CodeSelectorAmbiguous || len(m["candidates"].([]any)) != 2 {
		t.Fatalf("ambiguous: %v", m)
	}
	c0 := m["candidates"].([]any)[0].(map[string]any)
	for _, k := range []string{"nodeId", "resourceId", "text", "bounds"} {
		if _, ok := c0[k]; !ok {
			t.Errorf("candidate lacks %s: %v", k, c0)
		}
	}
	m = h.mustRun(2, "agent-act", append([]string{"agent-act", "--action", "click", "--resource-id", "nope", "--selector-text", "Help"}, id...)...)
	if m["errorCode"] != agent.CodeSelectorNoMatch || len(m["candidates"].([]any)) != 1 {
		t.Fatalf("no match: %v", m)
	}
	// another owner, another session
	m = h.mustRun(2, "agent-status", "agent-status", "--session-id", sid, "--owner-token", "another-owner-token-0000")
	if m["errorCode"] != protocol.ErrOwnerMismatch {
		t.Fatal(m)
	}
	m = h.mustRun(2, "agent-act", "agent-act", "--action", "back", "--session-id", "agent-session-other")
	if m["errorCode"] != protocol.ErrSessionNotFound {
		t.Fatal(m)
	}
	// paused
	h.mustRun(0, "agent-pause", append([]string{"agent-pause"}, id...)...)
	m = h.mustRun(2, "agent-act", append([]string{"agent-act", "--action", "back"}, id...)...)
	if m["errorCode"] != protocol.ErrSessionPaused {
		t.Fatal(m)
	}
	// a missing receipt
	m = h.mustRun(2, "agent-receipt", append([]string{"agent-receipt", "--step-id", "never"}, id...)...)
	if m["errorCode"] != protocol.ErrReceiptNotFound {
		t.Fatal(m)
	}
}

func TestAgentCLIUsageErrors(t *testing.T) {
	h := newAgentHarness(t)
	tok := []string{"--session-id", "agent-session-1", "--owner-token", "0123456789abcdef"}
	cases := [][]string{
		{"agent-session-start", "--max-steps", "0"},
		{"agent-session-start", "--max-steps", "201"},
		{"agent-session-start", "--max-duration-ms", "999"},
		{"agent-session-start", "--idle-timeout-ms", "300001"},
		{"agent-session-start", "--max-repeated-actions", "21"},
		{"agent-session-start", "--max-no-progress-steps", "0"},
		{"agent-session-start", "--owner-token", "short"},
		{"agent-session-start", "--ack-timeout", "0"},
		{"agent-session-start", "--owner-token", "0123456789abcdef", "--owner-token-file", "/dev/null"},
		append([]string{"agent-act", "--action", "tap", "--node-id", "node-1", "--observation-id", "o-1"}, tok...),
		append([]string{"agent-act", "--action", "back", "--node-id", "node-1", "--observation-id", "o-1"}, tok...),
		append([]string{"agent-act", "--action", "click", "--text", "Sign in"}, tok...),
		append([]string{"agent-act", "--action", "wait"}, tok...),
		append([]string{"agent-act", "--action", "wait", "--duration-ms", "99"}, tok...),
		append([]string{"agent-act", "--action", "scroll", "--direction", "sideways"}, tok...),
		append([]string{"agent-act", "--action", "scroll", "--direction", "up", "--distance", "91"}, tok...),
		append([]string{"agent-act", "--action", "click", "--node-id", "node-1"}, tok...),
		append([]string{"agent-act", "--action", "click", "--node-id", "node-1", "--observation-id", "o", "--resource-id", "x"}, tok...),
		append([]string{"agent-act", "--action", "back", "--resource-id", "x"}, tok...),
		append([]string{"agent-act", "--action", "back", "--step-id", "bad step"}, tok...),
		{"agent-status", "--session-id", "agent-session-1"},
		{"agent-status", "--session-id", "bad id", "--owner-token", "0123456789abcdef"},
		{"agent-status", "--session-id", "s", "--owner-token-file", "/nonexistent/token"},
	}
	for _, c := range cases {
		code, out := h.run(c...)
		if code != 3 {
			t.Errorf("%v: exit %d %s", c, code, out)
			continue
		}
		schemas.Validate(t, "error", out)
	}
	if n := len(h.fake.Mutations()); n != 0 {
		t.Fatalf("usage errors sent %d mutations", n)
	}
	// The token file's content is never echoed, even when it is not a token.
	bad := filepath.Join(t.TempDir(), "tok")
	os.WriteFile(bad, []byte("not a token but secret-ish text\n"), 0o600)
	code, out := h.run("agent-status", "--session-id", "s", "--owner-token-file", bad)
	if code != 3 || strings.Contains(string(out), "secret-ish") {
		t.Fatalf("%d %s", code, out)
	}
	// Missing options are JSON usage errors: stdout never holds help text.
	for _, c := range [][]string{{"agent-status"}, {"agent-act", "--session-id", "s", "--owner-token", "0123456789abcdef"},
		{"agent-receipt", "--session-id", "s", "--owner-token", "0123456789abcdef"}} {
		code, out := h.run(c...)
		if code != 3 || !strings.Contains(string(out), `"errorCode":"missing_option"`) {
			t.Errorf("%v: %d %q", c, code, out)
		}
	}
}

// Interrupts and timeouts cancel exactly the session they started or
// acted on, and print the cleanup evidence.
func TestAgentCLIInterruptAndTimeoutCleanup(t *testing.T) {
	t.Run("start-timeout", func(t *testing.T) {
		h := newAgentHarness(t)
		h.fake.NoFirstObservation = true
		m := h.mustRun(124, "agent-session-start", "agent-session-start", "--ack-timeout", "0.3", "--poll-interval", "0.02")
		cl := obj(m, "cleanup")
		sid, state, _ := h.fake.SessionState()
		if m["errorCode"] != agent.CodeAgentStartTimeout || cl["attempted"] != true || cl["success"] != true || cl["state"] != "cancelled" || m["sessionId"] != sid || state != "cancelled" {
			t.Fatalf("%v", m)
		}
		lastCancel(t, h.fake, sid)
	})
	t.Run("start-interrupt", func(t *testing.T) {
		h := newAgentHarness(t)
		h.fake.NoFirstObservation = true
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(300*time.Millisecond, cancel)
		code, out := h.runCtx(ctx, "agent-session-start", "--poll-interval", "0.02")
		var m map[string]any
		_ = json.Unmarshal(out, &m)
		sid, _, _ := h.fake.SessionState()
		if code != 130 || obj(m, "cleanup")["success"] != true || m["sessionId"] != sid {
			t.Fatalf("%d %s", code, out)
		}
		schemas.Validate(t, "agent-session-start", out)
		lastCancel(t, h.fake, sid)
	})
	for _, mode := range []string{"act-interrupt", "act-timeout"} {
		t.Run(mode, func(t *testing.T) {
			h := newAgentHarness(t)
			h.fake.ActDelay = 5 * time.Second
			start := h.mustRun(0, "agent-session-start", "agent-session-start", "--poll-interval", "0.02")
			sid, tok := start["sessionId"].(string), start["ownerToken"].(string)
			h.outputs = nil
			args := []string{"agent-act", "--session-id", sid, "--owner-token", tok, "--action", "click", "--step-id", "slow-1",
				"--resource-id", agentfake.AppPackage + ":id/login", "--poll-interval", "0.02"}
			ctx := context.Background()
			want := 130
			if mode == "act-timeout" {
				args = append(args, "--action-timeout", "0.4")
				want = 124
			} else {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				time.AfterFunc(500*time.Millisecond, cancel)
			}
			code, out := h.runCtx(ctx, args...)
			var m map[string]any
			_ = json.Unmarshal(out, &m)
			if code != want || obj(m, "cleanup")["attempted"] != true || obj(m, "cleanup")["state"] != "cancelled" || m["stepId"] != "slow-1" || m["sessionId"] != sid {
				t.Fatalf("%d %s", code, out)
			}
			schemas.Validate(t, "agent-act", out)
			lastCancel(t, h.fake, sid)
			for _, o := range h.outputs {
				if bytes.Contains(o, []byte(tok)) {
					t.Fatalf("token in %s", o)
				}
			}
		})
	}
}

func lastCancel(t *testing.T, fake *agentfake.Device, sid string) {
	t.Helper()
	ms := fake.Mutations()
	if len(ms) == 0 {
		t.Fatal("no mutations")
	}
	last := ms[len(ms)-1]
	start := ms[0]
	if last.Type != protocol.AgentCancel || last.Params["sessionId"] != sid || last.Params["ownerToken"] != start.Params["ownerToken"] {
		t.Fatalf("last mutation %s for %s", last.Type, last.Params["sessionId"])
	}
	if fake.Focus() != agentfake.AppActivity {
		t.Errorf("foreground left at %s", fake.Focus())
	}
}

package agentcmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/testwait"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim"
)

// The flow end to end: start → observe (screenshot) → act (input, then a
// click by selector against the caller's observation, then the same step
// again) → receipt → pause, resume, end → timeline (pulled), with the
// owner token passed by file and printed nowhere.
func TestAgentFullFlowNeverPrintsToken(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	dir := t.TempDir()
	tokFile := filepath.Join(dir, "owner.token")
	start := r.expect(0, "agent-session-start", "--owner-token-out", tokFile, "--max-steps", "10", "--poll-interval", "0.02")
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
	if pkg, _ := r.foreground(); pkg != loginPkg {
		t.Fatalf("foreground not restored: %s", pkg)
	}
	id := []string{"--session-id", sid, "--owner-token-file", tokFile}

	if caps := r.expect(0, "agent-capabilities"); caps["protocolVersion"] != "1.0" {
		t.Fatal(caps)
	}
	for _, in := range [][2]string{{"username", "demo"}, {"password", "secret"}} {
		act := r.expect(0, append([]string{"agent-act", "--action", "input", "--text", in[1], "--resource-id", loginPkg + ":id/" + in[0],
			"--step-id", "input-" + in[0], "--observation-id", r.observe(id), "--poll-interval", "0.02"}, id...)...)
		if act["observationSource"] != "caller" || obj(act, "receipt")["status"] != "succeeded" {
			t.Fatalf("input %s: %v", in[0], act)
		}
	}
	shot := filepath.Join(dir, "obs.png")
	ob := r.expect(0, append([]string{"agent-observe", "--screenshot-output", shot}, id...)...)
	obsID := obj(ob, "observation")["observationId"].(string)
	if obj(ob, "screenshot")["sha256"] != obj(ob, "observation")["screenshotSha256"] {
		t.Fatalf("screenshot %v", ob["screenshot"])
	}
	// Refusing to overwrite happens before observing (which would make
	// the observation stale).
	before := r.agentMutations()
	if m := r.expect(3, append([]string{"agent-observe", "--screenshot-output", shot}, id...)...); m["errorCode"] != "output_exists" || r.agentMutations() != before {
		t.Fatalf("overwrite: %v", m)
	}

	act := r.expect(0, append([]string{"agent-act", "--action", "click", "--observation-id", obsID, signIn, "--step-id", "cli-step-1", "--poll-interval", "0.02"}, id...)...)
	if act["observationSource"] != "caller" || act["stepId"] != "cli-step-1" || obj(act, "receipt")["status"] != "succeeded" || act["replayed"] != false {
		t.Fatalf("act %v", act)
	}
	if _, activity := r.foreground(); activity != loginPkg+loginWelcome {
		t.Fatalf("the click did not sign in: %s", activity)
	}
	// Same stepId again: the stored receipt, no second action.
	again := r.expect(0, append([]string{"agent-act", "--action", "click", "--observation-id", obsID, signIn, "--step-id", "cli-step-1"}, id...)...)
	if again["replayed"] != true || obj(again, "receipt")["acceptedAt"] != obj(act, "receipt")["acceptedAt"] {
		t.Fatalf("replay %v", again)
	}
	rc := r.expect(0, append([]string{"agent-receipt", "--step-id", "cli-step-1"}, id...)...)
	if obj(rc, "receipt", "settledObservation")["observationId"] != act["settledObservationId"] {
		t.Fatalf("receipt %v", rc)
	}
	// A selector against a new observation.
	act2 := r.expect(0, append([]string{"agent-act", "--action", "click", "--selector-text", "Sign out", "--step-id", "cli-step-2", "--observation-id", r.observe(id)}, id...)...)
	if act2["observationSource"] != "caller" || act2["stepId"] != "cli-step-2" || obj(act2, "receipt")["status"] != "succeeded" {
		t.Fatalf("act2 %v", act2)
	}

	r.expect(0, append([]string{"agent-pause"}, id...)...)
	if st2 := r.expect(0, append([]string{"agent-status"}, id...)...); st2["state"] != "paused" {
		t.Fatal(st2)
	}
	r.expect(0, append([]string{"agent-resume"}, id...)...)
	if end := r.expect(0, append([]string{"agent-end"}, id...)...); end["state"] != "ended" || end["changed"] != true {
		t.Fatal(end)
	}
	tlFile := filepath.Join(dir, "timeline.jsonl")
	tl := r.expect(0, append([]string{"agent-timeline", "--output", tlFile}, id...)...)
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
	mutations := r.agentMutations()
	if again2 := r.expect(0, append([]string{"agent-end"}, id...)...); again2["changed"] != false || r.agentMutations() != mutations {
		t.Fatalf("second end: %v", again2)
	}
	if m := r.expect(2, append([]string{"agent-pause"}, id...)...); m["errorCode"] != "terminal_session" {
		t.Fatalf("pause after end: %v", m)
	}

	// The token is in no output and in no file written except its own.
	r.noTokenIn(tok)
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

// A generated token is printed exactly once, by start; every later command
// given the token (flag, file or environment) never shows it, not even in
// error objects.
func TestAgentTokenPrintedOnlyByStart(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	res := r.Run("agent-session-start", "--poll-interval", "0.02")
	start := res.Object(t)
	tok := start["ownerToken"].(string)
	if res.Code != 0 || strings.Count(string(res.Stdout), tok) != 1 {
		t.Fatalf("start must print the token exactly once: %s", res.Stdout)
	}
	sid := start["sessionId"].(string)
	obs := obj(start, "observation")["observationId"].(string)
	seen := len(r.Outputs())

	viaFlag := []string{"--session-id", sid, "--owner-token", tok}
	viaFile := []string{"--session-id", sid, "--owner-token-file", cmdtest.WriteFile(t, "tok", []byte(tok+"\n"))}
	for _, ids := range [][]string{viaFlag, viaFile} {
		for _, c := range [][]string{
			{"agent-status"}, {"agent-observe"}, {"agent-timeline"}, {"agent-receipt", "--step-id", "missing"},
			{"agent-act", "--action", "click", "--selector-text", "Nothing like it", "--step-id", "t-1", "--observation-id", obs},
			{"agent-act", "--action", "click", "--class-name", "android.widget.TextView", "--step-id", "t-2", "--observation-id", obs},
			{"agent-act", "--action", "back", "--observation-id", "observation-stale", "--step-id", "t-3"},
			{"agent-pause"}, {"agent-resume"},
		} {
			r.Run(append(c, ids...)...)
		}
	}
	r.Env[envOwnerToken] = tok
	r.Run("agent-status", "--session-id", sid)
	// Another session id with the right token.
	r.Run("agent-status", "--session-id", "agent-session-nope", "--owner-token", tok)
	r.Run("agent-cancel", "--session-id", sid, "--owner-token", tok)
	for i, o := range r.Outputs()[seen:] {
		if bytes.Contains(o, []byte(tok)) {
			t.Fatalf("output %d contains the owner token: %s", i, o)
		}
	}
	// A start given the token on the command line prints it back (it is in
	// the process list anyway, and what solopi-ai scripts read).
	if m := r.expect(0, "agent-session-start", "--owner-token", tok, "--poll-interval", "0.02"); m["ownerToken"] != tok || m["ownerTokenSource"] != "flag" {
		t.Fatalf("start with --owner-token: %v", m)
	}
}

func TestAgentRejectionsMapToExit2(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	r.Env[envOwnerToken] = "0123456789abcdef-test-token"
	start := r.expect(0, "agent-session-start", "--poll-interval", "0.02")
	if _, ok := start["ownerToken"]; ok || start["ownerTokenSource"] != "env" {
		t.Fatalf("env token printed or misreported: %v", start)
	}
	sid := start["sessionId"].(string)
	first := obj(start, "observation")["observationId"].(string)
	id := []string{"--session-id", sid}

	// stale: a newer observation exists
	r.expect(0, append([]string{"agent-observe"}, id...)...)
	m := r.expect(2, append([]string{"agent-act", "--action", "click", "--observation-id", first, signIn, "--step-id", "r-1"}, id...)...)
	if m["errorCode"] != protocol.ErrStaleObservation || obj(m, "receipt")["status"] != "rejected" || m["stepId"] == nil {
		t.Fatalf("stale: %v", m)
	}
	// an unknown observation id cannot be resolved against
	m = r.expect(2, append([]string{"agent-act", "--action", "click", "--observation-id", "observation-unknown", signIn, "--step-id", "r-2"}, id...)...)
	if m["errorCode"] != fault.CodeObservationNotFound {
		t.Fatalf("unknown observation: %v", m)
	}
	// ambiguous and missing selectors name the candidates
	current := r.observe(id)
	m = r.expect(2, append([]string{"agent-act", "--action", "click", "--selector-text", "Sign in", "--step-id", "r-3", "--observation-id", current}, id...)...)
	if m["errorCode"] != fault.CodeSelectorAmbiguous || len(m["candidates"].([]any)) != 2 {
		t.Fatalf("ambiguous: %v", m)
	}
	c0 := m["candidates"].([]any)[0].(map[string]any)
	for _, k := range []string{"nodeId", "text", "bounds"} {
		if _, ok := c0[k]; !ok {
			t.Errorf("candidate lacks %s: %v", k, c0)
		}
	}
	m = r.expect(2, append([]string{"agent-act", "--action", "click", "--resource-id", "nope", "--selector-text", "Password", "--step-id", "r-4", "--observation-id", current}, id...)...)
	if m["errorCode"] != fault.CodeSelectorNoMatch || len(m["candidates"].([]any)) != 2 {
		t.Fatalf("no match: %v", m)
	}
	// another owner, another session
	if m = r.expect(2, "agent-status", "--session-id", sid, "--owner-token", "another-owner-token-0000"); m["errorCode"] != protocol.ErrOwnerMismatch {
		t.Fatal(m)
	}
	if m = r.expect(2, "agent-act", "--action", "back", "--session-id", "agent-session-other", "--step-id", "r-5", "--observation-id", current); m["errorCode"] != protocol.ErrSessionNotFound {
		t.Fatal(m)
	}
	// paused
	r.expect(0, append([]string{"agent-pause"}, id...)...)
	if m = r.expect(2, append([]string{"agent-act", "--action", "back", "--step-id", "r-6", "--observation-id", r.observe(id)}, id...)...); m["errorCode"] != protocol.ErrSessionPaused {
		t.Fatal(m)
	}
	// a missing receipt
	if m = r.expect(2, append([]string{"agent-receipt", "--step-id", "never"}, id...)...); m["errorCode"] != protocol.ErrReceiptNotFound {
		t.Fatal(m)
	}
}

func TestAgentUsageErrors(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	tok := []string{"--session-id", "agent-session-1", "--owner-token", "0123456789abcdef"}
	// act is an agent-act line with the identity, a step and an
	// observation (args given later override them).
	act := func(args ...string) []string {
		return append(append(append([]string{"agent-act"}, tok...), "--step-id", "step-1", "--observation-id", "o-1"), args...)
	}
	for _, c := range [][]string{
		{"agent-session-start", "--max-steps", "0"},
		{"agent-session-start", "--max-steps", "201"},
		{"agent-session-start", "--max-duration-ms", "999"},
		{"agent-session-start", "--idle-timeout-ms", "300001"},
		{"agent-session-start", "--max-repeated-actions", "21"},
		{"agent-session-start", "--max-no-progress-steps", "0"},
		{"agent-session-start", "--owner-token", "short"},
		{"agent-session-start", "--owner-token", "0123456789abcdef", "--owner-token-file", "/dev/null"},
		act("--action", "back", "--node-id", "node-1"),
		act("--action", "click", "--text", "Sign in"),
		act("--action", "wait"),
		act("--action", "wait", "--duration-ms", "99"),
		act("--action", "scroll", "--direction", "up", "--distance", "91"),
		act("--action", "click", "--node-id", "node-1", "--resource-id", "x"),
		act("--action", "back", "--resource-id", "x"),
		act("--action", "back", "--step-id", "bad step"),
		append([]string{"agent-observe", "--screenshot-output", "/nonexistent/dir/s.png"}, tok...),
		append([]string{"agent-timeline", "--output", "/nonexistent/dir/t.jsonl"}, tok...),
		{"agent-status", "--session-id", "bad id", "--owner-token", "0123456789abcdef"},
		{"agent-status", "--session-id", "s", "--owner-token-file", "/nonexistent/token"},
		{"agent-status", "--session-id", "s", "--owner-token-file", "/"},
	} {
		r.expect(3, c...)
	}
	if n := r.Selections(); n != 0 {
		t.Fatalf("usage errors selected the device %d times", n)
	}
	// The token file's content is never echoed, even when it is not a token.
	bad := cmdtest.WriteFile(t, "tok", []byte("not a token but secret-ish text\n"))
	if res := r.Run("agent-status", "--session-id", "s", "--owner-token-file", bad); res.Code != 3 || strings.Contains(string(res.Stdout), "secret-ish") {
		t.Fatalf("%d %s", res.Code, res.Stdout)
	}
	// What the parser decides is its text on stderr, nothing on stdout: a
	// missing flag or owner token, a choice, a seconds value.
	for _, c := range [][]string{
		{"agent-status"},
		{"agent-status", "--session-id", "agent-session-1"},
		{"agent-act", "--session-id", "s", "--owner-token", "0123456789abcdef"},
		{"agent-receipt", "--session-id", "s", "--owner-token", "0123456789abcdef"},
		{"agent-session-start", "--ack-timeout", "0"},
		append([]string{"agent-act", "--action", "back"}, tok...),
		append([]string{"agent-act", "--action", "back", "--step-id", "s-1"}, tok...),
		append([]string{"agent-act", "--action", "click", "--node-id", "node-1", "--step-id", "s-1"}, tok...),
		act("--action", "tap", "--node-id", "node-1"),
		act("--action", "scroll", "--direction", "sideways"),
		act("--action", "back", "--action-timeout", "-1"),
	} {
		r.parseError(c...)
	}
	if n := r.Selections(); n != 0 {
		t.Fatalf("parse errors selected the device %d times", n)
	}
}

// Interrupts and timeouts cancel exactly the session they started or
// acted on, print the cleanup evidence and put the app under test back in
// front.
func TestAgentInterruptAndTimeoutCleanup(t *testing.T) {
	t.Parallel()
	// cancelled is the session's state on the device, asked with its token.
	cancelled := func(t *testing.T, r *rig, sid, tok string) {
		t.Helper()
		if st := r.expect(0, "agent-status", "--session-id", sid, "--owner-token", tok); st["state"] != "cancelled" {
			t.Fatalf("the session after the cleanup: %v", st)
		}
		if pkg, _ := r.foreground(); pkg != loginPkg {
			t.Errorf("foreground left at %s", pkg)
		}
	}
	t.Run("start-timeout", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, sim.Options{})
		// The first observation waits for a screenshot that takes an hour.
		r.dev.Phone.SetScreenshotFault(nil, time.Hour)
		tok := "start-timeout-token-0123456789"
		m := r.expect(124, "agent-session-start", "--owner-token", tok, "--ack-timeout", "0.3", "--poll-interval", "0.02")
		cl := obj(m, "cleanup")
		if m["errorCode"] != fault.CodeAgentStartTimeout || cl["attempted"] != true || cl["success"] != true || cl["state"] != "cancelled" || m["sessionId"] == nil {
			t.Fatalf("%v", m)
		}
		r.dev.Phone.SetScreenshotFault(nil, 0)
		cancelled(t, r, m["sessionId"].(string), tok)
	})
	t.Run("start-interrupt", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, sim.Options{})
		r.dev.Phone.SetScreenshotFault(nil, time.Hour)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			testwait.Until(t, 10*time.Second, "the session to start", func() bool { return r.dev.App.LeaseHolder() != "" })
			cancel()
		}()
		tok := "start-interrupt-token-0123456789"
		m := r.ExpectCtx(ctx, 130, "agent-session-start", "agent-session-start", "--owner-token", tok, "--poll-interval", "0.02")
		if obj(m, "cleanup")["success"] != true || m["sessionId"] == nil {
			t.Fatalf("%v", m)
		}
		r.dev.Phone.SetScreenshotFault(nil, 0)
		cancelled(t, r, m["sessionId"].(string), tok)
	})
	for _, mode := range []string{"act-interrupt", "act-timeout"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, sim.Options{})
			start := r.expect(0, "agent-session-start", "--poll-interval", "0.02")
			sid, tok := start["sessionId"].(string), start["ownerToken"].(string)
			obs := obj(start, "observation")["observationId"].(string)
			// Every settle waits first: the act outlasts its budget.
			r.dev.App.SetSettleDelay(time.Hour)
			seen := len(r.Outputs())
			args := []string{"agent-act", "--session-id", sid, "--owner-token", tok, "--action", "click", "--step-id", "slow-1", "--observation-id", obs, signIn, "--poll-interval", "0.02"}
			ctx := context.Background()
			want := 130
			if mode == "act-timeout" {
				args = append(args, "--action-timeout", "0.4")
				want = 124
			} else {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
				before := r.agentMutations()
				go func() {
					testwait.Until(t, 10*time.Second, "the act to reach the device", func() bool { return r.agentMutations() > before })
					cancel()
				}()
			}
			m := r.ExpectCtx(ctx, want, "agent-act", args...)
			if obj(m, "cleanup")["attempted"] != true || obj(m, "cleanup")["state"] != "cancelled" || m["stepId"] != "slow-1" || m["sessionId"] != sid {
				t.Fatalf("%v", m)
			}
			for _, o := range r.Outputs()[seen:] {
				if bytes.Contains(o, []byte(tok)) {
					t.Fatalf("token in %s", o)
				}
			}
			r.dev.App.SetSettleDelay(0)
			cancelled(t, r, sid, tok)
		})
	}
}

// The device-control lease is shared: a replay cannot start while an
// Agent session holds it, and an Agent session cannot start during a
// replay.
func TestLeaseSharedBetweenReplayAndAgent(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	r.expect(0, "case-import", "--file", cmdtest.WriteCase(t, nil), "--replace", "--poll-interval", "0.05")
	if err := r.dev.Phone.LaunchApp(loginPkg); err != nil {
		t.Fatal(err)
	}
	start := r.expect(0, "agent-session-start", "--owner-token-out", filepath.Join(t.TempDir(), "tok"), "--poll-interval", "0.02")
	if m := r.expect(2, "run", "--case", cmdtest.DemoCaseName, "--poll-interval", "0.05"); !strings.Contains(m["error"].(string)+" "+strings.Join(messages(m), " "), "Another replay or plugin maintenance prevents replay from starting") {
		t.Fatalf("replay during an Agent session: %v", m)
	}
	r.expect(0, "agent-end", "--session-id", start["sessionId"].(string), "--owner-token-file", start["ownerTokenFile"].(string))
	// Now a replay holds the lease (held open by a slow permission dialog).
	r.dev.App.SetPermissionDialogDelay(60 * time.Second)
	run := r.expect(0, "run", "--case", cmdtest.DemoCaseName, "--no-wait", "--poll-interval", "0.05")
	res := r.Run("agent-session-start", "--ack-timeout", "3")
	if m := res.Object(t); res.Code != 2 || m["errorCode"] != "lease_conflict" || m["ownerToken"] != nil {
		t.Fatalf("an Agent session start during a replay: exit %d %s", res.Code, res.Stdout)
	}
	r.expect(0, "cancel", "--run-id", run["runId"].(string), "--poll-interval", "0.05")
}

// messages are every string value of m (to search an error's text).
func messages(m map[string]any) []string {
	var out []string
	for _, v := range m {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case map[string]any:
			out = append(out, messages(v)...)
		case []any:
			for _, e := range v {
				if em, ok := e.(map[string]any); ok {
					out = append(out, messages(em)...)
				}
			}
		}
	}
	return out
}

package soloapp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

const token = "owner-token-0123456789abcdef"

type agentRig struct {
	*rig
	sid, tok string
	stepN    int
}

// startAgent starts a session with the counter app in front and waits for
// the first observation.
func startAgent(t *testing.T, r *rig, kv ...string) *agentRig {
	t.Helper()
	r.phone.set(func(f *fakePhone) {
		if f.fg == launcherPkg {
			f.fg = counterPkg
		}
	})
	// Generous device-time budgets unless the test sets its own: the scaled
	// clock turns scheduler hiccups into seconds of device time.
	has := func(k string) bool {
		for i := 0; i < len(kv); i += 2 {
			if kv[i] == k {
				return true
			}
		}
		return false
	}
	if !has("idleTimeoutMs") {
		kv = append(kv, "idleTimeoutMs", "300000")
	}
	if !has("maxDurationMs") {
		kv = append(kv, "maxDurationMs", "1800000")
	}
	r.adb("agent", append([]string{"type", "start", "ownerToken", token}, kv...)...)
	var ss map[string]any
	r.eventually("first observation", 10*time.Second, func() bool {
		ss = r.get("agent", "type", "start-status", "ownerToken", token)
		return ss["observation"] != nil || sub(ss, "session")["terminal"] == true
	})
	if ss["observation"] == nil {
		t.Fatalf("start failed: %v", ss)
	}
	return &agentRig{rig: r, sid: str(sub(ss, "session"), "sessionId"), tok: token}
}

func (g *agentRig) q(typ string, kv ...string) map[string]any {
	return g.get("agent", append([]string{"type", typ, "sessionId", g.sid, "ownerToken", g.tok}, kv...)...)
}

func (g *agentRig) session() map[string]any { return sub(g.q("status"), "session") }

func (g *agentRig) currentObs() map[string]any {
	ss := g.get("agent", "type", "start-status", "ownerToken", g.tok)
	return sub(ss, "observation")
}

// nodeID finds the nodeId of the node with that resourceId suffix.
func nodeID(page map[string]any, idSuffix string) string {
	if strings.HasSuffix(str(page, "resourceId"), idSuffix) && idSuffix != "" {
		return str(page, "nodeId")
	}
	kids, _ := page["children"].([]any)
	for _, k := range kids {
		if id := nodeID(k.(map[string]any), idSuffix); id != "" {
			return id
		}
	}
	return ""
}

// act sends an act and, unless wait is false, waits for a final receipt.
func (g *agentRig) act(obsID, action string, kv ...string) (string, map[string]any) {
	g.t.Helper()
	g.stepN++
	step := fmt.Sprintf("step-%03d", g.stepN)
	g.actStep(step, obsID, action, kv...)
	return step, g.waitReceipt(step)
}

func (g *agentRig) actStep(step, obsID, action string, kv ...string) {
	g.adb("agent", append([]string{"type", "act", "sessionId", g.sid, "ownerToken", g.tok, "stepId", step, "observationId", obsID, "action", action}, kv...)...)
}

func (g *agentRig) waitReceipt(step string) map[string]any {
	g.t.Helper()
	var rec map[string]any
	g.eventually("receipt "+step, 20*time.Second, func() bool {
		rec = sub(g.q("receipt", "stepId", step), "receipt")
		s := str(rec, "status")
		return s == "succeeded" || s == "failed" || s == "rejected"
	})
	return rec
}

// checkTimeline verifies the timeline invariants
// (docs/device-protocol.md#timeline) on the in-memory events and the timeline
// file.
func (g *agentRig) checkTimeline(wantTerminal int) []map[string]any {
	g.t.Helper()
	tl := g.q("timeline")
	raw, _ := tl["events"].([]any)
	var events []map[string]any
	terminals := 0
	for i, e := range raw {
		m := e.(map[string]any)
		events = append(events, m)
		if num(m, "sequence") != int64(i+1) {
			g.t.Errorf("sequence %d at %d", num(m, "sequence"), i)
		}
		if str(m, "sessionId") != g.sid {
			g.t.Errorf("event session: %v", m)
		}
		if str(m, "type") == "session_terminal" {
			terminals++
			if i+1 >= len(raw) || str(raw[i+1].(map[string]any), "type") != "lease_released" {
				g.t.Errorf("session_terminal not followed by lease_released")
			}
		}
		if str(m, "type") == "lease_released" && (i == 0 || str(raw[i-1].(map[string]any), "type") != "session_terminal") {
			g.t.Errorf("lease_released without session_terminal")
		}
	}
	if terminals != wantTerminal {
		g.t.Errorf("%d session_terminal events, want %d", terminals, wantTerminal)
	}
	data, err := g.phone.ReadFile(str(tl, "timelinePath"))
	if err != nil {
		g.t.Fatalf("timeline file: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != len(events) {
		g.t.Errorf("timeline file has %d lines, memory %d", len(lines), len(events))
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, fmt.Sprintf(`{"sequence":%d,"timestamp":`, i+1)) {
			g.t.Errorf("line %d: %.80s", i, l)
		}
	}
	return events
}

// noTokenAnywhere asserts the ownerToken never reached a file or log line.
func noTokenAnywhere(t *testing.T, r *rig) {
	t.Helper()
	for p, data := range r.phone.allFiles() {
		if bytes.Contains(data, []byte(token)) || strings.Contains(p, token) {
			t.Errorf("ownerToken leaked into %s", p)
		}
	}
	r.phone.mu.Lock()
	defer r.phone.mu.Unlock()
	for _, l := range r.phone.logs {
		if strings.Contains(l, token) {
			t.Errorf("ownerToken leaked into log %q", l)
		}
	}
}

func TestAgentStartValidation(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	wantErr(t, r.get("agent"), "missing_type", "Parameter 'type' is required")
	wantErr(t, r.get("agent", "type", "fly"), "unsupported_type", "Unsupported Agent type: fly")
	c := r.get("agent", "type", "capabilities")
	if str(c, "protocolVersion") != "1.0" || c["arbitraryShell"] != false || len(c["actions"].([]any)) != 7 || str(c, "mutationTransport") != "adb-scheme" {
		t.Errorf("capabilities: %v", c)
	}
	wantErr(t, r.get("agent", "type", "start-status", "ownerToken", token), "session_not_found", "No session belongs to ownerToken")
	wantErr(t, r.mutate("agent", "type", "start"), "missing_parameter", "Parameter 'ownerToken' is required")
	for _, tc := range []struct{ key, value, msg string }{
		{"maxSteps", "0", "maxSteps must be between 1 and 200"},
		{"maxSteps", "201", "maxSteps must be between 1 and 200"},
		{"maxSteps", "", "maxSteps must be between 1 and 200"},
		{"maxSteps", "ten", "maxSteps must be between 1 and 200"},
		{"maxDurationMs", "999", "maxDurationMs must be between 1000 and 1800000"},
		{"maxDurationMs", "1800001", "maxDurationMs must be between 1000 and 1800000"},
		{"idleTimeoutMs", "300001", "idleTimeoutMs must be between 1000 and 300000"},
		{"maxRepeatedActions", "21", "maxRepeatedActions must be between 1 and 20"},
		{"maxNoProgressSteps", "0", "maxNoProgressSteps must be between 1 and 20"},
	} {
		wantErr(t, r.mutate("agent", "type", "start", "ownerToken", token, tc.key, tc.value), "invalid_parameter", tc.msg)
	}
	wantErr(t, r.mutate("agent", "type", "start", "ownerToken", "short-token-15ch"[:15]), "invalid_owner_token", "ownerToken must contain at least 16 characters")
	if r.app.AgentGeneration() != 0 || r.app.LeaseHolder() != "" {
		t.Fatal("rejected starts changed state")
	}
	g := startAgent(t, r, "maxSteps", "200", "maxDurationMs", "1800000")
	s := g.session()
	if str(s, "state") != "active" || num(s, "generation") != 1 || num(s, "maxSteps") != 200 || s["leaseHeld"] != true || !strings.HasPrefix(g.sid, "agent-session-") {
		t.Errorf("session: %v", s)
	}
	wantErr(t, r.mutate("agent", "type", "start", "ownerToken", token), "session_conflict", "A dynamic Agent session is already active")
	wantErr(t, r.mutate("agent", "type", "start", "ownerToken", "x"), "session_conflict", "")
	// Identity checks.
	wantErr(t, r.get("agent", "type", "status", "sessionId", g.sid), "missing_parameter", "Parameter 'ownerToken' is required")
	wantErr(t, r.get("agent", "type", "status", "sessionId", "agent-session-x", "ownerToken", token), "session_not_found", "sessionId does not identify the current session")
	wantErr(t, r.get("agent", "type", "status", "sessionId", g.sid, "ownerToken", token+"x"), "owner_mismatch", "ownerToken does not own this session")
	wantErr(t, r.get("agent", "type", "observe", "sessionId", g.sid, "ownerToken", "nope"), "owner_mismatch", "")
	wantErr(t, r.get("agent", "type", "start-status", "ownerToken", "nope"), "session_not_found", "No session belongs to ownerToken")
	wantErr(t, r.mutate("agent", "type", "act", "sessionId", g.sid, "ownerToken", token, "stepId", "s", "observationId", "o"), "missing_parameter", "Parameter 'action' is required")
	wantErr(t, r.mutate("agent", "type", "act", "sessionId", g.sid, "ownerToken", token, "stepId", "s", "observationId", "o", "action", "wait", "durationMs", "1.5"), "invalid_action", "durationMs must be an integer")
	wantErr(t, r.mutate("agent", "type", "act", "sessionId", g.sid, "ownerToken", token, "stepId", "s", "observationId", "o", "action", "scroll", "distance", ""), "invalid_action", "distance must be an integer")
	if got := r.mutate("agent", "type", "act", "sessionId", g.sid, "ownerToken", token, "stepId", "s", "observationId", "o", "action", "fly"); got["accepted"] != true || str(got, "stepId") != "s" {
		t.Errorf("act ack: %v", got)
	}
	rec := g.waitReceipt("s")
	if str(rec, "status") != "rejected" || str(rec, "errorCode") != "unsupported_action" || str(rec, "error") != "Only phase-one typed actions are allowed" {
		t.Errorf("unsupported: %v", rec)
	}
	r.adb("agent", "type", "end", "sessionId", g.sid, "ownerToken", token)
	r.eventually("ended", time.Second, func() bool { return str(g.session(), "state") == "ended" })
	g.checkTimeline(1)
	noTokenAnywhere(t, r)
}

func TestAgentActFlow(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	g := startAgent(t, r, "maxRepeatedActions", "20", "maxNoProgressSteps", "20")
	obs := g.currentObs()
	page := sub(obs, "page")
	// Observation shape: nodeIds in pre-order, hash over the page without them.
	if str(page, "nodeId") != "node-1" || nodeID(page, ":id/counter_value") != "node-2" || nodeID(page, ":id/name") != "node-5" {
		t.Errorf("nodeIds: %v", page)
	}
	if str(obs, "signature") != str(obs, "treeSha256") || !protocol.ValidHex(str(obs, "treeSha256"), 64, false) || !strings.HasPrefix(str(obs, "observationId"), "observation-") {
		t.Errorf("observation: %v", obs)
	}
	r.app.Mu.Lock()
	want := core.ExportPage(r.app.ReadRoot(true), false).Sha
	r.app.Mu.Unlock()
	if str(obs, "treeSha256") != want {
		t.Errorf("tree hash %s, recomputed %s", str(obs, "treeSha256"), want)
	}
	shot, err := r.phone.ReadFile(str(obs, "screenshotPath"))
	sum := sha256.Sum256(shot)
	if err != nil || hex.EncodeToString(sum[:]) != str(obs, "screenshotSha256") ||
		str(obs, "screenshotPath") != "/storage/emulated/0/solopi/agent-sessions/"+g.sid+"/"+str(obs, "observationId")+".png" {
		t.Errorf("screenshot %s: %v", str(obs, "screenshotPath"), err)
	}
	if str(obs, "timelinePath") != "/storage/emulated/0/solopi/agent-sessions/"+g.sid+"/timeline.jsonl" {
		t.Errorf("timelinePath %s", str(obs, "timelinePath"))
	}
	inc := nodeID(page, ":id/increment")
	first := str(obs, "observationId")

	// Invalid arguments are rejected before acting.
	for _, tc := range []struct {
		action string
		kv     []string
		msg    string
	}{
		{"click", nil, "click requires nodeId"},
		{"click", []string{"nodeId", inc, "text", "x"}, "Unexpected action field: text"},
		{"input", []string{"nodeId", inc}, "input requires nodeId and string text"},
		{"scroll", []string{"direction", "sideways"}, "scroll direction must be up, down, left, or right"},
		{"wait", []string{"durationMs", "50"}, "wait requires durationMs between 100 and 5000"},
		{"longClick", []string{"nodeId", inc, "durationMs", "6000"}, "durationMs must be between 100 and 5000"},
	} {
		_, rec := g.act(first, tc.action, tc.kv...)
		if str(rec, "status") != "rejected" || str(rec, "errorCode") != "invalid_action" || str(rec, "error") != tc.msg || num(rec, "finishedAt") == 0 {
			t.Fatalf("%s %v: %v\n%v", tc.action, tc.kv, rec, g.session())
		}
	}
	_, tapsBefore, _, _ := r.phone.snapshot()
	step, rec := g.act(first, "click", "nodeId", inc)
	if str(rec, "status") != "succeeded" || sub(rec, "settledObservation") == nil || str(sub(sub(rec, "action"), "arguments"), "nodeId") != inc || str(sub(rec, "action"), "type") != "click" {
		t.Fatalf("click: %v", rec)
	}
	count, taps, _, _ := r.phone.snapshot()
	if count != 1 || taps != tapsBefore+1 {
		t.Fatalf("count %d taps %d", count, taps)
	}
	settled := sub(rec, "settledObservation")
	if str(g.session(), "observationId") != str(settled, "observationId") || num(g.session(), "acceptedSteps") != 1 {
		t.Errorf("settled observation not current: %v", g.session())
	}
	// The same stepId never executes twice.
	g.actStep(step, str(settled, "observationId"), "click", "nodeId", inc)
	r.sleep(6 * time.Second)
	if _, taps2, _, _ := r.phone.snapshot(); taps2 != taps {
		t.Errorf("stepId executed twice: %d taps", taps2)
	}
	if again := g.waitReceipt(step); str(again, "observationId") != first {
		t.Errorf("receipt changed: %v", again)
	}
	// A consumed/stale observation is rejected before acting.
	_, stale := g.act(first, "click", "nodeId", inc)
	if str(stale, "errorCode") != "stale_observation" || str(stale, "error") != "The action must reference the current unchanged observation" {
		t.Errorf("stale: %v", stale)
	}
	if _, taps3, _, _ := r.phone.snapshot(); taps3 != taps {
		t.Error("stale observation acted")
	}
	// A UI change after the observation makes it stale too.
	r.phone.set(func(f *fakePhone) { f.count = 5 })
	_, changed := g.act(str(settled, "observationId"), "click", "nodeId", inc)
	if str(changed, "errorCode") != "stale_observation" {
		t.Errorf("changed tree: %v", changed)
	}
	// observe makes a new current observation; the previous one goes stale.
	ob := g.q("observe")
	o2 := sub(ob, "observation")
	if ob["success"] != true || str(o2, "observationId") == str(settled, "observationId") {
		t.Fatalf("observe: %v", ob)
	}
	// Identity rejections are not stored.
	g.adb("agent", "type", "act", "sessionId", g.sid, "ownerToken", token+"-other", "stepId", "intruder", "observationId", str(o2, "observationId"), "action", "back")
	r.sleep(6 * time.Second)
	wantErr(t, g.q("receipt", "stepId", "intruder"), "receipt_not_found", "No receipt exists for stepId")
	wantErr(t, r.get("agent", "type", "receipt", "sessionId", g.sid, "ownerToken", "other-owner-token", "stepId", step), "owner_mismatch", "")
	// input and scroll.
	name := nodeID(sub(o2, "page"), ":id/name")
	_, in := g.act(str(o2, "observationId"), "input", "nodeId", name, "text", "Alice")
	if str(in, "status") != "succeeded" {
		t.Fatalf("input: %v", in)
	}
	if _, _, nm, _ := r.phone.snapshot(); nm != "Alice" {
		t.Errorf("input text %q", nm)
	}
	o3 := sub(in, "settledObservation")
	_, sc := g.act(str(o3, "observationId"), "scroll", "direction", "down", "distance", "30")
	if str(sc, "status") != "succeeded" || r.phone.swipes != 1 {
		t.Errorf("scroll: %v", sc)
	}
	// Pause: act rejected, observe allowed; resume.
	g.adb("agent", "type", "pause", "sessionId", g.sid, "ownerToken", token)
	if s := g.session(); str(s, "state") != "paused" || s["active"] != true {
		t.Fatalf("paused: %v", s)
	}
	wantErr(t, r.mutate("agent", "type", "pause", "sessionId", g.sid, "ownerToken", token), "already_paused", "The session is already paused")
	o4 := sub(g.q("observe"), "observation")
	_, paused := g.act(str(o4, "observationId"), "back")
	if str(paused, "errorCode") != "session_paused" {
		t.Errorf("paused act: %v", paused)
	}
	if res := r.mutate("agent", "type", "resume", "sessionId", g.sid, "ownerToken", token); res["success"] != true {
		t.Fatalf("resume: %v", res)
	}
	if str(g.session(), "state") != "active" {
		t.Fatal("not resumed")
	}
	wantErr(t, r.mutate("agent", "type", "resume", "sessionId", g.sid, "ownerToken", token), "not_paused", "The session is not paused")
	_, wait := g.act(str(o4, "observationId"), "wait", "durationMs", "200")
	if str(wait, "status") != "succeeded" {
		t.Errorf("wait: %v", wait)
	}
	// End.
	g.adb("agent", "type", "end", "sessionId", g.sid, "ownerToken", token)
	s := g.session()
	if str(s, "state") != "ended" || str(s, "terminalReason") != "client_end" || s["leaseHeld"] != false || s["terminal"] != true || num(s, "finishedAt") == 0 {
		t.Errorf("ended: %v", s)
	}
	wantErr(t, r.mutate("agent", "type", "end", "sessionId", g.sid, "ownerToken", token), "terminal_session", "The session is already terminal")
	wantErr(t, g.q("observe"), "terminal_session", "")
	if r.app.LeaseHolder() != "" {
		t.Error("lease kept")
	}
	events := g.checkTimeline(1)
	types := map[string]int{}
	for _, e := range events {
		types[str(e, "type")]++
	}
	if types["session_started"] != 1 || types["action_settled"] != 4 || types["action_accepted"] != 4 || types["observation_created"] != 3 || types["session_paused"] != 1 || types["session_resumed"] != 1 {
		t.Errorf("event types: %v", types)
	}
	last := events[len(events)-1]
	if str(last, "type") != "lease_released" || sub(last, "details")["released"] != true {
		t.Errorf("last event: %v", last)
	}
	noTokenAnywhere(t, r)
}

func TestAgentLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		kv     []string
		setup  func(r *rig)
		steps  []string // actions on the no-op button ("noop") or increment ("inc")
		last   string   // receipt status of the last step
		code   string
		reason string
	}{
		{"step budget", []string{"maxSteps", "1"}, nil, []string{"inc", "inc"}, "rejected", "step_budget_exhausted", "step_budget_exhausted"},
		{"loop", []string{"maxRepeatedActions", "1", "maxNoProgressSteps", "20"}, nil, []string{"noop", "noop"}, "rejected", "loop_detected", "loop_detected"},
		{"no progress", []string{"maxRepeatedActions", "20", "maxNoProgressSteps", "2"}, nil, []string{"noop", "noop"}, "succeeded", "", "no_progress_loop_detected"},
		{"settle failure", nil, func(r *rig) { r.app.FailSettle(true) }, []string{"inc"}, "failed", "action_failed", "action_failed"},
		{"node gone", nil, func(r *rig) {}, []string{"gone"}, "failed", "action_failed", "action_failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, core.Config{})
			g := startAgent(t, r, tc.kv...)
			if tc.setup != nil {
				tc.setup(r)
			}
			obs := g.currentObs()
			var rec map[string]any
			for _, target := range tc.steps {
				page := sub(obs, "page")
				var n string
				switch target {
				case "inc":
					n = nodeID(page, ":id/increment")
				case "noop":
					n = nodeID(page, ":id/noop")
				case "gone":
					n = "node-99"
				}
				_, rec = g.act(str(obs, "observationId"), "click", "nodeId", n)
				if s := sub(rec, "settledObservation"); s != nil {
					obs = s
				}
			}
			if str(rec, "status") != tc.last || str(rec, "errorCode") != tc.code {
				t.Errorf("last receipt: %v", rec)
			}
			if tc.code == "action_failed" && !strings.Contains("Action execution failed|The device action or settle failed", str(rec, "error")) {
				t.Errorf("failure message: %v", rec)
			}
			s := g.session()
			if str(s, "state") != "failed" || str(s, "terminalReason") != tc.reason || s["leaseHeld"] != false {
				t.Errorf("session: %v", s)
			}
			g.checkTimeline(1)
			noTokenAnywhere(t, r)
		})
	}
}

func TestAgentDeadlines(t *testing.T) {
	t.Parallel()
	t.Run("idle", func(t *testing.T) {
		t.Parallel()
		r := newRigScale(t, core.Config{}, 5)
		g := startAgent(t, r, "idleTimeoutMs", "1000")
		r.eventually("idle expiry", 5*time.Second, func() bool {
			return str(sub(g.get("agent", "type", "start-status", "ownerToken", token), "session"), "state") == "expired"
		})
		s := g.session()
		if str(s, "terminalReason") != "idle_timeout" || s["leaseHeld"] != false {
			t.Errorf("idle: %v", s)
		}
		wantErr(t, r.mutate("agent", "type", "pause", "sessionId", g.sid, "ownerToken", token), "terminal_session", "")
		g.checkTimeline(1)
	})
	t.Run("status keeps alive until max duration", func(t *testing.T) {
		t.Parallel()
		r := newRigScale(t, core.Config{}, 5)
		g := startAgent(t, r, "idleTimeoutMs", "2000", "maxDurationMs", "5000")
		started := num(g.session(), "startedAt")
		for r.clk.Now().UnixMilli()-started < 3500 {
			if s := g.session(); str(s, "state") != "active" {
				t.Fatalf("expired while polled: %v", s)
			}
			r.sleep(300 * time.Millisecond)
		}
		r.eventually("max duration", 5*time.Second, func() bool { return str(g.session(), "state") == "expired" })
		if s := g.session(); str(s, "terminalReason") != "max_duration_exceeded" {
			t.Errorf("max duration: %v", s)
		}
		g.checkTimeline(1)
	})
	t.Run("cancel while acting", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, core.Config{})
		g := startAgent(t, r)
		obs := g.currentObs()
		g.actStep("long-wait", str(obs, "observationId"), "wait", "durationMs", "5000")
		r.eventually("acting", 3*time.Second, func() bool { return str(g.session(), "state") == "acting" })
		wantErr(t, r.mutate("agent", "type", "end", "sessionId", g.sid, "ownerToken", token), "session_busy", "Cancel the session while an action is executing")
		wantErr(t, r.mutate("agent", "type", "pause", "sessionId", g.sid, "ownerToken", token), "session_busy", "The session cannot pause while an action is executing")
		wantErr(t, g.q("observe"), "session_busy", "An action is still executing")
		r.adb("agent", "type", "cancel", "sessionId", g.sid, "ownerToken", token)
		s := g.session()
		if str(s, "state") != "cancelled" || str(s, "terminalReason") != "client_cancel" {
			t.Fatalf("cancel: %v", s)
		}
		r.sleep(8 * time.Second)
		rec := sub(g.q("receipt", "stepId", "long-wait"), "receipt")
		if str(rec, "status") != "accepted" || rec["finishedAt"] != nil {
			t.Errorf("interrupted receipt must stay accepted: %v", rec)
		}
		wantErr(t, r.mutate("agent", "type", "cancel", "sessionId", g.sid, "ownerToken", token), "terminal_session", "")
		g.checkTimeline(1)
	})
}

func TestAgentRootRules(t *testing.T) {
	t.Parallel()
	t.Run("SoloPi in front until the host restores the app", func(t *testing.T) {
		t.Parallel()
		r := newRigScale(t, core.Config{}, 10)
		r.phone.set(func(f *fakePhone) { f.fg = solopiPkg })
		r.adb("agent", "type", "start", "ownerToken", token)
		r.sleep(2 * time.Second)
		if ss := r.get("agent", "type", "start-status", "ownerToken", token); ss["observation"] != nil {
			t.Fatal("observation while SoloPi is in front")
		}
		r.phone.set(func(f *fakePhone) { f.fg = counterPkg })
		r.eventually("observation after restore", 5*time.Second, func() bool {
			return r.get("agent", "type", "start-status", "ownerToken", token)["observation"] != nil
		})
	})
	t.Run("SoloPi stays in front", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, core.Config{})
		r.phone.set(func(f *fakePhone) { f.fg = solopiPkg })
		r.adb("agent", "type", "start", "ownerToken", token)
		var s map[string]any
		r.eventually("initial observation failure", 10*time.Second, func() bool {
			s = sub(r.get("agent", "type", "start-status", "ownerToken", token), "session")
			return s["terminal"] == true
		})
		if str(s, "state") != "failed" || str(s, "terminalReason") != "page_root_unavailable" || s["leaseHeld"] != false {
			t.Errorf("session: %v", s)
		}
	})
	for _, tc := range []struct {
		name  string
		setup func(f *fakePhone)
	}{
		{"ime multi-window", func(f *fakePhone) { f.imeVisible = true }},
		{"narrow window", func(f *fakePhone) { f.narrowApp = true }},
		{"status bar only", func(f *fakePhone) { f.fg = "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, core.Config{})
			g := startAgent(t, r)
			r.phone.set(tc.setup)
			start := r.clk.Now()
			got := g.q("observe")
			if str(got, "errorCode") != "page_root_unavailable" {
				t.Logf("session: %v", g.session())
			}
			wantErr(t, got, "page_root_unavailable", "Controllable foreground page root is unavailable")
			if el := r.clk.Now().Sub(start); el < 5*time.Second {
				t.Errorf("gave up after %v, want ≥ 5 s", el)
			}
			if str(g.session(), "state") != "active" {
				t.Error("observe failure must not end the session")
			}
		})
	}
	t.Run("permissions, screenshots, touch service", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, core.Config{})
		g := startAgent(t, r)
		r.phone.set(func(f *fakePhone) { f.shotErr = errors.New("boom") })
		o := sub(g.q("observe"), "observation")
		if str(o, "screenshotError") != "screen_capture_failed" || o["screenshotPath"] != nil || o["screenshotSha256"] != nil {
			t.Errorf("screenshot failure: %v", o)
		}
		r.phone.set(func(f *fakePhone) { f.shotErr = fmt.Errorf("no plugin: %w", core.ErrCaptureServiceUnavailable) })
		if o := sub(g.q("observe"), "observation"); str(o, "screenshotError") != "screen_capture_service_unavailable" {
			t.Errorf("no capture service: %v", o)
		}
		_ = r.app.SetPermission(core.PermAccessibility, false)
		wantErr(t, g.q("observe"), "observation_permission_required", "ADB and accessibility permissions are required")
		_ = r.app.SetPermission(core.PermAccessibility, true)
		r.adb("agent", "type", "cancel", "sessionId", g.sid, "ownerToken", token)

		r.app.SetTouchServiceAvailable(false)
		wantErr(t, r.mutate("agent", "type", "start", "ownerToken", token), "touch_service_unavailable", "Touch service could not be started")
		s := sub(r.get("agent", "type", "start-status", "ownerToken", token), "session")
		if str(s, "state") != "failed" || str(s, "terminalReason") != "touch_service_unavailable" || s["leaseHeld"] != false || num(s, "generation") != 2 {
			t.Errorf("touch: %v", s)
		}
		if r.app.LeaseHolder() != "" {
			t.Error("lease kept")
		}
	})
}

func TestAgentRestartLosesIdentities(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	g := startAgent(t, r)
	timeline := str(g.q("timeline"), "timelinePath")
	r.app.Restart()
	r.waitReady()
	wantErr(t, g.q("status"), "session_not_found", "")
	wantErr(t, r.get("agent", "type", "start-status", "ownerToken", token), "session_not_found", "")
	if _, err := r.phone.Stat(timeline); err != nil {
		t.Errorf("timeline lost on restart: %v", err)
	}
	if r.app.AgentGeneration() != 0 || r.app.LeaseHolder() != "" {
		t.Error("generation or lease survived")
	}
	g2 := startAgent(t, r)
	if num(g2.session(), "generation") != 1 || g2.sid == g.sid {
		t.Errorf("new session: %v", g2.session())
	}
}

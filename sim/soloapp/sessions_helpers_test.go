package soloapp

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/protocol"
)

// poll queries action until pred holds (device-time bound) and returns the
// last answer; every answer goes through check first.
func (r *rig) poll(what string, device time.Duration, check func(t *testing.T, m map[string]any), pred func(m map[string]any) bool, action string, kv ...string) map[string]any {
	r.t.Helper()
	var last map[string]any
	r.eventually(what, device, func() bool {
		last = r.get(action, kv...)
		if check != nil {
			check(r.t, last)
		}
		return pred(last)
	})
	return last
}

func stateIs(states ...string) func(m map[string]any) bool {
	return func(m map[string]any) bool { return slices.Contains(states, str(m, "state")) }
}

func has(m map[string]any, k string) bool { _, found := m[k]; return found }

func strList(t *testing.T, m map[string]any, k string) []string {
	t.Helper()
	raw, isList := m[k].([]any)
	if !isList {
		t.Errorf("%s is not a list: %v", k, m[k])
		return nil
	}
	out := []string{}
	for _, e := range raw {
		s, isStr := e.(string)
		if !isStr || s == "" {
			t.Errorf("%s has a non-string or empty entry: %v", k, raw)
		}
		if slices.Contains(out, s) {
			t.Errorf("%s has duplicates: %v", k, raw)
		}
		out = append(out, s)
	}
	return out
}

func flagsFor(t *testing.T, m map[string]any, active, terminal []string) {
	t.Helper()
	st := str(m, "state")
	if m["success"] != true {
		t.Errorf("success: %v", m)
	}
	if m["active"] != slices.Contains(active, st) || m["terminal"] != slices.Contains(terminal, st) {
		t.Errorf("active/terminal inconsistent with %s: %v", st, m)
	}
	if st != "idle" && str(m, "sessionId") == "" {
		t.Errorf("non-idle without sessionId: %v", m)
	}
}

var liveStd, termStd = []string{"starting", "recording", "stopping"}, []string{"stopped", "failed"}

// checkRecording applies the host's invariants for a recording snapshot.
func checkRecording(t *testing.T, m map[string]any) {
	t.Helper()
	flagsFor(t, m, liveStd, termStd)
	st := str(m, "state")
	if m["recording"] != (st == "recording") {
		t.Errorf("recording flag: %v", m)
	}
	if st == "idle" {
		for _, k := range []string{"sessionId", "caseName", "caseId", "targetPackage", "startedAt", "finishedAt", "durationMs", "error"} {
			if has(m, k) {
				t.Errorf("idle with %s: %v", k, m)
			}
		}
	} else if !has(m, "caseName") || !has(m, "targetPackage") {
		t.Errorf("non-idle without caseName/targetPackage: %v", m)
	}
	if has(m, "startedAt") != has(m, "durationMs") || (st == "stopped" || st == "failed") != has(m, "finishedAt") ||
		(st == "failed") != has(m, "error") {
		t.Errorf("time/error invariants: %v", m)
	}
	if m["cancelledBeforeStart"] == true && (st != "stopped" || has(m, "startedAt") || has(m, "caseId")) {
		t.Errorf("cancelled invariants: %v", m)
	}
	if st == "stopped" && m["cancelledBeforeStart"] != true && (num(m, "caseId") <= 0 || !has(m, "startedAt")) {
		t.Errorf("stopped without caseId: %v", m)
	}
	if (st == "recording" || st == "stopping") && !has(m, "startedAt") {
		t.Errorf("recording without startedAt: %v", m)
	}
}

var mp4NameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,126}\.mp4$`)

// checkScreen applies the host's invariants for a screen-record snapshot.
func checkScreen(t *testing.T, m map[string]any) {
	t.Helper()
	live := []string{"pending-user-confirmation", "starting", "recording", "stopping"}
	flagsFor(t, m, live, termStd)
	st := str(m, "state")
	pending := st == "pending-user-confirmation"
	if m["recording"] != (st == "recording") || m["userActionRequired"] != pending ||
		has(m, "requiredUserAction") != pending {
		t.Errorf("flags: %v", m)
	}
	if st == "idle" {
		for k := range m {
			if !slices.Contains([]string{"success", "kind", "state", "recording", "active", "terminal", "userActionRequired", "autoStopped", "cancelledBeforeStart"}, k) {
				t.Errorf("idle with %s: %v", k, m)
			}
		}
		return
	}
	if str(m, "resolution") != fmt.Sprintf("%dx%d", num(m, "width"), num(m, "height")) {
		t.Errorf("resolution echo: %v", m)
	}
	if num(m, "requestedAt") <= 0 {
		t.Errorf("requestedAt: %v", m)
	}
	root := str(m, "capturesRoot")
	if !strings.HasPrefix(root, "/") || len(strings.Split(strings.Trim(root, "/"), "/")) < 4 || !strings.HasSuffix(root, "/ScreenCaptures") {
		t.Errorf("capturesRoot: %v", m)
	}
	if out := str(m, "outputPath"); out != "" {
		if !strings.HasPrefix(out, root+"/") || !mp4NameRe.MatchString(strings.TrimPrefix(out, root+"/")) {
			t.Errorf("outputPath: %v", m)
		}
	}
	if has(m, "durationMs") && num(m, "durationMs") != num(m, "finishedAt")-num(m, "startedAt") {
		t.Errorf("durationMs: %v", m)
	}
	if has(m, "startedAt") && num(m, "startedAt") < num(m, "requestedAt") {
		t.Errorf("monotonic: %v", m)
	}
	if (st == "stopped" || st == "failed") != has(m, "finishedAt") || (st == "failed") != has(m, "error") {
		t.Errorf("terminal/error: %v", m)
	}
	if m["cancelledBeforeStart"] == true && (st != "stopped" || has(m, "startedAt") || has(m, "outputPath") || has(m, "fileSize")) {
		t.Errorf("cancelled: %v", m)
	}
	if st == "stopped" && m["cancelledBeforeStart"] != true && (!has(m, "startedAt") || !has(m, "outputPath") || num(m, "fileSize") <= 0) {
		t.Errorf("stopped: %v", m)
	}
	if st == "recording" && (!has(m, "startedAt") || !has(m, "outputPath")) {
		t.Errorf("recording: %v", m)
	}
	if pending && has(m, "outputPath") {
		t.Errorf("pending with output: %v", m)
	}
	if m["autoStopped"] == true && !slices.Contains([]string{"stopping", "stopped", "failed"}, st) {
		t.Errorf("autoStopped: %v", m)
	}
}

// checkScan applies the host's invariants for a scan snapshot.
func checkScan(t *testing.T, m map[string]any) {
	t.Helper()
	live := []string{"starting", "pending-camera-permission", "scanning"}
	flagsFor(t, m, live, []string{"completed", "cancelled", "failed"})
	st := str(m, "state")
	want := map[string]string{"pending-camera-permission": "Grant camera permission on the device", "scanning": "Aim the camera at a supported code"}[st]
	if m["scanning"] != (st == "scanning") || m["userActionRequired"] != (want != "") || str(m, "requiredUserAction") != want {
		t.Errorf("flags: %v", m)
	}
	if m["contentExecuted"] != false {
		t.Errorf("contentExecuted: %v", m)
	}
	if (m["active"] == true && m["manualScanActive"] == true) || (m["manualScanActive"] == true && m["protocolActivityAttached"] == true) {
		t.Errorf("camera ownership: %v", m)
	}
	if st == "idle" {
		for _, k := range []string{"sessionId", "content", "format", "codeType", "requestedAt", "startedAt", "finishedAt", "durationMs", "error"} {
			if has(m, k) {
				t.Errorf("idle with %s: %v", k, m)
			}
		}
		return
	}
	if !protocol.ValidID(str(m, "sessionId"), 128) || num(m, "requestedAt") <= 0 {
		t.Errorf("identity: %v", m)
	}
	if has(m, "startedAt") && num(m, "startedAt") < num(m, "requestedAt") {
		t.Errorf("startedAt < requestedAt: %v", m)
	}
	both := has(m, "startedAt") && has(m, "finishedAt")
	if has(m, "durationMs") != both || (both && num(m, "durationMs") != num(m, "finishedAt")-num(m, "startedAt")) {
		t.Errorf("durationMs: %v", m)
	}
	terminal := st == "completed" || st == "cancelled" || st == "failed"
	if terminal != has(m, "finishedAt") || (st == "failed") != has(m, "error") {
		t.Errorf("terminal/error: %v", m)
	}
	if (st == "scanning" || st == "completed") && !has(m, "startedAt") {
		t.Errorf("scanning without startedAt: %v", m)
	}
	if (st == "starting" || st == "pending-camera-permission") && has(m, "startedAt") {
		t.Errorf("startedAt too early: %v", m)
	}
	if st == "completed" {
		ct, _ := codeTypeOf(str(m, "format"))
		if str(m, "content") == "" || str(m, "codeType") != ct {
			t.Errorf("completed content: %v", m)
		}
	} else if has(m, "content") || has(m, "format") || has(m, "codeType") {
		t.Errorf("content outside completed: %v", m)
	}
}

// checkPerf applies the host's invariants for a performance snapshot.
func checkPerf(t *testing.T, m map[string]any) {
	t.Helper()
	flagsFor(t, m, liveStd, termStd)
	st := str(m, "state")
	if m["recording"] != (st == "recording") {
		t.Errorf("recording flag: %v", m)
	}
	if rt, isBool := m["stopRetryable"].(bool); has(m, "stopRetryable") && (!isBool || (rt && st != "stopping")) {
		t.Errorf("stopRetryable: %v", m)
	}
	if !strings.HasPrefix(str(m, "recordsRoot"), "/sdcard/") || !strings.HasSuffix(str(m, "recordsRoot"), "records") {
		t.Errorf("recordsRoot: %v", m)
	}
}

// checkDisplay applies the host's invariants for a performance display
// snapshot.
func checkDisplay(t *testing.T, m map[string]any) {
	t.Helper()
	flagsFor(t, m, []string{"starting", "running", "stopping"}, termStd)
	st := str(m, "state")
	if m["running"] != (st == "running") {
		t.Errorf("running flag: %v", m)
	}
	if m["stopRetryable"] == true && st != "stopping" {
		t.Errorf("stopRetryable: %v", m)
	}
	items, owned := strList(t, m, "items"), strList(t, m, "ownedDisplayNames")
	strList(t, m, "runningItems")
	values, isObj := m["values"].(map[string]any)
	if !isObj || !has(m, "sampledAt") {
		t.Errorf("values/sampledAt: %v", m)
	}
	for k := range values {
		if !slices.Contains(owned, k) {
			t.Errorf("value %s not owned: %v", k, m)
		}
	}
	if st == "idle" {
		for _, k := range []string{"sessionId", "targetPackage", "startedAt", "finishedAt", "durationMs", "error"} {
			if has(m, k) {
				t.Errorf("idle with %s: %v", k, m)
			}
		}
		if len(items)+len(owned)+len(values) != 0 {
			t.Errorf("idle with content: %v", m)
		}
	}
	if st == "running" && (!has(m, "startedAt") || has(m, "finishedAt")) {
		t.Errorf("running times: %v", m)
	}
	if st == "starting" && (has(m, "startedAt") || has(m, "durationMs")) {
		t.Errorf("starting times: %v", m)
	}
	if (st == "stopped" || st == "failed") && !has(m, "finishedAt") {
		t.Errorf("terminal without finishedAt: %v", m)
	}
	if (st == "failed") != has(m, "error") && st != "stopping" {
		t.Errorf("error: %v", m)
	}
	if has(m, "startedAt") && has(m, "finishedAt") && num(m, "durationMs") != num(m, "finishedAt")-num(m, "startedAt") {
		t.Errorf("durationMs: %v", m)
	}
}

// checkStress applies the host's invariants for a stress snapshot.
func checkStress(t *testing.T, m map[string]any) {
	t.Helper()
	flagsFor(t, m, []string{"starting", "running", "stopping"}, termStd)
	if has(m, "error") {
		if _, isStr := m["error"].(string); !isStr {
			t.Errorf("error: %v", m)
		}
	}
	for _, k := range []string{"cpuCount", "cpuPercent", "memory"} {
		if _, isNum := m[k].(json.Number); !isNum {
			t.Errorf("%s missing: %v", k, m)
		}
	}
	if num(m, "cpuCount") < 0 || num(m, "cpuPercent") > 100 || num(m, "memory") > 2048 || num(m, "durationSec") > 3600 {
		t.Errorf("ranges: %v", m)
	}
	if has(m, "durationMs") || has(m, "running") {
		t.Errorf("stress has no durationMs/running: %v", m)
	}
}

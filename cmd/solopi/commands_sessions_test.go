package main

// CLI tests of the session commands: flags to options, local refusals
// before any device contact, the one JSON object on stdout, exit codes and
// schemas, through a small scripted device (pm path, capabilities, and
// per-action handlers the test writes) reached by a fake transport.

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/sessioncmd"
	"github.com/solopi-dev/solopi/schemas"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/devicefake"
)

// sessCLIFake is a scripted SoloPi: queries go to handlers by action, and
// mutations (decoded from `am start … -d <uri>`) to onMutate.
type sessCLIFake struct {
	*devicefake.Transport
	mu        sync.Mutex
	handlers  map[string]func(q url.Values) map[string]any
	onMutate  func(action string, q url.Values)
	mutations []string
	opened    int
}

func newSessCLIFake(t *testing.T) *sessCLIFake {
	f := &sessCLIFake{handlers: map[string]func(url.Values) map[string]any{}}
	f.Transport = devicefake.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		action := strings.TrimPrefix(r.URL.Path, "/scheme/")
		f.mu.Lock()
		h := f.handlers[action]
		f.mu.Unlock()
		var resp map[string]any
		switch {
		case action == "harness" && r.URL.Query().Get("type") == "apps":
			// SoloPi's app list: the target packages these tests use.
			resp = map[string]any{"success": true, "count": 2, "includesSystemApps": false, "apps": []any{
				map[string]any{"packageName": "com.example.counter", "label": "Counter", "system": false},
				map[string]any{"packageName": "com.x.y", "label": "X", "system": false}}}
		case action == "harness":
			resp = map[string]any{"success": true, "protocolVersion": "2.0", "agentProtocolVersion": "1.0"}
		case h != nil:
			resp = h(r.URL.Query())
		default:
			resp = map[string]any{"success": false, "error": "No Valid Listener"}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	}))
	f.Name = "cli-fake"
	f.OnShell = func(ctx context.Context, cmd string, args []string) (devicefake.Reply, bool) {
		switch {
		case strings.HasPrefix(cmd, "pm path"):
			return devicefake.Reply{Stdout: "package:/data/app/base.apk\n"}, true
		case strings.HasPrefix(cmd, "getconf"):
			return devicefake.Reply{Stdout: "4\n"}, true
		}
		return devicefake.Reply{}, false
	}
	f.Mutate = func(uri string) devicefake.Reply {
		action, q, err := devicefake.ParseScheme(uri)
		if err != nil {
			return devicefake.Reply{Stderr: "Error: bad uri", Code: 1}
		}
		_, raw, _ := strings.Cut(uri, "?")
		f.mu.Lock()
		f.mutations = append(f.mutations, action+"?"+raw)
		hook := f.onMutate
		f.mu.Unlock()
		if hook != nil {
			hook(action, q)
		}
		return devicefake.AmStarted
	}
	return f
}

func (f *sessCLIFake) handle(action string, h func(q url.Values) map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handlers[action] = h
}

// serveSnapshot answers the action's queries with a copy of snap, taken
// under mu after step (when set) has moved it along.
func (f *sessCLIFake) serveSnapshot(action string, mu *sync.Mutex, snap map[string]any, step func()) {
	f.handle(action, func(url.Values) map[string]any {
		mu.Lock()
		defer mu.Unlock()
		if step != nil {
			step()
		}
		return maps.Clone(snap)
	})
}

func (f *sessCLIFake) count(parts ...string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return devicefake.Count(f.mutations, parts...)
}

// runSessionCLI runs one session command against f the way main does and
// returns stdout and the exit code.
func runSessionCLI(t *testing.T, f *sessCLIFake, ctx context.Context, args ...string) ([]byte, int) {
	t.Helper()
	var out, errb bytes.Buffer
	e := cmdutil.Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" },
		Transport: func(ctx context.Context) (device.Transport, error) {
			f.mu.Lock()
			f.opened++
			f.mu.Unlock()
			return f, nil
		}}
	exit := run(ctx, append([]string{"solopi"}, args...), e)
	if exit == 3 && out.Len() == 0 { // a parser error: text on stderr
		return errb.Bytes(), exit
	}
	return out.Bytes(), exit
}

func decodeOut(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("stdout is not one JSON object: %v: %s", err, b)
	}
	return m
}

// recordDevice scripts a recording that starts and stops normally.
func recordDevice(f *sessCLIFake, reachRecording bool) {
	var mu sync.Mutex
	snap := map[string]any{"success": true, "kind": "recording", "state": "idle", "recording": false, "active": false, "terminal": false}
	set := func(state string, extra map[string]any) {
		snap["state"] = state
		snap["recording"] = state == "recording"
		snap["active"] = state == "starting" || state == "recording" || state == "stopping"
		snap["terminal"] = state == "stopped" || state == "failed"
		for k, v := range extra {
			snap[k] = v
		}
	}
	f.serveSnapshot("record", &mu, snap, func() {
		if snap["state"] == "starting" && reachRecording {
			set("recording", map[string]any{"startedAt": 110, "durationMs": 0})
		}
	})
	f.onMutate = func(action string, q url.Values) {
		mu.Lock()
		defer mu.Unlock()
		switch q.Get("recordMode") {
		case "normal":
			set("starting", map[string]any{"sessionId": q.Get("sessionId"), "caseName": q.Get("caseName"), "targetPackage": q.Get("targetApp")})
		case "stop":
			if q.Get("sessionId") != snap["sessionId"] {
				return
			}
			if snap["state"] == "starting" {
				set("stopped", map[string]any{"cancelledBeforeStart": true, "finishedAt": 120})
			} else {
				set("stopped", map[string]any{"caseId": 7, "finishedAt": 130, "durationMs": 20})
			}
		}
	}
}

func TestRecordCommandsEndToEnd(t *testing.T) {
	f := newSessCLIFake(t)
	recordDevice(f, true)
	out, code := runSessionCLI(t, f, context.Background(), "record-start", "--name", "smoke case", "--target-package", "com.example.counter", "--poll-interval", "0.01")
	if code != 0 {
		t.Fatalf("record-start exit %d: %s", code, out)
	}
	schemas.Validate(t, "record-start", out)
	id := decodeOut(t, out)["sessionId"].(string)

	out, code = runSessionCLI(t, f, context.Background(), "record-status", "--session-id", "someone-else")
	if code != 2 {
		t.Fatalf("record-status mismatch exit %d: %s", code, out)
	}
	schemas.Validate(t, "record-status", out)

	out, code = runSessionCLI(t, f, context.Background(), "record-stop", "--session-id", id, "--poll-interval", "0.01")
	if code != 0 {
		t.Fatalf("record-stop exit %d: %s", code, out)
	}
	schemas.Validate(t, "record-stop", out)
	if m := decodeOut(t, out); m["caseId"] != float64(7) || f.count("recordMode=stop", "sessionId="+id) != 1 {
		t.Fatalf("record-stop = %v", m)
	}
}

func TestRecordStartTimeoutPrintsCleanup(t *testing.T) {
	f := newSessCLIFake(t)
	recordDevice(f, false)
	out, code := runSessionCLI(t, f, context.Background(), "record-start", "--name", "c", "--target-package", "com.x.y",
		"--ack-timeout", "0.1", "--poll-interval", "0.01")
	if code != 124 {
		t.Fatalf("exit %d: %s", code, out)
	}
	schemas.Validate(t, "record-start", out)
	m := decodeOut(t, out)
	cl := m["cleanup"].(map[string]any)
	if m["phase"] != "record-start" || cl["success"] != true || cl["cancelledBeforeStart"] != true || f.count("recordMode=stop", "sessionId="+m["sessionId"].(string)) != 1 {
		t.Fatalf("timeout output = %v", m)
	}
}

func TestRecordStartInterruptExits130(t *testing.T) {
	f := newSessCLIFake(t)
	recordDevice(f, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.mu.Lock()
	deviceSide := f.onMutate
	f.onMutate = func(action string, q url.Values) {
		if deviceSide != nil {
			deviceSide(action, q)
		}
		if q.Get("recordMode") == "normal" {
			cancel()
		}
	}
	f.mu.Unlock()
	out, code := runSessionCLI(t, f, ctx, "record-start", "--name", "c", "--target-package", "com.x.y", "--poll-interval", "0.01")
	if code != 130 {
		t.Fatalf("exit %d: %s", code, out)
	}
	schemas.Validate(t, "record-start", out)
	if m := decodeOut(t, out); m["cleanup"].(map[string]any)["success"] != true || m["sessionId"] == nil {
		t.Fatalf("interrupt output = %v", m)
	}
}

func TestSessionCommandsRefuseLocallyBeforeTheDevice(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "exists.mp4")
	os.WriteFile(existing, []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, "plugin.txt"), []byte("x"), 0o644)
	cases := [][]string{
		{"stress-start", "--cpu-count", "2"},
		{"stress-start", "--memory", "0"},
		{"stress-start", "--memory", "4096"},
		{"screen-record-start", "--resolution", "721x480"},
		{"screen-record-stop", "--session-id", "s", "--output", existing},
		{"perf-stop", "--session-id", "s", "--output", dir},
		{"perf-start", "--items", "CPU"},
		{"perf-start", "--global", "--target-package", "com.x.y", "--items", "CPU"},
		{"perf-display-status", "--session-id", "-bad"},
		{"video-analysis-start", "--video-path", "/sdcard/Download/x.mp4", "--action-offset-ms", "1", "--difference-threshold", "0.1"},
		{"video-analysis-start", "--video-path", "/sdcard/solopi/ScreenCaptures/x.mp4", "--action-offset-ms", "1", "--difference-threshold", "2"},
		{"video-analysis-status", "--request-id", "../x"},
		{"plugin-install", "--file", filepath.Join(dir, "plugin.txt")},
		{"plugin-remove", "--id", "plugin-1"},
		{"perf-history-get", "--id", "replay-" + strings.Repeat("a", 64)},
		{"perf-history-list", "--limit", "0"},
		{"record-status", "--session-id", "a b"},
		{"record-start", "--name", " ", "--target-package", "com.x.y"},
	}
	for _, args := range cases {
		f := newSessCLIFake(t)
		out, code := runSessionCLI(t, f, context.Background(), args...)
		if code != 3 || f.opened != 0 {
			t.Errorf("%v: exit %d, device opened %d times: %s", args, code, f.opened, out)
			continue
		}
		schemas.Validate(t, "error", out)
	}
	// A missing required flag is the parser's usage error.
	f := newSessCLIFake(t)
	if _, code := runSessionCLI(t, f, context.Background(), "record-stop"); code != 3 || f.opened != 0 {
		t.Errorf("record-stop without --session-id: exit %d", code)
	}
}

func TestStressStartTimeoutStopsTheLoad(t *testing.T) {
	f := newSessCLIFake(t)
	var mu sync.Mutex
	snap := map[string]any{"success": true, "kind": "stress", "state": "idle", "active": false, "terminal": false, "cpuCount": 0, "cpuPercent": 0, "memory": 0}
	f.serveSnapshot("stress", &mu, snap, nil)
	f.onMutate = func(action string, q url.Values) {
		mu.Lock()
		defer mu.Unlock()
		switch q.Get("action") {
		case "start":
			snap["sessionId"], snap["state"], snap["active"] = q.Get("sessionId"), "starting", true
			snap["cpuCount"], snap["cpuPercent"], snap["memory"] = 2, 30, 64
		case "stop":
			if q.Get("sessionId") == snap["sessionId"] {
				snap["state"], snap["active"], snap["terminal"] = "stopped", false, true
			}
		}
	}
	out, code := runSessionCLI(t, f, context.Background(), "stress-start", "--cpu-count", "2", "--cpu-percent", "30", "--memory", "64",
		"--ack-timeout", "0.1", "--poll-interval", "0.01")
	if code != 124 {
		t.Fatalf("exit %d: %s", code, out)
	}
	schemas.Validate(t, "stress-start", out)
	m := decodeOut(t, out)
	if f.count("action=stop", "sessionId="+m["sessionId"].(string)) != 1 || m["cleanup"].(map[string]any)["terminalState"] != "stopped" {
		t.Fatalf("the load was not stopped: %v", m)
	}
}

func TestPerfAnalyzeCommandIsLocal(t *testing.T) {
	in := t.TempDir()
	os.WriteFile(filepath.Join(in, "CPU_CPU_1_2.csv"), []byte("RecordTime,CPU(%),extra,SimpleTime\n1000,5,,0\n2000,15,,1\n"), 0o644)
	charts := filepath.Join(t.TempDir(), "charts")
	f := newSessCLIFake(t)
	out, code := runSessionCLI(t, f, context.Background(), "perf-analyze", "--input", in, "--output", charts)
	if code != 0 || f.opened != 0 {
		t.Fatalf("exit %d, device opened %d: %s", code, f.opened, out)
	}
	schemas.Validate(t, "perf-analyze", out)
	// The charts directory is an evidence directory: the chart, the
	// analysis and the report showing both.
	var names []string
	files, _ := os.ReadDir(charts)
	for _, f := range files {
		names = append(names, f.Name())
	}
	if len(names) != 3 || !slices.Contains(names, "analysis.json") || !slices.Contains(names, "report.html") {
		t.Fatalf("charts: %v", names)
	}
	if m := decodeOut(t, out); m["report"] != filepath.Join(charts, "report.html") {
		t.Fatalf("report %v (%v)", m["report"], m["reportError"])
	}
	out, code = runSessionCLI(t, f, context.Background(), "perf-analyze", "--input", in, "--output", charts)
	if code != 3 {
		t.Fatalf("existing charts directory: exit %d: %s", code, out)
	}
}

func TestPerfListAndPluginListPassThrough(t *testing.T) {
	f := newSessCLIFake(t)
	f.handle("performance", func(q url.Values) map[string]any {
		return map[string]any{"success": true, "total": 1, "items": []any{map[string]any{"key": "CPU", "name": "CPU", "permissions": []any{"adb"}}}}
	})
	f.handle("plugin", func(q url.Values) map[string]any {
		return map[string]any{"success": true, "plugins": []any{}, "total": 0, "importDirectory": "patch", "importPath": "/storage/emulated/0/solopi/patch",
			"pathAvailable": true, "importFiles": []any{}, "importFilesTruncated": false, "mutationTransport": "adb"}
	})
	for name, args := range map[string][]string{"perf-list": {"perf-list"}, "plugin-list": {"plugin-list"}} {
		out, code := runSessionCLI(t, f, context.Background(), args...)
		if code != 0 {
			t.Fatalf("%s exit %d: %s", name, code, out)
		}
		schemas.Validate(t, name, out)
	}
	// A malformed list is a contract violation (exit 4), never passed on.
	f.handle("plugin", func(q url.Values) map[string]any {
		return map[string]any{"success": true, "plugins": []any{}, "total": 0, "importDirectory": "patch", "importPath": "/tmp/patch",
			"pathAvailable": true, "importFiles": []any{}, "importFilesTruncated": false, "mutationTransport": "adb"}
	})
	if out, code := runSessionCLI(t, f, context.Background(), "plugin-list"); code != 4 {
		t.Fatalf("malformed plugin list: exit %d: %s", code, out)
	}
}

func TestEverySessionCommandHasASchema(t *testing.T) {
	have := map[string]bool{}
	for _, n := range schemas.Names() {
		have[n] = true
	}
	for _, c := range sessioncmd.Commands(cmdutil.Env{}) {
		if !have[c.Name] {
			t.Errorf("command %s has no schemas/%s.schema.json", c.Name, c.Name)
		}
	}
	if n := len(sessioncmd.Commands(cmdutil.Env{})); n != 29 {
		t.Errorf("%d session commands, want 29", n)
	}
}

package sessions

// A scripted fake SoloPi for the session-type tests (record, screen-record,
// scan, video analysis, performance and its display, stress, history,
// plugins): an http.Handler for the query channel served over net.Pipe
// from DialTCP, Shell dispatch that decodes `am start … -d <uri>` into
// mutations, and an in-memory file system for push, pull, stat, rm, test,
// `stat -c %s`, `ls -1a` and sha256sum. Each session advances one step per
// status query, following the plan the test chose, so every transition of
// the device protocol's state machines can be walked deterministically.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/devicefake"
	"github.com/solopi-dev/solopi/solopi/transporttest"
)

const (
	fakeSolopiDir   = "/storage/emulated/0/solopi"
	fakeCaptures    = fakeSolopiDir + "/ScreenCaptures"
	fakeImportPath  = fakeSolopiDir + "/patch"
	fakeRecordsRoot = "/sdcard/solopi/records"
)

type sessFake struct {
	t  *testing.T
	mu sync.Mutex

	*devicefake.Transport

	clock     int64
	mutations []string // "action?query" of every mutation, in order
	// onMutation, when set, sees every mutation as it arrives (tests use
	// it as the event to interrupt on).
	onMutation func(m string)

	// Session snapshots and the steps still to come (one per status poll).
	snaps map[string]map[string]any
	steps map[string][]func(s map[string]any)

	// Plans chosen by the test, per session kind.
	recordPlan, screenPlan, scanPlan, stressPlan, perfPlan, displayPlan string
	perfStopRetries                                                     int  // stops that leave stopping+stopRetryable
	dropStops                                                           bool // stop mutations are rejected invisibly
	stealOnStart                                                        string

	// Video analysis receipts by requestId and the active one.
	analyses       map[string]map[string]any
	analysisActive string
	analysisPolls  int // polls an analysis takes
	pluginMissing  bool

	// History and plugins.
	history       map[string]map[string]any
	histReceipts  map[string]map[string]any
	plugReceipts  map[string]map[string]any
	plugins       []any
	corruptImport bool // the staged archive changes after the push check
	dropImports   bool // imports are rejected invisibly (no receipt ever)
	refuseDials   int  // the next DialTCP calls fail (control service unreachable)
	// afterStart are steps queued right after the next start of a kind,
	// before the plan's own steps.
	afterStart map[string][]func(s map[string]any)
}

func newSessFake(t *testing.T) *sessFake {
	f := &sessFake{t: t, clock: 1700000000000,
		snaps: map[string]map[string]any{}, steps: map[string][]func(map[string]any){},
		analyses: map[string]map[string]any{}, analysisPolls: 2,
		history: map[string]map[string]any{}, histReceipts: map[string]map[string]any{}, plugReceipts: map[string]map[string]any{},
		plugins: []any{}, afterStart: map[string][]func(map[string]any){}}
	for _, k := range []string{"record", "screen", "scan", "stress", "perf", "display"} {
		f.snaps[k] = f.idle(k)
	}
	f.Transport = devicefake.New(t, http.HandlerFunc(f.serveHTTP))
	f.Name = "fake-sessions"
	f.OnShell = f.shell
	f.Mutate = func(uri string) devicefake.Reply {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.mutate(uri)
		return devicefake.AmStarted
	}
	f.BeforeDial = f.refuseDial
	return f
}

func (f *sessFake) device() *device.Device {
	return device.NewDevice(f, device.DeviceOptions{RequestTimeout: 2 * time.Second})
}

// file is a device file's content (nil when missing).
func (f *sessFake) file(p string) []byte { b, _ := f.Files.Get(p); return b }

func (f *sessFake) now() int64 { f.clock += 10; return f.clock }

// idle is each kind's idle snapshot as the device publishes it.
func (f *sessFake) idle(kind string) map[string]any {
	switch kind {
	case "record":
		return map[string]any{"success": true, "kind": "recording", "state": "idle", "recording": false, "active": false, "terminal": false, "cancelledBeforeStart": false}
	case "screen":
		return map[string]any{"success": true, "kind": "screen-recording", "state": "idle", "recording": false, "active": false, "terminal": false,
			"userActionRequired": false, "autoStopped": false, "cancelledBeforeStart": false}
	case "scan":
		return map[string]any{"success": true, "kind": "scan", "state": "idle", "active": false, "terminal": false, "scanning": false,
			"userActionRequired": false, "manualScanActive": false, "protocolActivityAttached": false, "contentExecuted": false}
	case "stress":
		return map[string]any{"success": true, "kind": "stress", "state": "idle", "active": false, "terminal": false,
			"cpuCount": 0, "cpuPercent": 0, "memory": 0, "durationSec": 0}
	case "perf":
		return map[string]any{"success": true, "kind": "performance", "state": "idle", "recording": false, "active": false, "terminal": false,
			"stopRetryable": false, "items": []any{}, "recordsRoot": fakeRecordsRoot, "runningItems": []any{}}
	case "display":
		return map[string]any{"success": true, "kind": "performance-display", "state": "idle", "running": false, "active": false, "terminal": false,
			"stopRetryable": false, "items": []any{}, "ownedDisplayNames": []any{}, "runningItems": []any{}, "values": map[string]any{}}
	}
	panic(kind)
}

// set moves a snapshot to state and fixes the derived flags.
func (f *sessFake) set(kind string, s map[string]any, state string) {
	s["state"] = state
	live := map[string][]string{
		"record": {"starting", "recording", "stopping"}, "perf": {"starting", "recording", "stopping"},
		"display": {"starting", "running", "stopping"}, "stress": {"starting", "running", "stopping"},
		"screen": {"pending-user-confirmation", "starting", "recording", "stopping"},
		"scan":   {"starting", "pending-camera-permission", "scanning"},
	}[kind]
	terminal := map[string][]string{"scan": {"completed", "cancelled", "failed"}}[kind]
	if terminal == nil {
		terminal = []string{"stopped", "failed"}
	}
	has := func(l []string) bool {
		for _, x := range l {
			if x == state {
				return true
			}
		}
		return false
	}
	s["active"] = has(live)
	s["terminal"] = has(terminal)
	switch kind {
	case "record", "perf", "screen":
		s["recording"] = state == "recording"
	case "display":
		s["running"] = state == "running"
	case "scan":
		s["scanning"] = state == "scanning"
		s["userActionRequired"] = state == "pending-camera-permission" || state == "scanning"
		delete(s, "requiredUserAction")
		if state == "pending-camera-permission" {
			s["requiredUserAction"] = ScanActionGrantCamera
		} else if state == "scanning" {
			s["requiredUserAction"] = ScanActionAim
		}
	}
	if kind == "screen" {
		s["userActionRequired"] = state == "pending-user-confirmation"
		delete(s, "requiredUserAction")
		if state == "pending-user-confirmation" {
			s["requiredUserAction"] = RequiredMediaProjectionAction
		}
	}
	if has(terminal) {
		s["finishedAt"] = f.now()
		if st, ok := s["startedAt"].(int64); ok && kind != "stress" {
			s["durationMs"] = s["finishedAt"].(int64) - st
		}
	}
}

func (f *sessFake) then(kind string, fns ...func(s map[string]any)) {
	f.steps[kind] = append(f.steps[kind], fns...)
}

// tick applies the next scripted step of kind (one per status query).
func (f *sessFake) tick(kind string) {
	if q := f.steps[kind]; len(q) > 0 {
		f.steps[kind] = q[1:]
		q[0](f.snaps[kind])
	}
}

func (f *sessFake) to(kind, state string, extra ...func(s map[string]any)) func(s map[string]any) {
	return func(s map[string]any) {
		for _, e := range extra {
			e(s)
		}
		f.set(kind, s, state)
	}
}

// ---- transport ----

// shell answers what the shared transport does not: pm and getconf.
func (f *sessFake) shell(ctx context.Context, cmd string, args []string) (devicefake.Reply, bool) {
	switch {
	case len(args) > 0 && args[0] == "pm":
		return devicefake.Reply{Stdout: "package:/data/app/com.alipay.hulu/base.apk\n"}, true
	case len(args) > 0 && args[0] == "getconf":
		return devicefake.Reply{Stdout: "8\n"}, true
	}
	return devicefake.Reply{}, false
}

// refuseDial fails the next refuseDials dials.
func (f *sessFake) refuseDial() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refuseDials > 0 {
		f.refuseDials--
		return fmt.Errorf("connection refused")
	}
	return nil
}

// ---- query channel ----

func (f *sessFake) serveHTTP(w http.ResponseWriter, r *http.Request) {
	action := strings.TrimPrefix(r.URL.Path, "/scheme/")
	q := r.URL.Query()
	f.mu.Lock()
	resp := f.query(action, q)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	b, err := json.Marshal(resp)
	if err != nil {
		f.t.Errorf("fake: encode: %v", err)
	}
	w.Write(b)
}

func ssCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func ssErrObj(code, msg string) map[string]any {
	return map[string]any{"success": false, "errorCode": code, "error": msg}
}

func (f *sessFake) statusOf(kind string) map[string]any {
	f.tick(kind)
	return ssCopy(f.snaps[kind])
}

func (f *sessFake) query(action string, q url.Values) map[string]any {
	switch action {
	case "harness":
		if q.Get("type") == "capabilities" {
			return map[string]any{"success": true, "protocolVersion": "2.0", "agentProtocolVersion": "1.0"}
		}
		if q.Get("type") == "apps" {
			return map[string]any{"success": true, "count": 1, "includesSystemApps": false, "apps": []any{
				map[string]any{"packageName": "com.example.counter", "label": "Counter", "system": false}}}
		}
	case "record":
		return f.statusOf("record")
	case "screen-record":
		return f.statusOf("screen")
	case "scan":
		return f.statusOf("scan")
	case "stress":
		return f.statusOf("stress")
	case "performance":
		switch q.Get("mode") {
		case "listItems":
			return map[string]any{"success": true, "total": 3, "items": []any{
				map[string]any{"key": "CPU", "name": "CPU", "permissions": []any{"adb"}},
				map[string]any{"key": "FPS", "name": "Frame Rate", "permissions": []any{"adb"}},
				map[string]any{"key": "Memory", "name": "Memory", "permissions": []any{"adb"}},
			}}
		case "status":
			return f.statusOf("perf")
		case "current":
			s := f.statusOf("perf")
			s["sampledAt"] = f.now()
			s["values"] = map[string]any{"CPU": "12.5"}
			return s
		case "display":
			// Every read refreshes the sample time, as the device does.
			f.snaps["display"]["sampledAt"] = f.now()
			return f.statusOf("display")
		}
	case "video-analysis":
		id := q.Get("requestId")
		rc, ok := f.analyses[id]
		if !ok {
			return ssErrObj("analysis_not_found", "Video analysis request was not found")
		}
		if rc["state"] == "analyzing" {
			n := rc["polls"].(int) + 1
			rc["polls"] = n
			if n >= f.analysisPolls {
				rc["state"], rc["terminal"], rc["completedAt"] = "completed", true, f.now()
				rc["visualResponseTimeMs"], rc["measurement"] = int64(412), MeasurementVideoDiff
				f.analysisActive = ""
			}
		}
		out := ssCopy(rc)
		delete(out, "polls")
		return out
	case "history":
		switch q.Get("action") {
		case "listPerformance":
			var recs []any
			for _, r := range f.history {
				recs = append(recs, r)
			}
			if recs == nil {
				recs = []any{}
			}
			return map[string]any{"success": true, "kind": "performance", "records": recs, "total": len(recs), "returned": len(recs), "truncated": false}
		case "getPerformance":
			r, ok := f.history[q.Get("id")]
			if !ok {
				return ssErrObj("record_not_found", "Performance history record was not found")
			}
			out := ssCopy(r)
			out["success"], out["files"], out["filesTruncated"] = true, []any{}, false
			return out
		case "mutationStatus":
			rc, ok := f.histReceipts[q.Get("requestId")]
			if !ok {
				return ssErrObj("receipt_not_found", "Mutation receipt was not found")
			}
			if rc["state"] == "in_progress" {
				rc["state"], rc["success"], rc["deleted"], rc["completedAt"] = "completed", true, true, f.now()
				delete(f.history, rc["id"].(string))
				return map[string]any{"success": true, "requestId": rc["requestId"], "state": "in_progress",
					"mutation": map[string]any{"requestId": rc["requestId"], "kind": "performance", "action": "deletePerformance",
						"id": rc["id"], "state": "in_progress", "success": true, "deleted": false}}
			}
			return map[string]any{"success": true, "requestId": rc["requestId"], "state": rc["state"], "mutation": ssCopy(rc)}
		}
	case "plugin":
		switch q.Get("action") {
		case "list":
			return f.pluginList()
		case "mutationStatus":
			rc, ok := f.plugReceipts[q.Get("requestId")]
			if !ok {
				return ssErrObj("receipt_not_found", "Mutation receipt was not found")
			}
			out := ssCopy(rc)
			if rc["state"] == "in_progress" {
				f.finishPlugin(rc)
			}
			return map[string]any{"success": true, "requestId": rc["requestId"], "state": out["state"], "mutation": out}
		}
	}
	return map[string]any{"success": false, "error": "No Valid Listener"}
}

func ssImportFileID(name string) string {
	sum := sha256.Sum256([]byte("plugin-import\x00" + name))
	return "plugin-import-" + hex.EncodeToString(sum[:])
}

func ssPluginID(name string) string {
	sum := sha256.Sum256([]byte("plugin\x00" + name))
	return "plugin-" + hex.EncodeToString(sum[:])
}

func (f *sessFake) pluginList() map[string]any {
	var files []any
	var names []string
	for _, k := range f.Files.Paths() {
		if path.Dir(k) == fakeImportPath && strings.HasSuffix(k, ".zip") {
			names = append(names, path.Base(k))
		}
	}
	sort.Strings(names)
	for _, n := range names {
		files = append(files, map[string]any{"fileId": ssImportFileID(n), "fileName": n, "sizeBytes": len(f.file(fakeImportPath + "/" + n)),
			"modifiedAt": f.clock, "sha256Required": true})
	}
	if files == nil {
		files = []any{}
	}
	return map[string]any{"success": true, "plugins": f.plugins, "total": len(f.plugins), "importDirectory": "patch",
		"importPath": fakeImportPath, "pathAvailable": true, "importFiles": files, "importFilesTruncated": false, "mutationTransport": "adb"}
}

func (f *sessFake) finishPlugin(rc map[string]any) {
	if rc["action"] == "remove" {
		rc["state"], rc["success"], rc["completedAt"] = "completed_restart_required", true, f.now()
		rc["pluginId"], rc["name"], rc["version"] = rc["subject"], "hulu_demo", 1.0
		rc["removedFromRegistry"], rc["filesRetained"], rc["restartRequired"] = true, true, true
		rc["runtimeEffect"] = "restart_required_for_full_removal"
		return
	}
	name := rc["fileName"].(string)
	data := f.file(fakeImportPath + "/" + name)
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != rc["sha256"] {
		rc["state"], rc["success"], rc["completedAt"] = "failed", false, f.now()
		rc["errorCode"], rc["error"] = "sha256_mismatch", "The import file does not match the requested SHA-256"
		return
	}
	rc["state"], rc["success"], rc["completedAt"] = "completed_restart_required", true, f.now()
	rc["plugin"] = map[string]any{"id": ssPluginID("hulu_demo"), "name": "hulu_demo", "version": 1.0, "status": "installed"}
	rc["sizeBytes"], rc["sourceFileId"], rc["sourceFileRetained"] = len(data), ssImportFileID(name), true
	rc["restartRequired"], rc["activation"] = true, "restart_required_for_full_activation"
}

// ---- mutation channel ----

func (f *sessFake) mutate(uri string) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "solopi" || u.Host != "startaction" {
		f.t.Errorf("fake: bad mutation URI %q", uri)
		return
	}
	action := strings.TrimPrefix(u.Path, "/")
	q := u.Query()
	f.mutations = append(f.mutations, action+"?"+u.RawQuery)
	if f.onMutation != nil {
		f.onMutation(action + "?" + u.RawQuery)
	}
	if q.Has("url") {
		f.t.Errorf("fake: the host sent a url parameter: %s", uri)
	}
	get := q.Get
	switch action {
	case "record":
		f.recordMutation(get("recordMode"), get("sessionId"), q)
	case "screen-record":
		f.screenMutation(get("action"), get("sessionId"), q)
	case "scan":
		f.scanMutation(get("action"), get("sessionId"))
	case "stress":
		f.stressMutation(get("action"), get("sessionId"), q)
	case "performance":
		if get("mode") == "display" {
			f.displayMutation(get("action"), get("sessionId"), q)
		} else {
			f.perfMutation(get("action"), get("sessionId"), q)
		}
	case "video-analysis":
		f.analysisMutation(q)
	case "history":
		if get("action") == "deletePerformance" && get("id") == get("confirmId") {
			f.histReceipts[get("requestId")] = map[string]any{"requestId": get("requestId"), "kind": "performance", "action": "deletePerformance",
				"id": get("id"), "state": "in_progress", "success": true, "deleted": false, "deletedFiles": 0, "requestedAt": f.now()}
		}
	case "plugin":
		f.pluginMutation(q)
	default:
		f.t.Errorf("fake: unexpected mutation %s", uri)
	}
}

// begin replaces a snapshot with a fresh session, unless one is active
// (then the start is rejected invisibly, as on the device).
func (f *sessFake) begin(kind, id, state string, fields map[string]any) map[string]any {
	cur := f.snaps[kind]
	if cur["active"] == true {
		return nil
	}
	s := f.idle(kind)
	s["sessionId"] = id
	for k, v := range fields {
		s[k] = v
	}
	f.set(kind, s, state)
	delete(s, "finishedAt")
	f.snaps[kind] = s
	f.steps[kind] = f.afterStart[kind]
	delete(f.afterStart, kind)
	if f.stealOnStart == kind {
		// Another client's session takes the slot right after ours.
		f.then(kind, func(s map[string]any) {
			o := ssCopy(s)
			o["sessionId"] = "another-client-session"
			f.snaps[kind] = o
		})
	}
	return s
}

func (f *sessFake) stopAllowed(kind, id string) bool {
	return !f.dropStops && f.snaps[kind]["sessionId"] == id
}

func (f *sessFake) recordMutation(mode, id string, q url.Values) {
	switch mode {
	case "normal":
		s := f.begin("record", id, "starting", map[string]any{"caseName": q.Get("caseName"), "targetPackage": q.Get("targetApp")})
		if s == nil {
			return
		}
		switch f.recordPlan {
		case "fail":
			f.then("record", f.to("record", "failed", func(s map[string]any) { s["error"] = "Recording environment preparation failed" }))
		case "hang":
		default:
			f.then("record", f.to("record", "recording", func(s map[string]any) { s["startedAt"] = f.now(); s["durationMs"] = int64(0) }))
		}
	case "stop":
		if !f.stopAllowed("record", id) {
			return
		}
		s := f.snaps["record"]
		f.steps["record"] = nil
		switch s["state"] {
		case "starting":
			s["cancelledBeforeStart"] = true
			f.set("record", s, "stopped")
		case "recording":
			f.set("record", s, "stopping")
			f.then("record", f.to("record", "stopped", func(s map[string]any) { s["caseId"] = int64(42) }))
		}
	}
}

func (f *sessFake) screenMutation(act, id string, q url.Values) {
	switch act {
	case "start":
		s := f.begin("screen", id, "pending-user-confirmation", map[string]any{"resolution": q.Get("resolution"), "width": 720, "height": 480,
			"bitrateKbps": 2500, "frameRate": 30, "durationSec": 300, "requestedAt": f.now(), "capturesRoot": fakeCaptures})
		if s == nil {
			return
		}
		switch f.screenPlan {
		case "pending":
		case "deny":
			f.then("screen", f.to("screen", "failed", func(s map[string]any) { s["error"] = "MediaProjection permission was not granted: denied" }))
		default:
			f.then("screen", f.to("screen", "starting"), f.to("screen", "recording", func(s map[string]any) {
				s["startedAt"] = f.now()
				s["durationMs"] = int64(0) // live: now - startedAt
				s["outputPath"] = fakeCaptures + "/Screen-20260101-120000-720x480.mp4"
			}))
		}
	case "stop":
		if !f.stopAllowed("screen", id) {
			return
		}
		s := f.snaps["screen"]
		f.steps["screen"] = nil
		switch s["state"] {
		case "pending-user-confirmation":
			s["cancelledBeforeStart"] = true
			f.set("screen", s, "stopped")
		case "starting":
			s["cancelledBeforeStart"] = true
			f.set("screen", s, "stopping")
			f.then("screen", f.to("screen", "stopped"))
		case "recording":
			f.set("screen", s, "stopping")
			f.then("screen", f.to("screen", "stopped", func(s map[string]any) {
				data := bytes.Repeat([]byte("mp4-frame-"), 100)
				f.Files.Put(s["outputPath"].(string), data)
				s["fileSize"] = int64(len(data))
			}))
		}
	}
}

func (f *sessFake) scanMutation(act, id string) {
	switch act {
	case "start":
		if f.snaps["scan"]["manualScanActive"] == true {
			return
		}
		s := f.begin("scan", id, "starting", map[string]any{"requestedAt": f.now(), "protocolActivityAttached": true})
		if s == nil {
			return
		}
		switch f.scanPlan {
		case "permission":
			f.then("scan", f.to("scan", "pending-camera-permission"))
		case "complete":
			f.then("scan", f.to("scan", "scanning", func(s map[string]any) { s["startedAt"] = f.now() }),
				f.to("scan", "completed", func(s map[string]any) {
					s["content"], s["format"], s["codeType"], s["protocolActivityAttached"] = "https://example.com/x", "QR_CODE", "QR CODE", false
				}), func(s map[string]any) { s["durationMs"] = s["finishedAt"].(int64) - s["startedAt"].(int64) })
		case "fail":
			f.then("scan", f.to("scan", "failed", func(s map[string]any) {
				s["error"], s["protocolActivityAttached"] = "Camera permission was denied", false
			}))
		case "hang":
		default:
			f.then("scan", f.to("scan", "scanning", func(s map[string]any) { s["startedAt"] = f.now() }))
		}
	case "cancel":
		if !f.stopAllowed("scan", id) {
			return
		}
		s := f.snaps["scan"]
		if s["active"] != true {
			return
		}
		f.steps["scan"] = nil
		s["protocolActivityAttached"] = false
		f.set("scan", s, "cancelled")
		if st, ok := s["startedAt"].(int64); ok {
			s["durationMs"] = s["finishedAt"].(int64) - st
		}
	}
}

func (f *sessFake) stressMutation(act, id string, q url.Values) {
	switch act {
	case "start":
		atoi := func(k string) int { var n int; fmt.Sscan(q.Get(k), &n); return n }
		s := f.begin("stress", id, "starting", map[string]any{"cpuCount": atoi("cpuCount"), "cpuPercent": atoi("cpuPercent"),
			"memory": atoi("memory"), "durationSec": atoi("durationSec")})
		if s == nil {
			return
		}
		switch f.stressPlan {
		case "fail":
			f.then("stress", f.to("stress", "failed", func(s map[string]any) { s["error"] = "Stress load was not applied" }))
		case "hang":
		case "autostop":
			f.then("stress", f.to("stress", "running", func(s map[string]any) { s["startedAt"] = f.now() }),
				f.to("stress", "stopping"), f.to("stress", "stopped"))
		default:
			f.then("stress", f.to("stress", "running", func(s map[string]any) { s["startedAt"] = f.now(); s["activeCpuCount"] = s["cpuCount"] }))
		}
	case "stop":
		if !f.stopAllowed("stress", id) {
			return
		}
		s := f.snaps["stress"]
		switch s["state"] {
		case "starting":
			f.steps["stress"] = nil
			f.set("stress", s, "stopped")
		case "running":
			f.steps["stress"] = nil
			f.set("stress", s, "stopping")
			f.then("stress", f.to("stress", "stopped"))
		}
	}
}

func (f *sessFake) perfMutation(act, id string, q url.Values) {
	switch act {
	case "start":
		if f.snaps["display"]["active"] == true {
			return
		}
		items := []any{}
		for _, it := range strings.Split(q.Get("items"), ",") {
			items = append(items, it)
		}
		s := f.begin("perf", id, "starting", map[string]any{"targetPackage": q.Get("targetApp"), "items": items})
		if s == nil {
			return
		}
		switch f.perfPlan {
		case "fail":
			f.then("perf", f.to("perf", "failed", func(s map[string]any) { s["error"] = "Performance permissions are not ready: adb" }))
		case "hang":
		default:
			f.then("perf", f.to("perf", "recording", func(s map[string]any) {
				s["startedAt"] = f.now()
				s["runningItems"] = []any{"CPU", "Frame Rate"}
			}))
		}
	case "stop":
		if !f.stopAllowed("perf", id) {
			return
		}
		s := f.snaps["perf"]
		switch {
		case s["state"] == "starting":
			f.steps["perf"] = nil
			f.set("perf", s, "stopping")
			f.then("perf", f.to("perf", "failed", func(s map[string]any) { s["error"] = "Performance start was cancelled before recording" }))
		case s["state"] == "recording" || (s["state"] == "stopping" && s["stopRetryable"] == true):
			f.steps["perf"] = nil
			f.set("perf", s, "stopping")
			s["runningItems"] = []any{}
			if f.perfStopRetries > 0 {
				f.perfStopRetries--
				s["stopRetryable"] = true
				s["error"] = "Performance cleanup is incomplete; retry stop with the same sessionId: CPU"
				return
			}
			s["stopRetryable"] = false
			delete(s, "error")
			f.then("perf", f.to("perf", "stopped", func(s map[string]any) {
				out := fakeRecordsRoot + "/performance-" + id
				s["outputPath"] = out
				dir := devicefake.Canon(out)
				f.Files.Put(dir+"/帧率_FPS_0123456789abcdef_1700000000000_1700000003000.csv", []byte(
					"RecordTime,帧率(帧),extra,SimpleTime\n1700000000000,58,,0\n1700000001000,24,,1\n1700000002000,60,,2\n"))
				f.Files.Put(dir+"/全局占用_CPU_fedcba9876543210_1700000000000_1700000003000.csv", []byte(
					"RecordTime,全局占用(%),extra,SimpleTime\n1700000000000,12.5,,0\n1700000001000,40,,1\n"))
			}))
		}
	}
}

func (f *sessFake) displayMutation(act, id string, q url.Values) {
	switch act {
	case "start":
		if f.snaps["perf"]["active"] == true {
			return
		}
		items := []any{}
		for _, it := range strings.Split(q.Get("items"), ",") {
			items = append(items, it)
		}
		target := q.Get("targetApp")
		s := f.begin("display", id, "starting", map[string]any{"targetPackage": target, "items": items, "sampledAt": f.now()})
		if s == nil {
			return
		}
		switch f.displayPlan {
		case "wrong-items":
			f.then("display", f.to("display", "running", func(s map[string]any) {
				s["startedAt"], s["items"] = f.now(), []any{"Memory"}
			}))
		case "fail":
			f.then("display", f.to("display", "failed", func(s map[string]any) { s["error"] = "Another performance session is already running" }))
		default:
			f.then("display", f.to("display", "running", func(s map[string]any) {
				s["startedAt"], s["ownedDisplayNames"], s["values"] = f.now(), []any{"CPU"}, map[string]any{"CPU": "7.5"}
			}))
		}
	case "stop":
		if !f.stopAllowed("display", id) {
			return
		}
		s := f.snaps["display"]
		if s["state"] == "running" {
			f.steps["display"] = nil
			f.set("display", s, "stopping")
			f.then("display", f.to("display", "stopped", func(s map[string]any) {
				s["ownedDisplayNames"], s["values"] = []any{}, map[string]any{}
			}))
		}
	}
}

func (f *sessFake) analysisMutation(q url.Values) {
	id := q.Get("requestId")
	if _, ok := f.analyses[id]; ok {
		return
	}
	store := func(code, msg string) {
		f.analyses[id] = map[string]any{"success": false, "errorCode": code, "error": msg, "requestId": id}
	}
	vp := q.Get("videoPath")
	data, ok := f.Files.Get(vp)
	switch {
	case !ok || len(data) == 0 || path.Dir(devicefake.Canon(vp)) != fakeCaptures:
		store("invalid_parameter", "videoPath must be a non-empty direct MP4 child of capturesRoot")
	case f.pluginMissing:
		store("plugin_missing", "Screen recording analyzer plugin is not installed")
	case f.analysisActive != "":
		store("analysis_busy", "Another video analysis is already active")
		f.analyses[id]["activeRequestId"] = f.analysisActive
	default:
		var off int64
		var thr float64
		fmt.Sscan(q.Get("actionOffsetMs"), &off)
		fmt.Sscan(q.Get("differenceThreshold"), &thr)
		f.analyses[id] = map[string]any{"success": true, "requestId": id, "state": "analyzing", "terminal": false,
			"videoFileName": path.Base(vp), "videoPath": vp, "sizeBytes": len(data), "actionOffsetMs": off,
			"differenceThreshold": thr, "startedAt": f.now(), "polls": 0}
		f.analysisActive = id
	}
}

func (f *sessFake) pluginMutation(q url.Values) {
	id := q.Get("requestId")
	if _, ok := f.plugReceipts[id]; ok {
		return
	}
	switch q.Get("action") {
	case "import":
		var name string
		for _, k := range f.Files.Paths() {
			if path.Dir(k) == fakeImportPath && ssImportFileID(path.Base(k)) == q.Get("fileId") {
				name = path.Base(k)
			}
		}
		if name == "" || f.dropImports {
			return // import_file_not_found, mutation_busy, ... are invisible
		}
		if f.corruptImport {
			f.Files.Append(fakeImportPath+"/"+name, []byte{'x'})
		}
		f.plugReceipts[id] = map[string]any{"success": true, "accepted": true, "requestId": id, "action": "import",
			"subject": q.Get("fileId") + ":" + strings.ToLower(q.Get("sha256")), "state": "in_progress", "requestedAt": f.now(),
			"sha256": strings.ToLower(q.Get("sha256")), "fileName": name}
	case "remove":
		if q.Get("pluginId") != q.Get("confirmId") {
			return
		}
		f.plugReceipts[id] = map[string]any{"success": true, "accepted": true, "requestId": id, "action": "remove",
			"subject": q.Get("pluginId"), "state": "in_progress", "requestedAt": f.now()}
	}
}

// mutationCount counts mutations whose "action?query" contains all parts.
func (f *sessFake) mutationCount(parts ...string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return devicefake.Count(f.mutations, parts...)
}

// The fake passes the transport conformance suite: everything but its
// scripted session resolvers is the simulated phone.
func TestSessFakeConformance(t *testing.T) {
	transporttest.Run(t, func(t *testing.T) transporttest.Fixture {
		return transporttest.Fixture{Transport: newSessFake(t), HTTPPort: protocol.DefaultDevicePort, Scratch: "/data/local/tmp"}
	})
}

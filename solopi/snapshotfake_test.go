package solopi

// A scripted fake SoloPi for the session-type tests (record, screen-record,
// scan, video analysis, performance and its display, stress, history,
// plugins): an http.Handler for the query channel served over net.Pipe
// from DialTCP, Shell dispatch that decodes `am start … -d <uri>` into
// mutations, and an in-memory file system for push, pull, stat, rm, test,
// `stat -c %s`, `ls -1a` and sha256sum. Each session advances one step per
// status query, following the plan the test chose, so every transition of
// the wire contract's state machines can be walked deterministically.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
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

	clock     int64
	files     map[string][]byte
	mutations []string // "action?query" of every mutation, in order
	shellLog  []string

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

	ln  *ssPipeListener
	srv *http.Server
}

func newSessFake(t *testing.T) *sessFake {
	f := &sessFake{t: t, clock: 1700000000000, files: map[string][]byte{},
		snaps: map[string]map[string]any{}, steps: map[string][]func(map[string]any){},
		analyses: map[string]map[string]any{}, analysisPolls: 2,
		history: map[string]map[string]any{}, histReceipts: map[string]map[string]any{}, plugReceipts: map[string]map[string]any{},
		plugins: []any{}, afterStart: map[string][]func(map[string]any){}}
	for _, k := range []string{"record", "screen", "scan", "stress", "perf", "display"} {
		f.snaps[k] = f.idle(k)
	}
	f.ln = &ssPipeListener{ch: make(chan net.Conn), done: make(chan struct{})}
	f.srv = &http.Server{Handler: http.HandlerFunc(f.serveHTTP)}
	go f.srv.Serve(f.ln)
	t.Cleanup(func() { f.srv.Close() })
	return f
}

func (f *sessFake) device() *Device {
	return NewDevice(f, DeviceOptions{RequestTimeout: 2 * time.Second})
}

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

func (f *sessFake) Serial() string { return "fake-sessions" }

func (f *sessFake) DialTCP(ctx context.Context, port int) (net.Conn, error) {
	if port != 23342 {
		return nil, fmt.Errorf("connection refused on port %d", port)
	}
	f.mu.Lock()
	if f.refuseDials > 0 {
		f.refuseDials--
		f.mu.Unlock()
		return nil, fmt.Errorf("connection refused")
	}
	f.mu.Unlock()
	client, server := net.Pipe()
	select {
	case f.ln.ch <- server:
		return client, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (f *sessFake) Exec(ctx context.Context, cmd string) ([]byte, error) {
	return nil, fmt.Errorf("exec %q not scripted", cmd)
}

func (f *sessFake) Push(ctx context.Context, r io.Reader, remote string, mode fs.FileMode, mtime time.Time) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files[remote] = b
	return nil
}

func (f *sessFake) Pull(ctx context.Context, remote string, w io.Writer) error {
	f.mu.Lock()
	b, ok := f.files[f.canon(remote)]
	f.mu.Unlock()
	if !ok {
		return fmt.Errorf("pull %s: %w", remote, fs.ErrNotExist)
	}
	_, err := w.Write(b)
	return err
}

type ssFileInfo struct {
	name string
	size int64
	dir  bool
}

func (i ssFileInfo) Name() string { return i.name }
func (i ssFileInfo) Size() int64  { return i.size }
func (i ssFileInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i ssFileInfo) ModTime() time.Time { return time.Unix(1700000000, 0) }
func (i ssFileInfo) IsDir() bool        { return i.dir }
func (i ssFileInfo) Sys() any           { return nil }

func (f *sessFake) Stat(ctx context.Context, remote string) (fs.FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.canon(remote)
	if b, ok := f.files[p]; ok {
		return ssFileInfo{name: path.Base(p), size: int64(len(b))}, nil
	}
	for k := range f.files {
		if strings.HasPrefix(k, p+"/") {
			return ssFileInfo{name: path.Base(p), dir: true}, nil
		}
	}
	return nil, fmt.Errorf("stat %s: %w", remote, fs.ErrNotExist)
}

// canon maps the /sdcard shell form onto the canonical storage path.
func (f *sessFake) canon(p string) string {
	if rest, ok := strings.CutPrefix(p, "/sdcard/"); ok {
		return "/storage/emulated/0/" + rest
	}
	return p
}

// ssShlex splits a ShellJoin'ed command line.
func ssShlex(s string) []string {
	var out []string
	var cur strings.Builder
	inQ, any := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQ && c == '\'':
			inQ = false
		case inQ:
			cur.WriteByte(c)
		case c == '\'':
			inQ, any = true, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			any = true
		case c == ' ':
			if any || cur.Len() > 0 {
				out = append(out, cur.String())
			}
			cur.Reset()
			any = false
		default:
			cur.WriteByte(c)
			any = true
		}
	}
	if any || cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

func (f *sessFake) Shell(ctx context.Context, cmd string) ([]byte, []byte, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shellLog = append(f.shellLog, cmd)
	args := ssShlex(cmd)
	if len(args) == 0 {
		return nil, nil, 0, nil
	}
	switch args[0] {
	case "am":
		for i := 0; i+1 < len(args); i++ {
			if args[i] == "-d" {
				f.mutate(args[i+1])
				return []byte("Starting: Intent { act=android.intent.action.VIEW }\nStatus: ok\nComplete\n"), nil, 0, nil
			}
		}
		return nil, []byte("Error: no -d"), 1, nil
	case "pm":
		return []byte("package:/data/app/com.alipay.hulu/base.apk\n"), nil, 0, nil
	case "sha256sum":
		b, ok := f.files[f.canon(args[1])]
		if !ok {
			return nil, []byte("sha256sum: " + args[1] + ": No such file or directory\n"), 1, nil
		}
		sum := sha256.Sum256(b)
		return []byte(hex.EncodeToString(sum[:]) + "  " + args[1] + "\n"), nil, 0, nil
	case "test":
		switch {
		case len(args) == 3 && args[1] == "-f":
			_, ok := f.files[f.canon(args[2])]
			return nil, nil, ssBoolCode(ok), nil
		case len(args) == 3 && args[1] == "-e":
			_, ok := f.files[f.canon(args[2])]
			return nil, nil, ssBoolCode(ok), nil
		case len(args) == 4 && args[1] == "!" && args[2] == "-e":
			_, ok := f.files[f.canon(args[3])]
			return nil, nil, ssBoolCode(!ok), nil
		}
	case "stat":
		if len(args) == 4 && args[1] == "-c" && args[2] == "%s" {
			b, ok := f.files[f.canon(args[3])]
			if !ok {
				return nil, []byte("stat: No such file"), 1, nil
			}
			return []byte(fmt.Sprintf("%d\n", len(b))), nil, 0, nil
		}
	case "rm":
		if len(args) == 4 && args[1] == "-f" && args[2] == "--" {
			delete(f.files, f.canon(args[3]))
			return nil, nil, 0, nil
		}
	case "getconf":
		return []byte("8\n"), nil, 0, nil
	case "ls":
		dir := f.canon(args[len(args)-1])
		var names []string
		for k := range f.files {
			if path.Dir(k) == dir {
				names = append(names, path.Base(k))
			}
		}
		sort.Strings(names)
		return []byte(".\n..\n" + strings.Join(names, "\n") + "\n"), nil, 0, nil
	}
	return nil, []byte("unscripted: " + cmd), 127, nil
}

func ssBoolCode(ok bool) int {
	if ok {
		return 0
	}
	return 1
}

type ssPipeListener struct {
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func (l *ssPipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}
func (l *ssPipeListener) Close() error { l.once.Do(func() { close(l.done) }); return nil }
func (l *ssPipeListener) Addr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 23342}
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
	for k := range f.files {
		if path.Dir(k) == fakeImportPath && strings.HasSuffix(k, ".zip") {
			names = append(names, path.Base(k))
		}
	}
	sort.Strings(names)
	for _, n := range names {
		files = append(files, map[string]any{"fileId": ssImportFileID(n), "fileName": n, "sizeBytes": len(f.files[fakeImportPath+"/"+n]),
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
	data := f.files[fakeImportPath+"/"+name]
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
				f.files[s["outputPath"].(string)] = data
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
				dir := f.canon(out)
				f.files[dir+"/帧率_FPS_0123456789abcdef_1700000000000_1700000003000.csv"] = []byte(
					"RecordTime,帧率(帧),extra,SimpleTime\n1700000000000,58,,0\n1700000001000,24,,1\n1700000002000,60,,2\n")
				f.files[dir+"/全局占用_CPU_fedcba9876543210_1700000000000_1700000003000.csv"] = []byte(
					"RecordTime,全局占用(%),extra,SimpleTime\n1700000000000,12.5,,0\n1700000001000,40,,1\n")
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
	data, ok := f.files[f.canon(vp)]
	switch {
	case !ok || len(data) == 0 || path.Dir(f.canon(vp)) != fakeCaptures:
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
		for k := range f.files {
			if path.Dir(k) == fakeImportPath && ssImportFileID(path.Base(k)) == q.Get("fileId") {
				name = path.Base(k)
			}
		}
		if name == "" || f.dropImports {
			return // import_file_not_found, mutation_busy, ... are invisible
		}
		if f.corruptImport {
			f.files[fakeImportPath+"/"+name] = append(f.files[fakeImportPath+"/"+name], 'x')
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
	n := 0
	for _, m := range f.mutations {
		ok := true
		for _, p := range parts {
			if !strings.Contains(m, p) {
				ok = false
			}
		}
		if ok {
			n++
		}
	}
	return n
}

package main

// A scripted fake SoloPi for the replay, case and history command tests
// (the same device rules as solopi/replayfake_test.go, which the solopi
// package's tests use; test files cannot be shared across packages): an
// http.Handler for the query channel (served over net.Pipe from DialTCP)
// and Shell dispatch of `am start ... -d <uri>` for the mutation channel,
// with the device-side rules of the wire contract that these flows rely on
// (receipt slots, the replay single slot, exact-runId cancel, invisible
// rejections).

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"regexp"

	"solopi/casefile"
	"solopi/solopi"
)

// Replay plans: what the fake does with a replay of a case.
const (
	rplanPass      = "pass"
	rplanFail      = "fail"
	rplanHang      = "hang"       // stays running until cancelled
	rplanEmpty     = "empty"      // passed with results:[]
	rplanInvisible = "invisible"  // invisible rejection: nothing published
	rplanSteal     = "steal"      // another client's same-name run wins
	rplanIgnoreCxl = "ignore-cxl" // cancel accepted but never completes
)

type replayFake struct {
	t   *testing.T
	pkg string

	mu        sync.Mutex
	cases     map[string]*casefile.CaseSnapshot
	nextID    int64
	autoStart bool
	perms     map[string]any
	plugins   []any
	plan      map[string]string // case name -> plan (default pass)
	runPolls  int               // status polls a running run takes to finish
	status    map[string]any
	runSeq    int
	polls     int // status polls of the current run
	files     map[string][]byte
	shellLog  []string
	mutations []string // decoded scheme URIs

	importReceipt map[string]any
	dropImports   bool // case-import is rejected invisibly (no receipt)
	deleteReceipt map[string]any
	history       map[string]map[string]any // id -> record summary
	histReceipts  map[string]map[string]any
	histPending   int // mutationStatus polls that still say in_progress

	// onStatus runs on every status query with the lock held.
	onStatus func(f *replayFake)

	ln  *replayPipeListener
	srv *http.Server
}

func newReplayFake(t *testing.T) *replayFake {
	f := &replayFake{
		t: t, pkg: "com.alipay.hulu", cases: map[string]*casefile.CaseSnapshot{}, nextID: 7,
		autoStart: false, plan: map[string]string{}, runPolls: 2,
		perms:  map[string]any{"adb": true, "float": true, "background": true, "powerSave": true, "accessibility": true},
		status: map[string]any{"success": true, "state": "idle", "active": false, "terminal": false, "results": []any{}},
		files:  map[string][]byte{}, history: map[string]map[string]any{}, histReceipts: map[string]map[string]any{},
		plugins: []any{},
	}
	f.ln = &replayPipeListener{ch: make(chan net.Conn), done: make(chan struct{})}
	f.srv = &http.Server{Handler: http.HandlerFunc(f.serveHTTP)}
	go f.srv.Serve(f.ln)
	t.Cleanup(func() { f.srv.Close() })
	return f
}

func (f *replayFake) device() *solopi.Device {
	return solopi.NewDevice(f, solopi.DeviceOptions{RequestTimeout: 2 * time.Second})
}

// addCase stores a case as the device would after an import.
func (f *replayFake) addCase(name string, stepsJSON string) *casefile.CaseSnapshot {
	f.t.Helper()
	src := `{"caseName":` + rfJSONString(name) + `,"targetAppPackage":"com.example.counter","operationLog":{"steps":` + stepsJSON + `}}`
	c, err := casefile.Parse([]byte(src))
	if err != nil {
		f.t.Fatalf("parse case: %v", err)
	}
	n, _, err := casefile.Normalize(c, casefile.NormalizeOptions{SkipPolicy: true})
	if err != nil {
		f.t.Fatalf("normalize case: %v", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	stored := casefile.ApplyDeviceImportDefaults(n, f.nextID, 1700000000000)
	snap, err := casefile.Snapshot(stored, casefile.DefaultSeed)
	if err != nil {
		f.t.Fatalf("snapshot: %v", err)
	}
	f.cases[name] = &snap
	return &snap
}

const rfTwoSteps = `[{"operationMethod":{"actionEnum":"SLEEP","operationParam":{"text":"100"}}},
 {"operationMethod":{"actionEnum":"CLICK","operationParam":{}},"operationNode":{"resourceId":"com.example.counter:id/increment_button"}}]`

func rfJSONString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// ---- Transport ----

func (f *replayFake) Serial() string { return "fake-1" }

func (f *replayFake) Shell(ctx context.Context, cmd string) ([]byte, []byte, int, error) {
	if ctx.Err() != nil {
		return nil, nil, -1, ctx.Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shellLog = append(f.shellLog, cmd)
	const am = "am start -W -n "
	switch {
	case strings.HasPrefix(cmd, am):
		i := strings.Index(cmd, " -d ")
		if i < 0 {
			return nil, []byte("Error: no data"), 1, nil
		}
		raw := strings.Trim(cmd[i+4:], "'")
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "solopi" || u.Host != "startaction" {
			return nil, []byte("Error: bad uri"), 1, nil
		}
		q, err := url.ParseQuery(u.RawQuery)
		if err != nil {
			return nil, []byte("Error: bad query"), 1, nil
		}
		f.mutations = append(f.mutations, raw)
		f.mutate(strings.TrimPrefix(u.Path, "/"), q)
		return []byte("Starting: Intent { act=android.intent.action.VIEW }\nStatus: ok\n"), nil, 0, nil
	case strings.HasPrefix(cmd, "pm path "):
		return []byte("package:/data/app/com.alipay.hulu/base.apk\n"), nil, 0, nil
	case strings.HasPrefix(cmd, "mkdir -p "):
		return nil, nil, 0, nil
	case strings.HasPrefix(cmd, "rm -f -- "):
		delete(f.files, rfUnquote(strings.TrimPrefix(cmd, "rm -f -- ")))
		return nil, nil, 0, nil
	case strings.HasPrefix(cmd, "test '!' -e "):
		if _, ok := f.files[rfUnquote(strings.TrimPrefix(cmd, "test '!' -e "))]; ok {
			return nil, nil, 1, nil
		}
		return nil, nil, 0, nil
	case strings.HasPrefix(cmd, "sha256sum "):
		p := rfUnquote(strings.TrimPrefix(cmd, "sha256sum "))
		b, ok := f.files[p]
		if !ok {
			return nil, []byte("sha256sum: " + p + ": No such file or directory"), 1, nil
		}
		s := sha256.Sum256(b)
		return []byte(hex.EncodeToString(s[:]) + "  " + p + "\n"), nil, 0, nil
	case strings.HasPrefix(cmd, "logcat "):
		return []byte("11-30 02:00:00.000  100  100 I SoloPi  : replay log line\n"), nil, 0, nil
	}
	return nil, []byte("sh: unknown command"), 127, nil
}

func rfUnquote(s string) string { return strings.Trim(strings.TrimSpace(s), "'") }

var rfPNG = append([]byte("\x89PNG\r\n\x1a\n"), []byte("fake-image-data")...)

func (f *replayFake) Exec(ctx context.Context, cmd string) ([]byte, error) {
	if cmd == "screencap -p" {
		return rfPNG, nil
	}
	return nil, fmt.Errorf("exec %q not supported", cmd)
}

func (f *replayFake) DialTCP(ctx context.Context, port int) (net.Conn, error) {
	if port != 23342 {
		return nil, fmt.Errorf("connection refused on port %d", port)
	}
	client, server := net.Pipe()
	select {
	case f.ln.ch <- server:
		return client, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-f.ln.done:
		return nil, errors.New("fake closed")
	}
}

func (f *replayFake) Push(ctx context.Context, r io.Reader, remote string, mode fs.FileMode, mtime time.Time) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files[remote] = b
	return nil
}

func (f *replayFake) Pull(ctx context.Context, remote string, w io.Writer) error {
	f.mu.Lock()
	b, ok := f.files[remote]
	f.mu.Unlock()
	if !ok {
		return fs.ErrNotExist
	}
	_, err := w.Write(b)
	return err
}

func (f *replayFake) Stat(ctx context.Context, remote string) (fs.FileInfo, error) {
	return nil, fs.ErrNotExist
}

type replayPipeListener struct {
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func (l *replayPipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}
func (l *replayPipeListener) Close() error { l.once.Do(func() { close(l.done) }); return nil }
func (l *replayPipeListener) Addr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 23342}
}

// ---- query channel ----

func (f *replayFake) serveHTTP(w http.ResponseWriter, r *http.Request) {
	action := strings.TrimPrefix(r.URL.Path, "/scheme/")
	q := r.URL.Query()
	f.mu.Lock()
	resp := f.query(action, q)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(resp)
	w.Write(buf.Bytes())
}

func (f *replayFake) query(action string, q url.Values) map[string]any {
	switch action + "/" + q.Get("type") + q.Get("action") {
	case "harness/capabilities":
		return map[string]any{"success": true, "protocolVersion": "2.0", "agentProtocolVersion": "1.0"}
	case "harness/health":
		return map[string]any{"success": true, "protocolVersion": "2.0", "appInitialized": true, "permissions": f.perms,
			"autoStart": f.autoStart, "ready": f.autoStart, "run": rfClone(f.status)}
	case "harness/status", "harness/result":
		f.advance()
		if f.onStatus != nil {
			f.onStatus(f)
		}
		return rfClone(f.status)
	case "harness/case":
		snap, ok := f.cases[q.Get("caseName")]
		if !ok {
			return map[string]any{"success": false, "errorCode": "case_not_found", "error": "Case not found: " + q.Get("caseName")}
		}
		var obj map[string]any
		b, _ := json.Marshal(snap)
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		dec.Decode(&obj)
		return map[string]any{"success": true, "case": obj}
	case "harness/cases":
		list := []any{}
		for _, c := range f.cases {
			list = append(list, map[string]any{"id": *c.ID, "name": c.CaseName, "targetAppPackage": c.TargetAppPackage})
		}
		return map[string]any{"success": true, "count": len(list), "cases": list}
	case "harness/case-import-status":
		if f.importReceipt == nil || f.importReceipt["requestId"] != q.Get("requestId") {
			return map[string]any{"success": false, "errorCode": "import_receipt_not_found", "error": "No matching case import receipt is available", "requestId": q.Get("requestId")}
		}
		return rfClone(f.importReceipt)
	case "harness/case-delete-status":
		if f.deleteReceipt == nil || f.deleteReceipt["requestId"] != q.Get("requestId") {
			return map[string]any{"success": false, "errorCode": "case_delete_receipt_not_found", "error": "No matching case delete receipt is available", "requestId": q.Get("requestId")}
		}
		return rfClone(f.deleteReceipt)
	case "config/get":
		if q.Get("key") != solopi.KeyReplayAutoStart {
			return map[string]any{"success": false, "errorCode": "unsupported_config", "error": "Unsupported config key"}
		}
		return map[string]any{"success": true, "config": map[string]any{"key": solopi.KeyReplayAutoStart, "type": "boolean", "writable": true,
			"sensitive": false, "redacted": false, "value": f.autoStart}}
	case "plugin/list":
		return map[string]any{"success": true, "plugins": f.plugins, "total": len(f.plugins)}
	case "history/listReplay":
		limit := 100
		fmt.Sscan(q.Get("limit"), &limit)
		recs := []any{}
		for _, r := range f.history {
			if len(recs) < limit {
				recs = append(recs, r)
			}
		}
		return map[string]any{"success": true, "kind": "replay", "records": recs, "total": len(f.history), "returned": len(recs), "truncated": len(recs) < len(f.history)}
	case "history/getReplay":
		r, ok := f.history[q.Get("id")]
		if !ok {
			return map[string]any{"success": false, "errorCode": "record_not_found", "error": "Replay history record was not found"}
		}
		out := rfClone(r)
		out["success"] = true
		out["files"] = []any{}
		return out
	case "history/mutationStatus":
		rc, ok := f.histReceipts[q.Get("requestId")]
		if !ok {
			return map[string]any{"success": false, "errorCode": "receipt_not_found", "error": "Mutation receipt was not found"}
		}
		mut := rfClone(rc)
		if f.histPending > 0 {
			f.histPending--
			mut = map[string]any{"requestId": rc["requestId"], "kind": "replay", "action": "deleteReplay", "id": rc["id"], "state": "in_progress", "success": true}
		}
		return map[string]any{"success": true, "requestId": q.Get("requestId"), "state": mut["state"], "mutation": mut}
	}
	return map[string]any{"success": false, "errorCode": "unsupported_type", "error": "unsupported " + action}
}

// advance moves the current run along on each status poll.
func (f *replayFake) advance() {
	st := f.status
	switch st["state"] {
	case "running":
		f.polls++
		plan := f.plan[rfStr(st, "caseName")]
		if plan == rplanHang || plan == rplanIgnoreCxl || f.polls < f.runPolls {
			return
		}
		f.finishRun(plan)
	case "cancel_requested":
		if f.plan[rfStr(st, "caseName")] == rplanIgnoreCxl {
			return
		}
		f.setState("cancelled")
	}
}

func (f *replayFake) setState(s string) {
	f.status["state"] = s
	f.status["active"] = s == "running" || s == "cancel_requested"
	f.status["terminal"] = s == "passed" || s == "failed" || s == "cancelled"
	if f.status["terminal"] == true {
		f.status["finishedAt"] = 1700000005000
		f.status["durationMs"] = 5000
	}
}

func (f *replayFake) finishRun(plan string) {
	name := rfStr(f.status, "caseName")
	runID := rfStr(f.status, "runId")
	log := "/sdcard/solopi/logs/" + runID + ".log"
	shot := "/sdcard/solopi/screenshots/" + runID + "-2.png"
	f.files[log] = []byte("replay log of " + runID + "\n")
	f.files[shot] = append(append([]byte{}, rfPNG...), []byte(runID)...)
	res := map[string]any{"caseName": name, "targetAppPackage": "com.example.counter", "startTime": 1700000000000, "endTime": 1700000005000,
		"logFile": log, "screenshotFiles": map[string]any{"step-2": shot, "evil": "/sdcard/solopi/../../data/secret"}, "platform": "android"}
	switch plan {
	case rplanFail:
		res["status"] = "failed"
		res["exceptionMessage"] = "Node not found: increment_button"
		res["exceptionStep"] = 1
		res["exceptionStepId"] = "ai-step-002"
		f.status["results"] = []any{res}
		f.status["error"] = "1 replay result(s) failed"
		f.setState("failed")
	case rplanEmpty:
		f.status["results"] = []any{}
		f.setState("passed")
	default:
		res["status"] = "passed"
		f.status["results"] = []any{res}
		f.setState("passed")
	}
}

// startRun publishes a new running run.
func (f *replayFake) startRun(caseName, requestID string) {
	f.runSeq++
	f.polls = 0
	f.status = map[string]any{"success": true, "runId": fmt.Sprintf("1700000000%03d-run-%d", f.runSeq, f.runSeq), "caseName": caseName,
		"startedAt": 1700000000000, "results": []any{}}
	if requestID != "" {
		f.status["requestId"] = requestID
	}
	f.setState("running")
}

// ---- mutation channel ----

func (f *replayFake) mutate(action string, q url.Values) {
	switch action {
	case "config":
		if q.Get("action") == "set" && q.Get("key") == solopi.KeyReplayAutoStart {
			f.autoStart = strings.EqualFold(q.Get("value"), "true")
		}
	case "replay":
		name := q.Get("caseName")
		if f.status["active"] == true {
			return // "A replay is already running" (invisible)
		}
		snap, ok := f.cases[name]
		if !ok || q.Get("caseId") != fmt.Sprint(*snap.ID) || q.Get("caseFingerprint") != snap.CaseFingerprint || !rfRequestIDRe.MatchString(q.Get("requestId")) {
			return // invisible parameter rejection
		}
		switch f.plan[name] {
		case rplanInvisible:
			return
		case rplanSteal:
			f.startRun(name, "replay-"+strings.Repeat("f", 32))
			f.plan[name] = rplanHang
			return
		}
		f.startRun(name, q.Get("requestId"))
	case "harness":
		switch q.Get("type") {
		case "cancel":
			if q.Get("runId") != rfStr(f.status, "runId") || f.status["state"] != "running" {
				return // run_id_mismatch / no_active_run (invisible)
			}
			f.setState("cancel_requested")
		case "case-import":
			if !f.dropImports {
				f.caseImport(q)
			}
		case "case-delete":
			f.caseDelete(q)
		}
	case "history":
		if q.Get("action") != "deleteReplay" || q.Get("confirmId") != q.Get("id") {
			return
		}
		rid := q.Get("requestId")
		id := q.Get("id")
		if _, ok := f.history[id]; !ok {
			f.histReceipts[rid] = map[string]any{"success": false, "requestId": rid, "action": "deleteReplay", "kind": "replay", "id": id,
				"state": "failed", "deleted": false, "deletedFiles": 0, "errorCode": "record_not_found", "error": "History record was not found"}
			return
		}
		delete(f.history, id)
		f.histReceipts[rid] = map[string]any{"success": true, "requestId": rid, "action": "deleteReplay", "kind": "replay", "id": id,
			"state": "completed", "deleted": true, "deletedFiles": 5}
	}
}

func (f *replayFake) caseImport(q url.Values) {
	rid := q.Get("requestId")
	p := q.Get("path")
	if !strings.HasPrefix(p, "/sdcard/Android/data/"+f.pkg+"/files/harness-import/") {
		f.importReceipt = map[string]any{"success": false, "requestId": rid, "errorCode": "invalid_import_path", "error": "Import path must be inside SoloPi harness storage"}
		return
	}
	data, ok := f.files[p]
	delete(f.files, p) // read and deleted immediately
	if !ok {
		f.importReceipt = map[string]any{"success": false, "requestId": rid, "errorCode": "case_file_not_found", "error": "Case import file was not found"}
		return
	}
	c, err := casefile.Parse(data)
	if err != nil {
		f.importReceipt = map[string]any{"success": false, "requestId": rid, "errorCode": "invalid_case_json", "error": "Case JSON cannot be parsed by SoloPi"}
		return
	}
	if err := casefile.DeviceValidate(c); err != nil {
		f.importReceipt = map[string]any{"success": false, "requestId": rid, "errorCode": "invalid_case", "error": err.Error()}
		return
	}
	replaced := 0
	if _, exists := f.cases[c.CaseName]; exists {
		if q.Get("replace") != "true" {
			f.importReceipt = map[string]any{"success": false, "requestId": rid, "errorCode": "duplicate_case", "error": "Case already exists; pass --replace to overwrite it"}
			return
		}
		replaced = 1
	}
	f.nextID++
	stored := casefile.ApplyDeviceImportDefaults(c, f.nextID, 1700000000000)
	snap, _ := casefile.Snapshot(stored, casefile.DefaultSeed)
	f.cases[c.CaseName] = &snap
	f.importReceipt = map[string]any{"success": true, "requestId": rid, "imported": true, "caseName": c.CaseName, "caseId": f.nextID,
		"replaced": replaced, "stepCount": len(c.Steps)}
}

func (f *replayFake) caseDelete(q url.Values) {
	rid := q.Get("requestId")
	name := q.Get("caseName")
	if q.Get("confirmCaseName") != name {
		f.deleteReceipt = map[string]any{"success": false, "requestId": rid, "errorCode": "confirmation_mismatch", "error": "confirmCaseName must exactly match caseName"}
		return
	}
	snap, ok := f.cases[name]
	if !ok {
		f.deleteReceipt = map[string]any{"success": false, "requestId": rid, "errorCode": "case_not_found", "error": "Case not found: " + name}
		return
	}
	delete(f.cases, name)
	f.deleteReceipt = map[string]any{"success": true, "requestId": rid, "deleted": true, "caseId": *snap.ID, "caseName": name}
}

func rfClone(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	dec.Decode(&out)
	return out
}

// countMutations counts decoded scheme URIs containing sub.
func (f *replayFake) countMutations(sub string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, m := range f.mutations {
		if strings.Contains(m, sub) {
			n++
		}
	}
	return n
}

var rfRequestIDRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func rfStr(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

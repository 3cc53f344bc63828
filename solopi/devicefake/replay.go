package devicefake

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/casefile/paramcrypt"
	"github.com/solopi-dev/solopi/protocol"
)

// keyReplayAutoStart is the device setting that lets a replay begin
// without a tap.
const keyReplayAutoStart = "KEY_REPLAY_AUTO_START"

// Replay plans: what the fake does with a replay of a case.
const (
	PlanPass         = "pass"
	PlanFail         = "fail"
	PlanHang         = "hang"       // stays running until cancelled
	PlanEmpty        = "empty"      // passed with results:[]
	PlanInvisible    = "invisible"  // invisible rejection: nothing published
	PlanSteal        = "steal"      // another client's same-name run wins
	PlanIgnoreCancel = "ignore-cxl" // cancel accepted but never completes
)

// Replay is a scripted SoloPi for the replay, case and history tests: the
// query channel and the mutation channel with the device-side rules of
// docs/device-protocol.md that these flows rely on (receipt slots, the replay single
// slot, exact-runId cancel, invisible rejections). Hold its lock to read or
// change its fields while a host operation runs.
type Replay struct {
	*Transport
	sync.Mutex

	t   testing.TB
	Pkg string

	Cases     map[string]*casefile.CaseSnapshot
	NextID    int64
	AutoStart bool
	Perms     map[string]any
	Plugins   []any
	Plan      map[string]string // case name -> plan (default pass)
	RunPolls  int               // status polls a running run takes to finish
	Status    map[string]any
	RunSeq    int
	Polls     int      // status polls of the current run
	Mutations []string // decoded scheme URIs
	// OnMutation, when set, sees every mutation as it arrives, under the
	// lock (tests use it as the event to interrupt on).
	OnMutation func(raw string)

	ImportReceipt map[string]any
	DropImports   bool // case-import is rejected invisibly (no receipt)
	DeleteReceipt map[string]any
	History       map[string]map[string]any // id -> record summary
	HistReceipts  map[string]map[string]any
	HistPending   int // mutationStatus polls that still say in_progress

	// OnStatus runs on every status query with the lock held.
	OnStatus func(f *Replay)
}

// NewReplay returns an idle replay SoloPi with no cases.
func NewReplay(t testing.TB) *Replay {
	f := &Replay{
		t: t, Pkg: protocol.DefaultPackage, Cases: map[string]*casefile.CaseSnapshot{}, NextID: 7,
		AutoStart: false, Plan: map[string]string{}, RunPolls: 2,
		Perms:   map[string]any{"adb": true, "float": true, "background": true, "powerSave": true, "accessibility": true},
		Status:  map[string]any{"success": true, "state": "idle", "active": false, "terminal": false, "results": []any{}},
		History: map[string]map[string]any{}, HistReceipts: map[string]map[string]any{},
		Plugins: []any{},
	}
	f.Transport = New(t, http.HandlerFunc(f.serveHTTP))
	f.OnShell = f.shell
	f.Mutate = f.mutateURI
	return f
}

func (f *Replay) shell(ctx context.Context, cmd string, args []string) (Reply, bool) {
	switch {
	case strings.HasPrefix(cmd, "pm path "):
		return Reply{Stdout: "package:/data/app/com.alipay.hulu/base.apk\n"}, true
	case strings.HasPrefix(cmd, "logcat "):
		return Reply{Stdout: "11-30 02:00:00.000  100  100 I SoloPi  : replay log line\n"}, true
	}
	return Reply{}, false
}

// PNG is the screenshot the fake's screencap returns.
var PNG = append([]byte("\x89PNG\r\n\x1a\n"), []byte("fake-image-data")...)

// mutateURI takes a mutation from the shell.
func (f *Replay) mutateURI(raw string) Reply {
	action, q, err := ParseScheme(raw)
	if err != nil {
		return Reply{Stderr: "Error: bad uri", Code: 1}
	}
	f.Lock()
	defer f.Unlock()
	f.Mutations = append(f.Mutations, raw)
	if f.OnMutation != nil {
		f.OnMutation(raw)
	}
	f.mutate(action, q)
	return AmStarted
}

// AddCase stores a case as the device would after an import.
func (f *Replay) AddCase(name string, stepsJSON string) *casefile.CaseSnapshot {
	f.t.Helper()
	src := `{"caseName":` + JSONString(name) + `,"targetAppPackage":"com.example.counter","operationLog":{"steps":` + stepsJSON + `}}`
	c, err := casefile.Parse([]byte(src))
	if err != nil {
		f.t.Fatalf("parse case: %v", err)
	}
	n, _, err := casefile.Normalize(c, casefile.NormalizeOptions{SkipPolicy: true})
	if err != nil {
		f.t.Fatalf("normalize case: %v", err)
	}
	f.Lock()
	defer f.Unlock()
	f.NextID++
	stored := casefile.ApplyDeviceImportDefaults(n, f.NextID, 1700000000000)
	snap, err := casefile.Snapshot(stored, paramcrypt.DefaultSeed)
	if err != nil {
		f.t.Fatalf("snapshot: %v", err)
	}
	f.Cases[name] = &snap
	return &snap
}

// TwoSteps is a two-step case body: a sleep and a click on the counter.
const TwoSteps = `[{"operationMethod":{"actionEnum":"SLEEP","operationParam":{"text":"100"}}},
 {"operationMethod":{"actionEnum":"CLICK","operationParam":{}},"operationNode":{"resourceId":"com.example.counter:id/increment_button"}}]`

// JSONString is s as a JSON string literal.
func JSONString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// ---- query channel ----

func (f *Replay) serveHTTP(w http.ResponseWriter, r *http.Request) {
	action := strings.TrimPrefix(r.URL.Path, "/scheme/")
	q := r.URL.Query()
	f.Lock()
	resp := f.query(action, q)
	f.Unlock()
	w.Header().Set("Content-Type", "application/json")
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(resp)
	w.Write(buf.Bytes())
}

func (f *Replay) query(action string, q url.Values) map[string]any {
	switch action + "/" + q.Get("type") + q.Get("action") {
	case "harness/capabilities":
		return map[string]any{"success": true, "protocolVersion": "2.0", "agentProtocolVersion": "1.0"}
	case "harness/health":
		return map[string]any{"success": true, "protocolVersion": "2.0", "appInitialized": true, "permissions": f.Perms,
			"autoStart": f.AutoStart, "ready": f.AutoStart, "run": Clone(f.Status)}
	case "harness/status", "harness/result":
		f.advance()
		if f.OnStatus != nil {
			f.OnStatus(f)
		}
		return Clone(f.Status)
	case "harness/case":
		snap, ok := f.Cases[q.Get("caseName")]
		if !ok {
			return map[string]any{"success": false, "errorCode": "case_not_found", "error": "Case not found: " + q.Get("caseName")}
		}
		var obj map[string]any
		b, _ := json.Marshal(snap)
		_ = canonjson.Unmarshal(b, &obj)
		return map[string]any{"success": true, "case": obj}
	case "harness/cases":
		list := []any{}
		for _, c := range f.Cases {
			list = append(list, map[string]any{"id": *c.ID, "name": c.CaseName, "targetAppPackage": c.TargetAppPackage})
		}
		return map[string]any{"success": true, "count": len(list), "cases": list}
	case "harness/case-import-status":
		if f.ImportReceipt == nil || f.ImportReceipt["requestId"] != q.Get("requestId") {
			return map[string]any{"success": false, "errorCode": "import_receipt_not_found", "error": "No matching case import receipt is available", "requestId": q.Get("requestId")}
		}
		return Clone(f.ImportReceipt)
	case "harness/case-delete-status":
		if f.DeleteReceipt == nil || f.DeleteReceipt["requestId"] != q.Get("requestId") {
			return map[string]any{"success": false, "errorCode": "case_delete_receipt_not_found", "error": "No matching case delete receipt is available", "requestId": q.Get("requestId")}
		}
		return Clone(f.DeleteReceipt)
	case "config/get":
		if q.Get("key") != keyReplayAutoStart {
			return map[string]any{"success": false, "errorCode": "unsupported_config", "error": "Unsupported config key"}
		}
		return map[string]any{"success": true, "config": map[string]any{"key": keyReplayAutoStart, "type": "boolean", "writable": true,
			"sensitive": false, "redacted": false, "value": f.AutoStart}}
	case "plugin/list":
		return map[string]any{"success": true, "plugins": f.Plugins, "total": len(f.Plugins)}
	case "history/listReplay":
		limit := 100
		fmt.Sscan(q.Get("limit"), &limit)
		recs := []any{}
		for _, r := range f.History {
			if len(recs) < limit {
				recs = append(recs, r)
			}
		}
		return map[string]any{"success": true, "kind": "replay", "records": recs, "total": len(f.History), "returned": len(recs), "truncated": len(recs) < len(f.History)}
	case "history/getReplay":
		r, ok := f.History[q.Get("id")]
		if !ok {
			return map[string]any{"success": false, "errorCode": "record_not_found", "error": "Replay history record was not found"}
		}
		out := Clone(r)
		out["success"] = true
		out["files"] = []any{}
		return out
	case "history/mutationStatus":
		rc, ok := f.HistReceipts[q.Get("requestId")]
		if !ok {
			return map[string]any{"success": false, "errorCode": "receipt_not_found", "error": "Mutation receipt was not found"}
		}
		mut := Clone(rc)
		if f.HistPending > 0 {
			f.HistPending--
			mut = map[string]any{"requestId": rc["requestId"], "kind": "replay", "action": "deleteReplay", "id": rc["id"], "state": "in_progress", "success": true}
		}
		return map[string]any{"success": true, "requestId": q.Get("requestId"), "state": mut["state"], "mutation": mut}
	}
	return map[string]any{"success": false, "errorCode": "unsupported_type", "error": "unsupported " + action}
}

// advance moves the current run along on each status poll.
func (f *Replay) advance() {
	st := f.Status
	switch st["state"] {
	case "running":
		f.Polls++
		plan := f.Plan[strOf(st, "caseName")]
		if plan == PlanHang || plan == PlanIgnoreCancel || f.Polls < f.RunPolls {
			return
		}
		f.FinishRun(plan)
	case "cancel_requested":
		if f.Plan[strOf(st, "caseName")] == PlanIgnoreCancel {
			return
		}
		f.SetState("cancelled")
	}
}

// SetState moves the current run to state s and fixes the derived flags.
func (f *Replay) SetState(s string) {
	f.Status["state"] = s
	f.Status["active"] = s == "running" || s == "cancel_requested"
	f.Status["terminal"] = s == "passed" || s == "failed" || s == "cancelled"
	if f.Status["terminal"] == true {
		f.Status["finishedAt"] = 1700000005000
		f.Status["durationMs"] = 5000
	}
}

// FinishRun completes the current run as plan says, writing its log and
// screenshot.
func (f *Replay) FinishRun(plan string) {
	name := strOf(f.Status, "caseName")
	runID := strOf(f.Status, "runId")
	log := "/sdcard/solopi/logs/" + runID + ".log"
	shot := "/sdcard/solopi/screenshots/" + runID + "-2.png"
	f.Files.Put(log, []byte("replay log of "+runID+"\n"))
	f.Files.Put(shot, append(append([]byte{}, PNG...), []byte(runID)...))
	res := map[string]any{"caseName": name, "targetAppPackage": "com.example.counter", "startTime": 1700000000000, "endTime": 1700000005000,
		"logFile": log, "screenshotFiles": map[string]any{"step-2": shot, "evil": "/sdcard/solopi/../../data/secret"}, "platform": "android"}
	switch plan {
	case PlanFail:
		res["status"] = "failed"
		res["exceptionMessage"] = "Node not found: increment_button"
		res["exceptionStep"] = 1
		res["exceptionStepId"] = "ai-step-002"
		f.Status["results"] = []any{res}
		f.Status["error"] = "1 replay result(s) failed"
		f.SetState("failed")
	case PlanEmpty:
		f.Status["results"] = []any{}
		f.SetState("passed")
	default:
		res["status"] = "passed"
		f.Status["results"] = []any{res}
		f.SetState("passed")
	}
}

// StartRun publishes a new running run.
func (f *Replay) StartRun(caseName, requestID string) {
	f.RunSeq++
	f.Polls = 0
	f.Status = map[string]any{"success": true, "runId": fmt.Sprintf("1700000000%03d-run-%d", f.RunSeq, f.RunSeq), "caseName": caseName,
		"startedAt": 1700000000000, "results": []any{}}
	if requestID != "" {
		f.Status["requestId"] = requestID
	}
	f.SetState("running")
}

// ---- mutation channel ----

func (f *Replay) mutate(action string, q url.Values) {
	switch action {
	case "config":
		if q.Get("action") == "set" && q.Get("key") == keyReplayAutoStart {
			f.AutoStart = strings.EqualFold(q.Get("value"), "true")
		}
	case "replay":
		name := q.Get("caseName")
		if f.Status["active"] == true {
			return // "A replay is already running" (invisible)
		}
		snap, ok := f.Cases[name]
		if !ok || q.Get("caseId") != fmt.Sprint(*snap.ID) || q.Get("caseFingerprint") != snap.CaseFingerprint || !protocol.ValidID(q.Get("requestId"), 128) {
			return // invisible parameter rejection
		}
		switch f.Plan[name] {
		case PlanInvisible:
			return
		case PlanSteal:
			f.StartRun(name, "replay-"+strings.Repeat("f", 32))
			f.Plan[name] = PlanHang
			return
		}
		f.StartRun(name, q.Get("requestId"))
	case "harness":
		switch q.Get("type") {
		case "cancel":
			if q.Get("runId") != strOf(f.Status, "runId") || f.Status["state"] != "running" {
				return // run_id_mismatch / no_active_run (invisible)
			}
			f.SetState("cancel_requested")
		case "case-import":
			if !f.DropImports {
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
		if _, ok := f.History[id]; !ok {
			f.HistReceipts[rid] = map[string]any{"success": false, "requestId": rid, "action": "deleteReplay", "kind": "replay", "id": id,
				"state": "failed", "deleted": false, "deletedFiles": 0, "errorCode": "record_not_found", "error": "History record was not found"}
			return
		}
		delete(f.History, id)
		f.HistReceipts[rid] = map[string]any{"success": true, "requestId": rid, "action": "deleteReplay", "kind": "replay", "id": id,
			"state": "completed", "deleted": true, "deletedFiles": 5}
	}
}

func (f *Replay) caseImport(q url.Values) {
	rid := q.Get("requestId")
	p := q.Get("path")
	if !strings.HasPrefix(p, "/sdcard/Android/data/"+f.Pkg+"/files/harness-import/") {
		f.ImportReceipt = map[string]any{"success": false, "requestId": rid, "errorCode": "invalid_import_path", "error": "Import path must be inside SoloPi harness storage"}
		return
	}
	data, ok := f.Files.Take(p) // read and deleted immediately
	if !ok {
		f.ImportReceipt = map[string]any{"success": false, "requestId": rid, "errorCode": "case_file_not_found", "error": "Case import file was not found"}
		return
	}
	c, err := casefile.Parse(data)
	if err != nil {
		f.ImportReceipt = map[string]any{"success": false, "requestId": rid, "errorCode": "invalid_case_json", "error": "Case JSON cannot be parsed by SoloPi"}
		return
	}
	if err := casefile.DeviceValidate(c); err != nil {
		f.ImportReceipt = map[string]any{"success": false, "requestId": rid, "errorCode": "invalid_case", "error": err.Error()}
		return
	}
	replaced := 0
	if _, exists := f.Cases[c.CaseName]; exists {
		if q.Get("replace") != "true" {
			f.ImportReceipt = map[string]any{"success": false, "requestId": rid, "errorCode": "duplicate_case", "error": "Case already exists; pass --replace to overwrite it"}
			return
		}
		replaced = 1
	}
	f.NextID++
	stored := casefile.ApplyDeviceImportDefaults(c, f.NextID, 1700000000000)
	snap, _ := casefile.Snapshot(stored, paramcrypt.DefaultSeed)
	f.Cases[c.CaseName] = &snap
	f.ImportReceipt = map[string]any{"success": true, "requestId": rid, "imported": true, "caseName": c.CaseName, "caseId": f.NextID,
		"replaced": replaced, "stepCount": len(c.Steps)}
}

func (f *Replay) caseDelete(q url.Values) {
	rid := q.Get("requestId")
	name := q.Get("caseName")
	if q.Get("confirmCaseName") != name {
		f.DeleteReceipt = map[string]any{"success": false, "requestId": rid, "errorCode": "confirmation_mismatch", "error": "confirmCaseName must exactly match caseName"}
		return
	}
	snap, ok := f.Cases[name]
	if !ok {
		f.DeleteReceipt = map[string]any{"success": false, "requestId": rid, "errorCode": "case_not_found", "error": "Case not found: " + name}
		return
	}
	delete(f.Cases, name)
	f.DeleteReceipt = map[string]any{"success": true, "requestId": rid, "deleted": true, "caseId": *snap.ID, "caseName": name}
}

// Clone deep-copies m through JSON (numbers become json.Number).
func Clone(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	_ = canonjson.Unmarshal(b, &out)
	return out
}

// CountMutations counts decoded scheme URIs containing sub.
func (f *Replay) CountMutations(sub string) int {
	f.Lock()
	defer f.Unlock()
	return Count(f.Mutations, sub)
}

func strOf(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

package soloapp

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/casefile/paramcrypt"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

func TestHarnessDispatchAndCapabilities(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	wantErr(t, r.get("harness"), "missing_type", "Parameter 'type' is required")
	wantErr(t, r.get("harness", "type", "bogus"), "unsupported_type", "Unsupported harness type: bogus")
	c := r.get("harness", "type", "capabilities")
	want := map[string]string{
		"queries":                    "capabilities,health,info,apps,cases,case,status,result,case-import-status,case-delete-status,adb-connect-status",
		"commands":                   "replay,cancel,config,case-import,case-delete,record,stress,screen-record,video-analysis,history,plugin,scan,adb-connect",
		"performanceQueries":         "listItems,status,current",
		"performanceCommands":        "start,stop",
		"performanceDisplayQueries":  "status",
		"performanceDisplayCommands": "start,stop",
		"screenRecordQueries":        "status",
		"screenRecordCommands":       "start,stop",
		"scanQueries":                "status",
		"scanCommands":               "start,cancel",
		"videoAnalysisQueries":       "status",
		"videoAnalysisCommands":      "start",
		"historyQueries":             "listReplay,getReplay,listPerformance,getPerformance,mutationStatus",
		"historyCommands":            "deleteReplay,deletePerformance",
		"pluginQueries":              "list,mutationStatus",
		"pluginCommands":             "import,remove",
		"agentQueries":               "capabilities,start-status,status,observe,receipt,timeline",
		"agentCommands":              "start,act,pause,resume,end,cancel",
		"transports":                 "adb-forward-http,adb-scheme",
	}
	for k, v := range want {
		list, _ := c[k].([]any)
		var got []string
		for _, e := range list {
			got = append(got, e.(string))
		}
		if strings.Join(got, ",") != v {
			t.Errorf("%s = %v", k, got)
		}
	}
	if c["success"] != true || str(c, "protocolVersion") != "2.0" || str(c, "agentProtocolVersion") != "1.0" ||
		str(c, "packageName") != solopiPkg || num(c, "devicePort") != 23342 || len(c) != 24 {
		t.Errorf("capabilities: %v (%d keys)", c, len(c))
	}
}

func TestHealthReadyRule(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		denied []string
		auto   bool
		init   bool
		ready  bool
	}{
		{nil, true, true, true},
		{nil, false, true, false},
		{[]string{core.PermADB}, true, true, false},
		{[]string{core.PermFloat}, true, true, false},
		{[]string{core.PermPowerSave}, true, true, false},
		{[]string{core.PermAccessibility}, true, true, false},
		{[]string{core.PermBackground}, true, true, true}, // placeholder, always true
		{nil, true, false, false},
	} {
		cfg := core.Config{DeniedPermissions: tc.denied, Settings: map[string]string{"KEY_REPLAY_AUTO_START": fmt.Sprint(tc.auto)}}
		r := newRig(t, cfg)
		if !tc.init {
			r.app.SetAppInitialized(false)
			// The HTTP server keeps running once started; health reports init.
		}
		h := r.get("harness", "type", "health")
		perms := sub(h, "permissions")
		for _, n := range core.PermissionNames {
			want := true
			for _, d := range tc.denied {
				if d == n && n != core.PermBackground {
					want = false
				}
			}
			if perms[n] != want {
				t.Errorf("%v: %s = %v", tc, n, perms[n])
			}
		}
		if h["ready"] != tc.ready || h["autoStart"] != tc.auto || h["appInitialized"] != tc.init || str(h, "protocolVersion") != "2.0" {
			t.Errorf("%v: %v", tc, h)
		}
		run := sub(h, "run")
		if run["success"] != true || str(run, "state") != "idle" {
			t.Errorf("run: %v", run)
		}
	}
}

func TestInfoAndApps(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	info := r.get("harness", "type", "info")
	dev := sub(info, "device")
	if str(info, "versionName") != "1.0.2" || num(info, "versionCode") != 37 || str(info, "license") != "Apache-2.0" ||
		str(dev, "model") == "" || num(dev, "sdk") != 33 || len(dev) != 7 {
		t.Errorf("info: %v", info)
	}
	apps := r.get("harness", "type", "apps")
	names := func(m map[string]any) []string {
		var out []string
		for _, a := range m["apps"].([]any) {
			out = append(out, str(a.(map[string]any), "packageName"))
		}
		return out
	}
	if got := names(apps); !reflect.DeepEqual(got, []string{"com.example.service", counterPkg}) || apps["includesSystemApps"] != false || num(apps, "count") != 2 {
		t.Errorf("apps: %v", apps)
	}
	first := apps["apps"].([]any)[0].(map[string]any)
	if _, has := first["versionCode"]; has {
		t.Errorf("unknown versionCode must be absent: %v", first)
	}
	r.adb("config", "action", "set", "key", "KEY_DISPLAY_SYSTEM_APP", "value", "true")
	apps = r.get("harness", "type", "apps")
	if got := names(apps); len(got) != 3 || apps["includesSystemApps"] != true {
		t.Errorf("apps with system: %v", got)
	}
}

// ---- cases ----

const importDir = "/sdcard/Android/data/com.alipay.hulu/files/harness-import"

func stepJSON(id, action, node string, params map[string]string, encrypt bool) string {
	p, _ := json.Marshal(params)
	if params == nil {
		p = []byte("{}")
	}
	s := fmt.Sprintf(`{"stepId":%q,"operationId":"op-%s","operationIndex":0,"operationMethod":{"actionEnum":%q,"encrypt":%v,"operationParam":%s}`, id, id, action, encrypt, p)
	if node != "" {
		s += `,"operationNode":` + node
	}
	return s + "}"
}

func nodeByID(id string) string {
	return fmt.Sprintf(`{"resourceId":"com.example.counter:id/%s","className":"android.widget.Button","depth":2}`, id)
}

func caseJSON(name string, steps ...string) string {
	return fmt.Sprintf(`{"caseName":%q,"caseDesc":"desc","targetAppPackage":"com.example.counter","targetAppLabel":"Counter","recordMode":"local","priority":1,"advanceSettings":"","operationLog":{"steps":[%s]}}`,
		name, strings.Join(steps, ","))
}

// importCase pushes content into the import inbox and imports it through
// the protected activity, returning the receipt.
func (r *rig) importCase(reqID, content string, replace bool) map[string]any {
	r.t.Helper()
	p := importDir + "/" + reqID + ".json"
	_ = r.phone.WriteFile(p, []byte(content))
	r.adb("harness", "type", "case-import", "path", p, "replace", fmt.Sprint(replace), "requestId", reqID)
	rec := r.get("harness", "type", "case-import-status", "requestId", reqID)
	if _, err := r.phone.Stat(p); err == nil {
		r.t.Errorf("import file %s not deleted", p)
	}
	return rec
}

func (r *rig) mustImport(name string, steps ...string) int64 {
	r.t.Helper()
	rec := r.importCase("req-"+name+"-"+core.NewUUID()[:8], caseJSON(name, steps...), true)
	if rec["success"] != true {
		r.t.Fatalf("import %s: %v", name, rec)
	}
	return num(rec, "caseId")
}

func TestCaseImportValidation(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	click := stepJSON("s1", "CLICK", nodeByID("increment"), nil, false)
	for _, tc := range []struct {
		name    string
		content string
		kv      []string // overrides the default request
		code    string
		msg     string
	}{
		{"missing requestId", "", []string{"type", "case-import", "path", importDir + "/a.json"}, "missing_request_id", "Parameter 'requestId' is required"},
		{"missing path", "", []string{"type", "case-import", "requestId", "x"}, "missing_path", "Parameter 'path' is required"},
		{"outside inbox", "", []string{"type", "case-import", "requestId", "x", "path", "/sdcard/solopi/a.json"}, "invalid_import_path", "Import path must be inside SoloPi harness storage"},
		{"inbox itself", "", []string{"type", "case-import", "requestId", "x", "path", importDir}, "invalid_import_path", ""},
		{"dotdot escape", "", []string{"type", "case-import", "requestId", "x", "path", importDir + "/../x.json"}, "invalid_import_path", ""},
		{"relative", "", []string{"type", "case-import", "requestId", "x", "path", "a.json"}, "invalid_import_path", ""},
		{"missing file", "", []string{"type", "case-import", "requestId", "x", "path", importDir + "/none.json"}, "case_file_not_found", "Case import file was not found"},
		{"empty", " \n", nil, "empty_case_file", "Case import file is empty or unreadable"},
		{"not json", "{", nil, "invalid_case_json", "Case JSON cannot be parsed by SoloPi"},
		{"bad oplog", `{"caseName":"x","operationLog":"{nope"}`, nil, "invalid_case_json", ""},
		{"no name", caseJSON("", click), nil, "invalid_case", "Case name is required"},
		{"no package", strings.Replace(caseJSON("x", click), `"targetAppPackage":"com.example.counter"`, `"targetAppPackage":""`, 1), nil, "invalid_case", "Target app package is required"},
		{"priority", strings.Replace(caseJSON("x", click), `"priority":1`, `"priority":3`, 1), nil, "invalid_case", "Case priority must be between 0 and 2"},
		{"no steps", caseJSON("x"), nil, "invalid_case", "Case must contain at least one inline operation step"},
		{"bad action", caseJSON("x", stepJSON("s1", "FLY", "", nil, false)), nil, "invalid_case", "Case step 0 has no supported action"},
		{"no ids", caseJSON("x", `{"operationMethod":{"actionEnum":"BACK"}}`), nil, "invalid_case", "Case step 0 has no operationId or stepId"},
		{"negative index", caseJSON("x", `{"stepId":"a","operationId":"b","operationIndex":-1,"operationMethod":{"actionEnum":"BACK"}}`), nil, "invalid_case", "Case step 0 has a negative operationIndex"},
		{"duplicate stepId", caseJSON("x", click, click), nil, "invalid_case", "Case step 1 has a duplicate stepId"},
		{"ungrounded", caseJSON("x", stepJSON("s1", "CLICK", `{"className":"android.widget.Button"}`, nil, false)), nil, "invalid_case", "Case step 0 has no grounded node selector"},
	} {
		// One after another: the app keeps only the latest import's
		// receipt, which each row reads back.
		t.Run(tc.name, func(t *testing.T) {
			reqID := "imp-" + strings.ReplaceAll(tc.name, " ", "-")
			kv := tc.kv
			if kv == nil {
				p := importDir + "/" + reqID + ".json"
				_ = r.phone.WriteFile(p, []byte(tc.content))
				kv = []string{"type", "case-import", "requestId", reqID, "path", p}
			}
			got := r.mutate("harness", kv...)
			wantErr(t, got, tc.code, tc.msg)
			id := ""
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == "requestId" {
					id = kv[i+1]
				}
			}
			if id != "" {
				rec := r.get("harness", "type", "case-import-status", "requestId", id)
				wantErr(t, rec, tc.code, tc.msg)
				if str(rec, "requestId") != id {
					t.Errorf("receipt requestId: %v", rec)
				}
			}
		})
	}
	wantErr(t, r.get("harness", "type", "case-import-status"), "missing_request_id", "Parameter 'requestId' is required")
	nf := r.get("harness", "type", "case-import-status", "requestId", "other")
	wantErr(t, nf, "import_receipt_not_found", "No matching case import receipt is available")
	if str(nf, "requestId") != "other" {
		t.Error(nf)
	}
}

func TestCaseImportReplaceDeleteAndSnapshot(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	enc := paramcrypt.Encrypt(paramcrypt.DefaultSeed, "secret text")
	input := stepJSON("s2", "INPUT", `{"resourceId":"com.example.counter:id/name"}`, map[string]string{"text": enc}, true)
	click := stepJSON("s1", "CLICK", nodeByID("increment"), nil, false)
	rec := r.importCase("req-1", caseJSON("smoke", click, input), false)
	if rec["success"] != true || rec["imported"] != true || str(rec, "caseName") != "smoke" || num(rec, "replaced") != 0 || num(rec, "stepCount") != 2 || str(rec, "requestId") != "req-1" {
		t.Fatalf("import: %v", rec)
	}
	id1 := num(rec, "caseId")
	dup := r.importCase("req-2", caseJSON("smoke", click), false)
	wantErr(t, dup, "duplicate_case", "Case already exists; pass --replace to overwrite it")
	rep := r.importCase("req-3", caseJSON("smoke", click, input), true)
	if rep["success"] != true || num(rep, "replaced") != 1 || num(rep, "caseId") <= id1 {
		t.Fatalf("replace: %v", rep)
	}
	cases := r.get("harness", "type", "cases")
	if num(cases, "count") != 1 {
		t.Fatalf("cases: %v", cases)
	}
	c0 := cases["cases"].([]any)[0].(map[string]any)
	for _, k := range []string{"id", "name", "description", "targetAppPackage", "targetAppLabel", "recordMode", "createdAt", "modifiedAt"} {
		if _, has := c0[k]; !has {
			t.Errorf("cases element lacks %s: %v", k, c0)
		}
	}
	// The snapshot: decrypted, encrypt=false, fingerprint recomputable.
	cq := sub(r.get("harness", "type", "case", "caseName", "smoke"), "case")
	opLog := str(cq, "operationLog")
	if !strings.Contains(opLog, `"text":"secret text"`) || strings.Contains(opLog, `"encrypt":true`) || strings.Contains(opLog, "storePath") {
		t.Errorf("operationLog: %s", opLog)
	}
	if !strings.HasPrefix(opLog, `{"steps":[{"operationId":"op-s1","operationIndex":0,"operationMethod":{"actionEnum":"CLICK","encrypt":false,"operationParam":{}},"operationNode":{"assistantNodes":[],"className":"android.widget.Button","depth":2,"extra":{},"resourceId"`) {
		t.Errorf("operationLog shape: %s", opLog)
	}
	d, adv := str(cq, "caseDesc"), str(cq, "advanceSettings")
	fp := fingerprintOf(&caseRow{id: num(cq, "id"), name: str(cq, "caseName"), desc: &d, pkg: str(cq, "targetAppPackage"),
		label: str(cq, "targetAppLabel"), recordMode: str(cq, "recordMode"), advance: &adv, priority: int(num(cq, "priority")),
		gmtCreate: num(cq, "gmtCreate"), gmtModify: num(cq, "gmtModify")}, opLog)
	if fp != str(cq, "caseFingerprint") || !protocol.ValidHex(fp, 64, false) {
		t.Errorf("fingerprint %s vs %s", fp, str(cq, "caseFingerprint"))
	}
	keys := []string{}
	for _, kvp := range st(r.app.P).harness.orderedCaseKeysForTest(r, "smoke") {
		keys = append(keys, kvp)
	}
	if strings.Join(keys, ",") != "id,caseName,caseDesc,targetAppPackage,targetAppLabel,recordMode,advanceSettings,operationLog,priority,gmtCreate,gmtModify,caseFingerprint" {
		t.Errorf("case key order: %v", keys)
	}
	wantErr(t, r.get("harness", "type", "case"), "missing_case_name", "Parameter 'caseName' is required")
	wantErr(t, r.get("harness", "type", "case", "caseName", "nope"), "case_not_found", "Case not found: nope")

	// case-delete table.
	for _, tc := range []struct {
		kv   []string
		code string
		msg  string
	}{
		{[]string{"caseName", "smoke", "confirmCaseName", "smoke"}, "missing_request_id", "Parameter 'requestId' is required"},
		{[]string{"requestId", "d1", "confirmCaseName", "smoke"}, "missing_case_name", "Parameter 'caseName' is required"},
		{[]string{"requestId", "d2", "caseName", "smoke", "confirmCaseName", "Smoke"}, "confirmation_mismatch", "confirmCaseName must exactly match caseName"},
		{[]string{"requestId", "d3", "caseName", "none", "confirmCaseName", "none"}, "case_not_found", "Case not found: none"},
	} {
		got := r.mutate("harness", append([]string{"type", "case-delete"}, tc.kv...)...)
		wantErr(t, got, tc.code, tc.msg)
	}
	wantErr(t, r.get("harness", "type", "case-delete-status", "requestId", "d3"), "case_not_found", "")
	wantErr(t, r.get("harness", "type", "case-delete-status", "requestId", "zz"), "case_delete_receipt_not_found", "No matching case delete receipt is available")
	r.adb("harness", "type", "case-delete", "requestId", "d4", "caseName", "smoke", "confirmCaseName", "smoke")
	del := r.get("harness", "type", "case-delete-status", "requestId", "d4")
	if del["success"] != true || del["deleted"] != true || str(del, "caseName") != "smoke" || num(del, "caseId") != num(rep, "caseId") {
		t.Fatalf("delete: %v", del)
	}
	if num(r.get("harness", "type", "cases"), "count") != 0 {
		t.Error("case not deleted")
	}
	// Only the steps file of the remaining cases exists.
	for p := range r.phone.allFiles() {
		if strings.Contains(p, "/files/steps/") {
			t.Errorf("steps file left behind: %s", p)
		}
	}
}

// orderedCaseKeysForTest returns the key order of the case object.
func (*harnessRun) orderedCaseKeysForTest(r *rig, name string) []string {
	r.app.Mu.Lock()
	defer r.app.Mu.Unlock()
	snap, err := r.app.snapshotLocked(r.app.newestCaseLocked(name))
	if err != nil {
		r.t.Fatal(err)
	}
	var keys []string
	for _, e := range snap.wire {
		keys = append(keys, e.K)
	}
	return keys
}

func TestFingerprintVectors(t *testing.T) {
	t.Parallel()
	desc := "desc"
	row := &caseRow{id: 7, name: "smoke", desc: &desc, pkg: "com.example.target", label: "Target", recordMode: "local", priority: 2, gmtCreate: 10, gmtModify: 20}
	adv := "{}"
	row.advance = &adv
	if got := fingerprintOf(row, `{"steps":[]}`); got != "34a7592a2230b2021d65c156a426806ca435035d685aca881855894626e999b5" {
		t.Errorf("vector 1: %s", got)
	}
	empty := ""
	row.desc, row.advance = nil, &empty
	if got := fingerprintOf(row, `{"steps":[]}`); got != "ee5e7aaa9668daab54d7f019ea06aa3a416aebdcf22b5c5e0c4891a0391c9315" {
		t.Errorf("vector 2: %s", got)
	}
}

func TestAdbConnect(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{DeniedPermissions: []string{core.PermADB}})
	wantErr(t, r.mutate("harness", "type", "adb-connect"), "missing_request_id", "Parameter 'requestId' is required")
	wantErr(t, r.get("harness", "type", "adb-connect-status"), "missing_request_id", "")
	nf := r.get("harness", "type", "adb-connect-status", "requestId", "none")
	if str(nf, "errorCode") != "adb_connect_receipt_not_found" || nf["terminal"] != true || str(nf, "state") != "failed" || num(nf, "finishedAt") == 0 || nf["userActionRequired"] != false {
		t.Errorf("not found: %v", nf)
	}
	// Hang: connecting forever, a second request is busy.
	r.app.SetAdbConnectOutcome(core.AdbConnectHang, 0)
	r.adb("harness", "type", "adb-connect", "requestId", "c1")
	c1 := r.get("harness", "type", "adb-connect-status", "requestId", "c1")
	if c1["success"] != true || str(c1, "state") != "connecting" || c1["terminal"] != false || num(c1, "startedAt") == 0 {
		t.Fatalf("connecting: %v", c1)
	}
	if _, has := c1["finishedAt"]; has {
		t.Error("connecting has finishedAt")
	}
	r.adb("harness", "type", "adb-connect", "requestId", "c2")
	c2 := r.get("harness", "type", "adb-connect-status", "requestId", "c2")
	wantErr(t, c2, "adb_connection_busy", "Another ADB connection request is active")
	if str(c2, "activeRequestId") != "c1" || c2["userActionRequired"] != false {
		t.Errorf("busy: %v", c2)
	}
	// Restart loses the receipts and the hanging attempt.
	r.app.Restart()
	r.waitReady()
	wantErr(t, r.get("harness", "type", "adb-connect-status", "requestId", "c1"), "adb_connect_receipt_not_found", "")
	// Failure.
	r.app.SetAdbConnectOutcome(core.AdbConnectFail, 200*time.Millisecond)
	r.adb("harness", "type", "adb-connect", "requestId", "c3")
	r.eventually("failed", time.Second, func() bool {
		return r.get("harness", "type", "adb-connect-status", "requestId", "c3")["terminal"] == true
	})
	c3 := r.get("harness", "type", "adb-connect-status", "requestId", "c3")
	wantErr(t, c3, "adb_connection_failed", "SoloPi internal ADB connection failed")
	if c3["userActionRequired"] != true || str(c3, "requiredUserAction") != requiredUserActionText || num(c3, "finishedAt") == 0 {
		t.Errorf("failed: %v", c3)
	}
	// Success grants adb; then further requests are immediately connected.
	r.app.SetAdbConnectOutcome(core.AdbConnectSucceed, 200*time.Millisecond)
	r.adb("harness", "type", "adb-connect", "requestId", "c4")
	r.eventually("connected", time.Second, func() bool {
		return r.get("harness", "type", "adb-connect-status", "requestId", "c4")["connected"] == true
	})
	c4 := r.get("harness", "type", "adb-connect-status", "requestId", "c4")
	if c4["success"] != true || str(c4, "state") != "connected" || c4["terminal"] != true || c4["userActionRequired"] != false {
		t.Errorf("connected: %v", c4)
	}
	if _, has := c4["requiredUserAction"]; has {
		t.Error("requiredUserAction on success")
	}
	if sub(r.get("harness", "type", "health"), "permissions")["adb"] != true {
		t.Error("adb permission not granted after connect")
	}
	// Idempotent copy for a known requestId.
	if got := r.mutate("harness", "type", "adb-connect", "requestId", "c3"); str(got, "errorCode") != "adb_connection_failed" {
		t.Errorf("idempotent: %v", got)
	}
	// Store of 16: the oldest non-active receipts are evicted.
	for i := 0; i < 20; i++ {
		r.adb("harness", "type", "adb-connect", "requestId", fmt.Sprintf("n%d", i))
	}
	wantErr(t, r.get("harness", "type", "adb-connect-status", "requestId", "c3"), "adb_connect_receipt_not_found", "")
	wantErr(t, r.get("harness", "type", "adb-connect-status", "requestId", "n3"), "adb_connect_receipt_not_found", "")
	if got := r.get("harness", "type", "adb-connect-status", "requestId", "n4"); got["connected"] != true {
		t.Errorf("n4: %v", got)
	}
}

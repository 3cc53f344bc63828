package soloapp

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/sim/soloapp/core"
	"github.com/solopi-dev/solopi/sim/soloapp/history"
	"github.com/solopi-dev/solopi/sim/soloapp/media"
	"github.com/solopi-dev/solopi/sim/soloapp/plugins"
)

const capturesDir = "/storage/emulated/0/solopi/ScreenCaptures"

func (r *rig) putVideo(name string, ms int64) {
	r.t.Helper()
	data, err := media.BuildMP4(320, 240, ms)
	if err != nil {
		r.t.Fatal(err)
	}
	_ = r.phone.MkdirAll(capturesDir)
	_ = r.phone.WriteFile(capturesDir+"/"+name, data)
}

func TestVideoAnalysis(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	// Long enough that the busy and analyzing checks below always see the
	// first analysis running.
	r.app.SetVideoAnalysisDuration(10 * time.Second)
	r.putVideo("a.mp4", 3000)
	r.putVideo("b.MP4", 5000)
	_ = r.phone.WriteFile(capturesDir+"/.hidden.mp4", []byte("x"))
	_ = r.phone.WriteFile(capturesDir+"/empty.mp4", nil)
	_ = r.phone.WriteFile(capturesDir+"/notes.txt", []byte("x"))
	_ = r.phone.WriteFile("/storage/emulated/0/solopi/other.mp4", []byte("x"))
	wantErr(t, r.get("video-analysis"), "missing_action", "Parameter 'action' is required")
	wantErr(t, r.get("video-analysis", "action", "run"), "unsupported_action", "Unsupported video analysis action: run")
	wantErr(t, r.get("video-analysis", "action", "status", "requestId", "-x"), "invalid_request_id", "Parameter 'requestId' is invalid")
	wantErr(t, r.get("video-analysis", "action", "status", "requestId", "nope"), "analysis_not_found", "Video analysis request was not found")
	wantErr(t, r.mutate("video-analysis", "action", "start", "requestId", "bad id"), "invalid_request_id", "")
	start := func(id, path, offset, thr string) {
		r.adb("video-analysis", "action", "start", "requestId", id, "videoPath", path, "actionOffsetMs", offset, "differenceThreshold", thr)
	}
	status := func(id string) map[string]any { return r.get("video-analysis", "action", "status", "requestId", id) }
	for i, tc := range []struct{ path, offset, thr, code, msg string }{
		{"", "0", "0.5", "invalid_parameter", "videoPath is required"},
		{"/sdcard/solopi/ScreenCaptures/a.mp4", "-1", "0.5", "invalid_parameter", "actionOffsetMs must be between 0 and 3600000"},
		{"/sdcard/solopi/ScreenCaptures/a.mp4", "3600001", "0.5", "invalid_parameter", "actionOffsetMs must be between 0 and 3600000"},
		{"/sdcard/solopi/ScreenCaptures/a.mp4", "10", "0", "invalid_parameter", "differenceThreshold must be greater than 0 and at most 1"},
		{"/sdcard/solopi/ScreenCaptures/a.mp4", "10", "NaN", "invalid_parameter", "differenceThreshold must be greater than 0 and at most 1"},
		{"/sdcard/solopi/ScreenCaptures/a.mp4", "10", "1.5", "invalid_parameter", "differenceThreshold must be greater than 0 and at most 1"},
		{"/sdcard/solopi/ScreenCaptures/.hidden.mp4", "10", "0.5", "invalid_parameter", "videoPath must be a non-empty direct MP4 child of capturesRoot"},
		{"/sdcard/solopi/ScreenCaptures/empty.mp4", "10", "0.5", "invalid_parameter", "videoPath must be a non-empty direct MP4 child of capturesRoot"},
		{"/sdcard/solopi/ScreenCaptures/notes.txt", "10", "0.5", "invalid_parameter", "videoPath must be a non-empty direct MP4 child of capturesRoot"},
		{"/sdcard/solopi/ScreenCaptures/../other.mp4", "10", "0.5", "invalid_parameter", "videoPath must be a non-empty direct MP4 child of capturesRoot"},
		{"/sdcard/solopi/ScreenCaptures/missing.mp4", "10", "0.5", "invalid_parameter", "videoPath must be a non-empty direct MP4 child of capturesRoot"},
	} {
		id := fmt.Sprintf("bad-%d", i)
		start(id, tc.path, tc.offset, tc.thr)
		m := status(id)
		wantErr(t, m, tc.code, tc.msg)
		if str(m, "requestId") != id || has(m, "state") {
			t.Errorf("receipt: %v", m)
		}
	}
	start("va-1", "/sdcard/solopi/ScreenCaptures/a.mp4", "120", "0.02")
	m := status("va-1")
	if str(m, "state") != "analyzing" || m["terminal"] != false || str(m, "videoPath") != "/sdcard/solopi/ScreenCaptures/a.mp4" ||
		str(m, "videoFileName") != "a.mp4" || num(m, "actionOffsetMs") != 120 || m["differenceThreshold"].(interface{ String() string }).String() != "0.02" ||
		num(m, "sizeBytes") <= 0 || num(m, "startedAt") <= 0 {
		t.Fatal(m)
	}
	// A second analysis while one runs: stored analysis_busy receipt.
	start("va-2", "/storage/emulated/0/solopi/ScreenCaptures/b.MP4", "0", "1")
	b := status("va-2")
	wantErr(t, b, "analysis_busy", "Another video analysis is already active")
	if str(b, "activeRequestId") != "va-1" {
		t.Error(b)
	}
	m = r.poll("completed", 15*time.Second, nil, func(m map[string]any) bool { return m["terminal"] == true }, "video-analysis", "action", "status", "requestId", "va-1")
	if str(m, "state") != "completed" || m["success"] != true || num(m, "completedAt") <= 0 || !has(m, "visualResponseTimeMs") ||
		str(m, "measurement") != "SoloPi screen-recording video difference" {
		t.Fatal(m)
	}
	first := num(m, "visualResponseTimeMs")
	// Idempotent: the same requestId returns the stored receipt.
	start("va-1", "/sdcard/solopi/ScreenCaptures/b.MP4", "0", "1")
	if num(status("va-1"), "visualResponseTimeMs") != first {
		t.Error("receipt changed")
	}
	// Deterministic per file and parameters.
	start("va-3", "/sdcard/solopi/ScreenCaptures/a.mp4", "120", "0.02")
	m = r.poll("completed", 15*time.Second, nil, func(m map[string]any) bool { return m["terminal"] == true }, "video-analysis", "action", "status", "requestId", "va-3")
	if num(m, "visualResponseTimeMs") != first {
		t.Errorf("not deterministic: %d vs %d", num(m, "visualResponseTimeMs"), first)
	}
	// A video that is not an MP4 fails the analysis.
	_ = r.phone.WriteFile(capturesDir+"/junk.mp4", []byte("not a movie"))
	start("va-4", "/sdcard/solopi/ScreenCaptures/junk.mp4", "0", "0.5")
	m = r.poll("failed", 15*time.Second, nil, func(m map[string]any) bool { return m["terminal"] == true }, "video-analysis", "action", "status", "requestId", "va-4")
	if str(m, "state") != "failed" || m["success"] != false || str(m, "errorCode") != "analysis_failed" || !has(m, "completedAt") {
		t.Error(m)
	}
	if err := r.app.UninstallPlugin("hulu_screenRecord"); err != nil {
		t.Fatal(err)
	}
	start("va-5", "/sdcard/solopi/ScreenCaptures/a.mp4", "0", "0.5")
	wantErr(t, status("va-5"), "plugin_missing", "Screen recording analyzer plugin is not installed")
	// LRU of 32: old receipts are evicted.
	for i := 0; i < 40; i++ {
		start(fmt.Sprintf("lru-%d", i), "", "0", "0.5")
	}
	wantErr(t, status("bad-0"), "analysis_not_found", "")
	wantErr(t, status("lru-39"), "invalid_parameter", "videoPath is required")
	if n := len(media.SessionsOf(r.app.P).Video.M); n != 32 {
		t.Errorf("receipts: %d", n)
	}
}

func TestStressLifecycle(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	r.app.SetAvailableProcessors(4)
	checkStress(t, r.get("stress", "action", "status"))
	for _, tc := range []struct {
		kv        []string
		code, msg string
	}{
		{[]string{"action", "burn"}, "unsupported_action", "Unsupported stress action: burn"},
		{[]string{"action", "start"}, "missing_session_id", "Parameter 'sessionId' is required"},
		{[]string{"action", "start", "sessionId", "s", "cpuCount", "1.5"}, "invalid_stress_value", "Stress values must be integers"},
		{[]string{"action", "start", "sessionId", "s", "cpuCount", "5", "cpuPercent", "10"}, "invalid_cpu_count", "cpuCount must be between 0 and 4"},
		{[]string{"action", "start", "sessionId", "s", "cpuCount", "1", "cpuPercent", "101"}, "invalid_cpu_percent", "cpuPercent must be between 0 and 100"},
		{[]string{"action", "start", "sessionId", "s", "cpuCount", "1"}, "invalid_cpu_stress", "cpuCount and cpuPercent must both be zero or positive"},
		{[]string{"action", "start", "sessionId", "s", "memory", "2049"}, "invalid_memory", "memory must be between 0 and 2048 MB"},
		{[]string{"action", "start", "sessionId", "s"}, "empty_stress", "At least CPU or memory stress is required"},
		{[]string{"action", "start", "sessionId", "s", "memory", "10", "durationSec", "3601"}, "invalid_duration", "durationSec must be between 1 and 3600"},
		{[]string{"action", "stop"}, "missing_session_id", ""},
		{[]string{"action", "stop", "sessionId", "s"}, "stress_not_active", ""},
	} {
		wantErr(t, r.mutate("stress", tc.kv...), tc.code, tc.msg)
	}
	r.adb("stress", "action", "start", "sessionId", "st-1", "cpuCount", "2", "cpuPercent", "50", "memory", "256", "durationSec", "20")
	m := r.poll("running", 5*time.Second, checkStress, stateIs("running", "failed"), "stress", "action", "status")
	if str(m, "state") != "running" || num(m, "targetCpuCount") != 2 || num(m, "activeCpuCount") != 2 || num(m, "actualMemoryMb") != 256 || !has(m, "startedAt") {
		t.Fatal(m)
	}
	wantErr(t, r.mutate("stress", "action", "start", "sessionId", "st-2", "memory", "1"), "stress_conflict", "A stress session is already active")
	wantErr(t, r.mutate("stress", "action", "stop", "sessionId", "st-2"), "session_mismatch", "Stress sessionId does not match")
	// Auto-zero at the deadline.
	m = r.poll("auto stop", 30*time.Second, checkStress, stateIs("stopped", "failed"), "stress", "action", "status")
	if str(m, "state") != "stopped" || num(m, "activeCpuCount") != 0 || num(m, "actualMemoryMb") != 0 || !has(m, "finishedAt") {
		t.Fatal(m)
	}
	// Explicit stop.
	r.adb("stress", "action", "start", "sessionId", "st-3", "memory", "64", "durationSec", "600")
	r.poll("running", 5*time.Second, checkStress, stateIs("running"), "stress", "action", "status")
	r.adb("stress", "action", "stop", "sessionId", "st-3")
	if m := r.get("stress", "action", "status"); str(m, "state") != "stopping" || num(m, "targetMemoryMb") != 0 {
		t.Error(m)
	}
	r.poll("stopped", 5*time.Second, checkStress, stateIs("stopped"), "stress", "action", "status")
	// Stop before the load is applied.
	r.app.SetPermissionDialogDelay(10 * time.Second)
	r.adb("stress", "action", "start", "sessionId", "st-4", "memory", "64")
	r.adb("stress", "action", "stop", "sessionId", "st-4")
	if m := r.get("stress", "action", "status"); str(m, "state") != "stopped" || has(m, "startedAt") {
		t.Error(m)
	}
	r.app.SetPermissionDialogDelay(0)
	r.app.SetExternalStress(true)
	wantErr(t, r.mutate("stress", "action", "start", "sessionId", "x", "memory", "1"), "external_stress_conflict", "CPU or memory stress is already active outside this session")
	r.app.SetExternalStress(false)
	r.app.SetStressServiceAvailable(false)
	wantErr(t, r.mutate("stress", "action", "start", "sessionId", "x", "memory", "1"), "stress_service_unavailable", "Stress service is not available")
	if m := r.get("stress", "action", "status"); has(m, "activeCpuCount") {
		t.Error(m)
	}
}

// zipOf builds a plugin archive; files maps entry names to contents.
func zipOf(t *testing.T, files map[string]string, order ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, n := range order {
		f, err := w.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = f.Write([]byte(files[n]))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func pluginZip(t *testing.T, name string, version string, wrapper string) []byte {
	jar := "dex-bytes-" + name
	sum := md5.Sum([]byte(jar))
	desc := fmt.Sprintf(`{"name":%q,"version":%s,"filter":"com.example","jar":"test.jar","jarMd5":%q,"mainClass":"a.B","mainMethod":"init"}`,
		name, version, hex.EncodeToString(sum[:]))
	return zipOf(t, map[string]string{wrapper + "desc.json": desc, wrapper + "test.jar": jar}, wrapper+"desc.json", wrapper+"test.jar")
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func TestPluginListImportRemove(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	if plugins.PluginID("hulu_screenRecord") != "plugin-6b6edb4fe787608f1c46fec05b7584ff50aeb65db25a7f8de5e3f02925fec228" {
		t.Fatal("pluginId vector")
	}
	wantErr(t, r.get("plugin"), "missing_action", "")
	wantErr(t, r.get("plugin", "action", "zap"), "unsupported_action", "Unsupported plugin action: zap")
	patch := "/storage/emulated/0/solopi/patch/"
	good := pluginZip(t, "hulu_demo", "2.0", "wrap/")
	_ = r.phone.MkdirAll(patch)
	_ = r.phone.WriteFile(patch+"demo.zip", good)
	_ = r.phone.WriteFile(patch+"bad name.zip", good)
	_ = r.phone.WriteFile(patch+"notes.txt", []byte("x"))
	l := r.get("plugin", "action", "list")
	list := l["plugins"].([]any)
	if num(l, "total") != 2 || str(list[0].(map[string]any), "name") != "hulu_hotPatch" || str(list[0].(map[string]any), "status") != "built_in" ||
		str(list[1].(map[string]any), "status") != "loaded" || str(l, "importPath") != "/storage/emulated/0/solopi/patch" {
		t.Fatal(l)
	}
	files := l["importFiles"].([]any)
	if len(files) != 1 || str(files[0].(map[string]any), "fileId") != plugins.ImportFileID("demo.zip") || files[0].(map[string]any)["sha256Required"] != true {
		t.Fatal(files)
	}
	fileID := plugins.ImportFileID("demo.zip")
	// In-progress long enough for the busy and conflict checks below.
	r.app.SetPluginMutationDelay(5 * time.Second)
	for _, tc := range []struct {
		kv        []string
		code, msg string
	}{
		{[]string{"requestId", "r", "sha256", sha(good), "fileId", fileID, "url", "http://x"}, "url_not_allowed", "Plugin URLs are not accepted by this protocol"},
		{[]string{"sha256", sha(good), "fileId", fileID}, "missing_request_id", ""},
		{[]string{"requestId", "r"}, "missing_sha256", ""},
		{[]string{"requestId", "r", "sha256", "abc"}, "invalid_sha256", ""},
		{[]string{"requestId", "r", "sha256", sha(good)}, "missing_import_selector", "Parameter 'fileName' or 'fileId' is required"},
		{[]string{"requestId", "r", "sha256", sha(good), "fileName", "../x.zip"}, "invalid_file_name", ""},
		{[]string{"requestId", "r", "sha256", sha(good), "fileId", "plugin-import-xyz"}, "invalid_file_id", ""},
		{[]string{"requestId", "r", "sha256", sha(good), "fileName", "demo.zip", "fileId", plugins.ImportFileID("other.zip")}, "import_file_not_found", ""},
	} {
		wantErr(t, r.mutate("plugin", append([]string{"action", "import"}, tc.kv...)...), tc.code, tc.msg)
	}
	// Wrong digest: failed receipt, no staging file left, source kept.
	r.adb("plugin", "action", "import", "requestId", "imp-bad", "sha256", strings.Repeat("0", 64), "fileId", fileID)
	m := r.poll("failed", 15*time.Second, nil, func(m map[string]any) bool { return str(m, "state") != "in_progress" }, "plugin", "action", "mutationStatus", "requestId", "imp-bad")
	if str(m, "state") != "failed" || str(sub(m, "mutation"), "errorCode") != "sha256_mismatch" {
		t.Fatal(m)
	}
	r.app.Mu.Lock()
	staged := len(r.app.Plugins.Internal)
	r.app.Mu.Unlock()
	if staged != 0 {
		t.Errorf("staging left: %d", staged)
	}
	// The real import.
	r.adb("plugin", "action", "install", "requestId", "imp-1", "sha256", strings.ToUpper(sha(good)), "fileName", "demo.zip")
	acc := r.get("plugin", "action", "mutationStatus", "requestId", "imp-1")
	mu := sub(acc, "mutation")
	if str(acc, "state") != "in_progress" || mu["accepted"] != true || str(mu, "subject") != fileID+":"+sha(good) || str(mu, "action") != "import" {
		t.Fatal(acc)
	}
	// Busy while in progress; a conflicting reuse of the requestId.
	wantErr(t, r.mutate("plugin", "action", "import", "requestId", "imp-2", "sha256", sha(good), "fileId", fileID), "mutation_busy", "Another plugin mutation is still in progress")
	wantErr(t, r.mutate("plugin", "action", "import", "requestId", "imp-bad", "sha256", sha(good), "fileId", fileID), "request_id_conflict", "")
	m = r.poll("done", 15*time.Second, nil, func(m map[string]any) bool { return str(m, "state") != "in_progress" }, "plugin", "action", "mutationStatus", "requestId", "imp-1")
	mu = sub(m, "mutation")
	if str(m, "state") != "completed_restart_required" || mu["success"] != true || mu["restartRequired"] != true || mu["sourceFileRetained"] != true ||
		str(mu, "sourceFileId") != fileID || num(mu, "sizeBytes") != int64(len(good)) || str(mu, "sha256") != sha(good) ||
		str(sub(mu, "plugin"), "name") != "hulu_demo" || sub(mu, "plugin")["runtimeLoaded"] != false {
		t.Fatal(m)
	}
	if _, err := r.phone.ReadFile(patch + "demo.zip"); err != nil {
		t.Error("source file was not kept")
	}
	// Same version again: not newer.
	r.adb("plugin", "action", "import", "requestId", "imp-3", "sha256", sha(good), "fileId", fileID)
	m = r.poll("done", 15*time.Second, nil, func(m map[string]any) bool { return str(m, "state") != "in_progress" }, "plugin", "action", "mutationStatus", "requestId", "imp-3")
	if str(sub(m, "mutation"), "errorCode") != "version_not_newer" {
		t.Error(m)
	}
	r.app.Restart()
	r.waitReady()
	wantErr(t, r.get("plugin", "action", "mutationStatus", "requestId", "imp-1"), "receipt_not_found", "Mutation receipt was not found")
	var demo map[string]any
	for _, p := range r.get("plugin", "action", "list")["plugins"].([]any) {
		if str(p.(map[string]any), "name") == "hulu_demo" {
			demo = p.(map[string]any)
		}
	}
	if demo == nil || demo["runtimeLoaded"] != true || str(demo, "status") != "loaded" {
		t.Fatalf("after restart: %v", demo)
	}
	// Remove: confirmation rules, core protection, success.
	id := plugins.PluginID("hulu_demo")
	wantErr(t, r.mutate("plugin", "action", "remove", "requestId", "rm", "pluginId", id, "confirmId", "x"), "confirmation_mismatch", "")
	wantErr(t, r.mutate("plugin", "action", "remove", "requestId", "rm", "pluginId", "plugin-1"), "invalid_plugin_id", "")
	r.adb("plugin", "action", "remove", "requestId", "rm-core", "pluginId", plugins.PluginID("hulu_hotPatch"), "confirmId", plugins.PluginID("hulu_hotPatch"))
	m = r.poll("done", 15*time.Second, nil, func(m map[string]any) bool { return str(m, "state") != "in_progress" }, "plugin", "action", "mutationStatus", "requestId", "rm-core")
	if str(sub(m, "mutation"), "errorCode") != "core_plugin_protected" {
		t.Error(m)
	}
	r.adb("plugin", "action", "remove", "requestId", "rm-1", "pluginId", id, "confirmId", id)
	m = r.poll("done", 15*time.Second, nil, func(m map[string]any) bool { return str(m, "state") != "in_progress" }, "plugin", "action", "mutationStatus", "requestId", "rm-1")
	mu = sub(m, "mutation")
	if str(m, "state") != "completed_restart_required" || mu["removedFromRegistry"] != true || str(mu, "runtimeEffect") != "restart_required_for_full_removal" {
		t.Fatal(m)
	}
	// plugin_in_use while a runtime session exists.
	r.adb("stress", "action", "start", "sessionId", "load", "memory", "8")
	r.poll("running", 5*time.Second, checkStress, stateIs("running"), "stress", "action", "status")
	wantErr(t, r.mutate("plugin", "action", "remove", "requestId", "rm-2", "pluginId", id, "confirmId", id), "plugin_in_use", "")
	r.adb("stress", "action", "stop", "sessionId", "load")
	r.poll("stopped", 5*time.Second, checkStress, stateIs("stopped"), "stress", "action", "status")
	// The plugin activity bug mode: every mutation fails the activity check.
	r.app.SetPluginActivityBug(true)
	r.adb("plugin", "action", "import", "requestId", "imp-bug", "sha256", sha(good), "fileId", fileID)
	m = r.poll("done", 15*time.Second, nil, func(m map[string]any) bool { return str(m, "state") != "in_progress" }, "plugin", "action", "mutationStatus", "requestId", "imp-bug")
	mu = sub(m, "mutation")
	if str(m, "state") != "failed" || str(mu, "errorCode") != "activity_status_unavailable" || str(mu, "error") != "Unable to verify that the related activity is idle" {
		t.Fatal(m)
	}
}

func TestPluginArchiveValidation(t *testing.T) {
	t.Parallel()
	jar := "dex"
	sum := md5.Sum([]byte(jar))
	jarMd5 := hex.EncodeToString(sum[:])
	desc := func(extra string) string {
		return `{"name":"p","version":1.5,"jar":"test.jar","jarMd5":"` + jarMd5 + `"` + extra + `}`
	}
	for _, tc := range []struct {
		files map[string]string
		order []string
		code  string
	}{
		{map[string]string{"desc.json": desc(""), "test.jar": jar}, []string{"desc.json", "test.jar"}, ""},
		{map[string]string{"test.jar": jar}, []string{"test.jar"}, "missing_manifest"},
		{map[string]string{"a/desc.json": desc(""), "b/desc.json": desc("")}, []string{"a/desc.json", "b/desc.json"}, "ambiguous_manifest"},
		{map[string]string{"w/desc.json": desc(""), "test.jar": jar}, []string{"w/desc.json", "test.jar"}, "invalid_archive_layout"},
		{map[string]string{"../desc.json": desc("")}, []string{"../desc.json"}, "unsafe_archive_path"},
		{map[string]string{"desc.json": desc(""), "desc.json ": ""}, []string{"desc.json", "desc.json"}, "duplicate_archive_entry"},
		{map[string]string{"desc.json": "{"}, []string{"desc.json"}, "invalid_manifest"},
		{map[string]string{"desc.json": `{"name":"hulu_hotPatch","version":2,"jar":"j","jarMd5":"x"}`}, []string{"desc.json"}, "core_plugin_protected"},
		{map[string]string{"desc.json": `{"name":"-bad","version":2}`}, []string{"desc.json"}, "invalid_plugin_name"},
		{map[string]string{"desc.json": `{"name":"p","version":0}`}, []string{"desc.json"}, "invalid_plugin_version"},
		{map[string]string{"desc.json": `{"name":"p","version":1}`}, []string{"desc.json"}, "empty_plugin"},
		{map[string]string{"desc.json": desc(""), "test.jar": "other"}, []string{"desc.json", "test.jar"}, "payload_digest_mismatch"},
		{map[string]string{"desc.json": desc("")}, []string{"desc.json"}, "missing_archive_entry"},
		{map[string]string{"desc.json": `{"name":"p","version":1,"jar":"test.jar"}`, "test.jar": jar}, []string{"desc.json", "test.jar"}, "missing_payload"},
		{map[string]string{"desc.json": desc(`,"mainClass":"A"`), "test.jar": jar}, []string{"desc.json", "test.jar"}, "plugin_validation_failed"},
	} {
		_, fail := plugins.ValidatePluginArchive(zipOf(t, tc.files, tc.order...))
		got := ""
		if fail != nil {
			got, _ = fail.Get("errorCode").(string)
		}
		if got != tc.code {
			t.Errorf("%v: got %q want %q", tc.order, got, tc.code)
		}
	}
	if _, fail := plugins.ValidatePluginArchive(zipOf(t, nil)); fail == nil || fail.Get("errorCode") != "empty_archive" {
		t.Errorf("empty: %v", fail)
	}
}

func TestHistory(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	if history.HistoryID("replay", "smoke_1700000000000") != "replay-801ae3c1a4e4c836fb771adc52e612378c1bfa8ed9c87f5d1f28adb3d22d5414" {
		t.Fatal("history id vector")
	}
	root := "/storage/emulated/0/solopi/replay/"
	for i, name := range []string{"smoke_1700000000000", "login_1700000005000"} {
		dir := root + name
		_ = r.phone.MkdirAll(dir)
		exc := ""
		if i == 1 {
			exc = `,"exceptionMessage":"boom","exceptionStep":2`
		}
		_ = r.phone.WriteFile(dir+"/info.json", []byte(fmt.Sprintf(`{"caseName":"c%d","targetAppPkg":"com.example.counter","startTime":%d,"endTime":%d,"platform":"Android"%s}`, i, 1700000000000+int64(i)*5000, 1700000001000+int64(i)*5000, exc)))
		_ = r.phone.WriteFile(dir+"/steps.json", []byte(`[{"a":1}]`))
		_ = r.phone.WriteFile(dir+"/running.log", []byte("line1\nline2\n"))
		_ = r.phone.WriteFile(dir+"/shot.png", []byte("png"))
	}
	_ = r.phone.MkdirAll(root + "no-info")
	l := r.get("history", "action", "listReplay")
	recs := l["records"].([]any)
	if num(l, "total") != 2 || num(l, "returned") != 2 || l["truncated"] != false || str(recs[0].(map[string]any), "caseName") != "c1" ||
		str(recs[0].(map[string]any), "status") != "failed" || str(recs[1].(map[string]any), "status") != "passed" {
		t.Fatal(l)
	}
	if l := r.get("history", "action", "listReplay", "limit", "1"); num(l, "returned") != 1 || l["truncated"] != true {
		t.Error(l)
	}
	wantErr(t, r.get("history", "action", "listReplay", "limit", "0"), "invalid_limit", "Parameter 'limit' must be between 1 and 500")
	wantErr(t, r.get("history", "action", "listReplay", "limit", "x"), "invalid_limit", "Parameter 'limit' must be an integer")
	wantErr(t, r.get("history"), "missing_action", "")
	id := history.HistoryID("replay", "smoke_1700000000000")
	g := r.get("history", "action", "getReplay", "id", id)
	if str(g, "id") != id || str(sub(g, "info"), "caseName") != "c0" || len(g["files"].([]any)) != 4 ||
		str(sub(g, "log"), "text") != "line1\nline2\n" || sub(g, "steps")["content"] == nil {
		t.Fatal(g)
	}
	wantErr(t, r.get("history", "action", "getReplay", "id", "replay-"+strings.Repeat("0", 64)), "record_not_found", "Replay history record was not found")
	wantErr(t, r.get("history", "action", "getReplay", "id", "x"), "invalid_id", "")
	// A performance record from a real recording.
	r.adb("performance", "mode", "normal", "action", "start", "items", "FPS", "sessionId", "h1")
	r.poll("recording", 5*time.Second, checkPerf, stateIs("recording"), "performance", "mode", "status")
	r.sleep(1200 * time.Millisecond)
	r.adb("performance", "mode", "normal", "action", "stop", "sessionId", "h1")
	r.poll("stopped", 5*time.Second, checkPerf, stateIs("stopped"), "performance", "mode", "status")
	pl := r.get("history", "action", "listPerformance")
	precs := pl["records"].([]any)
	if num(pl, "total") != 1 || num(precs[0].(map[string]any), "fileCount") != 4 || len(precs[0].(map[string]any)["metrics"].([]any)) != 4 {
		t.Fatal(pl)
	}
	pid := history.HistoryID("performance", "performance-h1")
	gp := r.get("history", "action", "getPerformance", "id", pid)
	pf := gp["files"].([]any)
	if len(pf) != 4 || num(gp, "contentLimitBytes") != 524288 || !strings.HasPrefix(str(pf[0].(map[string]any), "preview"), "RecordTime,") {
		t.Fatal(gp)
	}
	if !strings.Contains(fmt.Sprint(gp), "帧率") {
		t.Errorf("GBK preview not decoded: %v", gp)
	}
	// Deletion: transport, confirmation, idempotency and conflicts.
	wantErr(t, r.direct(core.ViaHTTP, "history", "action", "deleteReplay", "requestId", "d1", "id", id, "confirmId", id), "mutation_transport_required", "History deletion requires the ADB scheme transport")
	wantErr(t, r.mutate("history", "action", "deleteReplay", "requestId", "d1", "id", id, "confirmId", "x"), "confirmation_mismatch", "Parameter 'confirmId' must exactly match 'id'")
	wantErr(t, r.mutate("history", "action", "deleteReplay", "id", id, "confirmId", id), "missing_request_id", "")
	r.adb("history", "action", "deleteReplay", "requestId", "d1", "id", id, "confirmId", id)
	ms := r.get("history", "action", "mutationStatus", "requestId", "d1")
	mu := sub(ms, "mutation")
	if str(ms, "state") != "completed" || mu["success"] != true || mu["deleted"] != true || num(mu, "deletedFiles") != 4 {
		t.Fatal(ms)
	}
	for p := range r.phone.allFiles() {
		if strings.Contains(p, "smoke_1700000000000") {
			t.Errorf("left behind: %s", p)
		}
	}
	wantErr(t, r.mutate("history", "action", "deleteReplay", "requestId", "d1", "id", pid, "confirmId", pid), "invalid_id", "")
	wantErr(t, r.mutate("history", "action", "deletePerformance", "requestId", "d1", "id", pid, "confirmId", pid), "request_id_conflict", "")
	if again := r.mutate("history", "action", "deleteReplay", "requestId", "d1", "id", id, "confirmId", id); str(again, "state") != "completed" {
		t.Error(again)
	}
	r.adb("history", "action", "deleteReplay", "requestId", "d2", "id", id, "confirmId", id)
	if mu := sub(r.get("history", "action", "mutationStatus", "requestId", "d2"), "mutation"); str(mu, "errorCode") != "record_not_found" || mu["deleted"] != false {
		t.Error(mu)
	}
	r.adb("performance", "mode", "normal", "action", "start", "items", "CPU", "sessionId", "h2")
	r.poll("recording", 5*time.Second, checkPerf, stateIs("recording"), "performance", "mode", "status")
	r.adb("history", "action", "deletePerformance", "requestId", "d3", "id", pid, "confirmId", pid)
	if mu := sub(r.get("history", "action", "mutationStatus", "requestId", "d3"), "mutation"); str(mu, "errorCode") != "performance_active" {
		t.Error(mu)
	}
	r.adb("performance", "mode", "normal", "action", "stop", "sessionId", "h2")
	r.poll("stopped", 5*time.Second, checkPerf, stateIs("stopped"), "performance", "mode", "status")
	r.adb("history", "action", "deletePerformance", "requestId", "d4", "id", pid, "confirmId", pid)
	if ms := r.get("history", "action", "mutationStatus", "requestId", "d4"); str(ms, "state") != "completed" {
		t.Error(ms)
	}
	wantErr(t, r.get("history", "action", "mutationStatus", "requestId", "zzz"), "receipt_not_found", "Mutation receipt was not found")
}

// TestSessionMutationsOverHTTP walks the over-HTTP rejections
// (docs/device-protocol.md#resolvers): every mutation of the session
// resolvers is refused on the HTTP channel with the exact payload.
func TestSessionMutationsOverHTTP(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	for _, tc := range []struct {
		action string
		kv     []string
		body   string
	}{
		{"performance", []string{"mode", "normal", "action", "start", "items", "CPU"}, `{"success":false,"error":"Performance start and stop require the ADB Scheme transport"}`},
		{"performance", []string{"mode", "normal", "action", "stop", "sessionId", "x"}, `{"success":false,"error":"Performance start and stop require the ADB Scheme transport"}`},
		{"performance", []string{"mode", "display", "action", "start", "items", "CPU"}, `{"success":false,"error":"Performance display start and stop require the ADB Scheme transport"}`},
		{"performance", []string{"mode", "display", "action", "stop", "sessionId", "x"}, `{"success":false,"error":"Performance display start and stop require the ADB Scheme transport"}`},
		{"record", []string{"recordMode", "normal"}, `{"success":false,"errorCode":"mutation_transport_required","error":"Recording changes require the ADB scheme transport"}`},
		{"record", []string{"recordMode", "stop"}, `{"success":false,"errorCode":"mutation_transport_required","error":"Recording changes require the ADB scheme transport"}`},
		{"screen-record", []string{"action", "start"}, `{"success":false,"errorCode":"mutation_transport_required","error":"Screen recording changes require the ADB scheme transport"}`},
		{"screen-record", []string{"action", "stop"}, `{"success":false,"errorCode":"mutation_transport_required","error":"Screen recording changes require the ADB scheme transport"}`},
		{"scan", []string{"action", "start"}, `{"success":false,"errorCode":"mutation_transport_required","error":"Scan changes require the ADB scheme transport"}`},
		{"scan", []string{"action", "cancel"}, `{"success":false,"errorCode":"mutation_transport_required","error":"Scan changes require the ADB scheme transport"}`},
		{"video-analysis", []string{"action", "start", "requestId", "r"}, `{"success":false,"errorCode":"adb_required","error":"Video analysis start is only available through the protected ADB transport"}`},
		{"stress", []string{"action", "start"}, `{"success":false,"errorCode":"mutation_transport_required","error":"Stress changes require the ADB scheme transport"}`},
		{"stress", []string{"action", "stop"}, `{"success":false,"errorCode":"mutation_transport_required","error":"Stress changes require the ADB scheme transport"}`},
		{"history", []string{"action", "deleteReplay"}, `{"success":false,"errorCode":"mutation_transport_required","error":"History deletion requires the ADB scheme transport"}`},
		{"history", []string{"action", "deletePerformance"}, `{"success":false,"errorCode":"mutation_transport_required","error":"History deletion requires the ADB scheme transport"}`},
		{"plugin", []string{"action", "import"}, `{"success":false,"errorCode":"mutation_transport_required","error":"Plugin installation requires the ADB scheme transport"}`},
		{"plugin", []string{"action", "install"}, `{"success":false,"errorCode":"mutation_transport_required","error":"Plugin installation requires the ADB scheme transport"}`},
		{"plugin", []string{"action", "remove"}, `{"success":false,"errorCode":"mutation_transport_required","error":"Plugin removal requires the ADB scheme transport"}`},
	} {
		ct, body, _ := r.raw(http.MethodGet, queryPath(tc.action, tc.kv...))
		if ct != "application/json" || body != tc.body {
			t.Errorf("%s %v: %s %s", tc.action, tc.kv, ct, body)
		}
	}
	// Nothing was stored by the refused video-analysis start.
	wantErr(t, r.get("video-analysis", "action", "status", "requestId", "r"), "analysis_not_found", "")
	// The public deep link refuses too (only logged; nothing changes).
	if err := r.app.HandleActivity(context.Background(), solopiPkg+"/com.alipay.hulu.common.scheme.SchemeActivity",
		"solopi://startaction/stress?action=start&sessionId=x&memory=1"); err != nil {
		t.Fatal(err)
	}
	if m := r.get("stress", "action", "status"); str(m, "state") != "idle" {
		t.Error(m)
	}
}

// TestRestartLosesSessions checks the app-restart rule
// (docs/device-protocol.md#app-restart): sessions and receipts die with the
// process, files survive.
func TestRestartLosesSessions(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	r.putVideo("keep.mp4", 1000)
	r.adb("stress", "action", "start", "sessionId", "s", "memory", "8")
	r.adb("scan", "action", "start", "sessionId", "q")
	r.adb("screen-record", "action", "start", "sessionId", "v")
	r.adb("performance", "mode", "display", "action", "start", "items", "CPU", "sessionId", "d")
	r.adb("record", "recordMode", "normal", "sessionId", "rec", "caseName", "c", "targetApp", counterPkg)
	r.adb("video-analysis", "action", "start", "requestId", "va", "videoPath", "/sdcard/solopi/ScreenCaptures/keep.mp4", "actionOffsetMs", "0", "differenceThreshold", "0.5")
	r.poll("recording", 5*time.Second, checkRecording, stateIs("recording"), "record", "recordMode", "status")
	r.app.Restart()
	r.waitReady()
	for _, q := range [][]string{{"stress", "action", "status"}, {"scan", "action", "status"}, {"screen-record", "action", "status"},
		{"performance", "mode", "display", "action", "status"}, {"performance", "mode", "status"}, {"record", "recordMode", "status"}} {
		if m := r.get(q[0], q[1:]...); str(m, "state") != "idle" || has(m, "sessionId") {
			t.Errorf("%v after restart: %v", q, m)
		}
	}
	wantErr(t, r.get("video-analysis", "action", "status", "requestId", "va"), "analysis_not_found", "")
	if s := r.get("status", "type", "status"); str(s, "status") != "none" {
		t.Error(s)
	}
	if _, err := r.phone.ReadFile(capturesDir + "/keep.mp4"); err != nil {
		t.Error("file lost")
	}
	// Maintenance is free again: nothing holds a runtime session.
	if release, err := r.app.BeginMaintenance(); err != nil {
		t.Error(err)
	} else {
		release()
	}
}

// removeLog records the order of Remove calls.
type removeLog struct {
	*fakePhone
	removed []string
}

func (p *removeLog) Remove(path string) error {
	p.fakePhone.mu.Lock()
	p.removed = append(p.removed, path)
	p.fakePhone.mu.Unlock()
	return p.fakePhone.Remove(path)
}

func TestHistoryOfRealReplayAndDeleteOrder(t *testing.T) {
	t.Parallel()
	ph := &removeLog{fakePhone: newFakePhone()}
	clk := newRig(t, core.Config{}).clk
	r := &rig{t: t, app: New(core.Config{Settings: map[string]string{"KEY_REPLAY_AUTO_START": "true"}}, ph, clk), phone: ph.fakePhone, clk: clk}
	t.Cleanup(func() { r.app.Mu.Lock(); p := r.app.P; r.app.Mu.Unlock(); p.Cancel() })
	r.waitReady()
	r.mustImport("smoke", passingSteps()...)
	r.startReplay("smoke", "rp-1")
	r.waitRun("rp-1", "passed", "failed")
	l := r.get("history", "action", "listReplay")
	recs := l["records"].([]any)
	if len(recs) != 1 {
		t.Fatal(l)
	}
	rec := recs[0].(map[string]any)
	if str(rec, "caseName") != "smoke" || str(rec, "targetAppPkg") != counterPkg || str(rec, "status") != "passed" || rec["metadataAvailable"] != true {
		t.Errorf("summary: %v", rec)
	}
	id := str(rec, "id")
	ph.fakePhone.mu.Lock()
	ph.removed = nil
	ph.fakePhone.mu.Unlock()
	r.adb("history", "action", "deleteReplay", "requestId", "del", "id", id, "confirmId", id)
	if ms := r.get("history", "action", "mutationStatus", "requestId", "del"); str(ms, "state") != "completed" {
		t.Fatal(ms)
	}
	n := len(ph.removed)
	if n < 3 || !strings.HasSuffix(ph.removed[n-2], "/info.json") || !strings.HasPrefix(str(rec, "relativePath"), "smoke_") ||
		!strings.HasSuffix(ph.removed[n-1], "/"+str(rec, "relativePath")) {
		t.Errorf("deletion order: %v", ph.removed)
	}
	// While a replay runs (auto-start off: it stays running), deletion is
	// refused with replay_active.
	r2 := newRig(t, core.Config{})
	dir := "/storage/emulated/0/solopi/replay/x_1"
	_ = r2.phone.MkdirAll(dir)
	_ = r2.phone.WriteFile(dir+"/info.json", []byte(`{"caseName":"x"}`))
	r2.mustImport("smoke", passingSteps()...)
	r2.startReplay("smoke", "rp-2")
	r2.waitRun("rp-2", "running")
	xid := history.HistoryID("replay", "x_1")
	r2.adb("history", "action", "deleteReplay", "requestId", "d", "id", xid, "confirmId", xid)
	if mu := sub(r2.get("history", "action", "mutationStatus", "requestId", "d"), "mutation"); str(mu, "errorCode") != "replay_active" ||
		str(mu, "error") != "An active replay session prevents history deletion" {
		t.Error(mu)
	}
}

package main

// End-to-end tests of SoloPi's other session types (issue 9): performance
// recording, live display and history, stress, interactive recording,
// screen recording with video analysis, scanning and plugins — the built
// binary against a simulated farm, every real stdout schema-checked.

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/internal/browsertest"
	"github.com/solopi-dev/solopi/schemas"
	"github.com/solopi-dev/solopi/sim"
)

// e2eFastPoll makes the host poll quickly: the simulator runs faster than
// real time, the host's polling does not.
var e2eFastPoll = []string{"--poll-interval", "0.05"}

func e2ePoll(args ...string) []string { return append(args, e2eFastPoll...) }

func TestE2EPerformanceRecordAnalyzeHistoryAndDisplay(t *testing.T) {
	r := newE2ERig(t, sim.FarmOptions{})

	m := r.expect(0, "perf-list")
	var keys []string
	items, _ := m["items"].([]any)
	for _, it := range items {
		keys = append(keys, e2eStr(it.(map[string]any), "key"))
	}
	for _, k := range []string{"Battery", "CPU", "FPS", "Memory", "Network", "Response", "Status", "Temperature"} {
		if !slices.Contains(keys, k) {
			t.Errorf("perf-list lacks %s: %v", k, keys)
		}
	}

	m = r.expect(0, e2ePoll("perf-start", "--global", "--items", "CPU,Memory")...)
	sid := e2eStr(m, "sessionId")
	if e2eStr(m, "state") != "recording" || sid == "" || e2eStr(m, "targetPackage") != "-" || !slices.Equal(e2eStrings(m, "items"), []string{"CPU", "Memory"}) {
		t.Fatalf("perf-start: %v", m)
	}
	// A second recording is refused while this one runs.
	m = r.expect(2, e2ePoll("perf-start", "--global", "--items", "CPU")...)
	if e2eStr(m, "errorCode") == "" {
		t.Errorf("second perf-start: %v", m)
	}
	r.dev.Clock().Sleep(context.Background(), 12*time.Second) // device time: some samples
	m = r.expect(0, "perf-status")
	if e2eStr(m, "sessionId") != sid || e2eStr(m, "state") != "recording" || !e2eBool(m, "recording") {
		t.Errorf("perf-status: %v", m)
	}

	dir := filepath.Join(t.TempDir(), "perf")
	m = r.expect(0, e2ePoll("perf-stop", "--session-id", sid, "--output", dir)...)
	outputPath := e2eStr(m, "outputPath")
	if e2eStr(m, "state") != "stopped" || !strings.HasSuffix(outputPath, "/performance-"+sid) {
		t.Fatalf("perf-stop: %v", m)
	}
	csvs, _ := filepath.Glob(filepath.Join(dir, "*.csv"))
	if len(csvs) < 2 {
		t.Fatalf("perf-stop pulled %d CSV files into %s", len(csvs), dir)
	}
	for _, f := range csvs {
		b, err := os.ReadFile(f)
		if err != nil || len(b) == 0 {
			t.Fatalf("CSV %s: %v", f, err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if !strings.HasPrefix(lines[0], "RecordTime,") || !strings.HasSuffix(strings.TrimSpace(lines[0]), ",extra,SimpleTime") || len(lines) < 3 {
			t.Errorf("CSV %s: header %q, %d lines", filepath.Base(f), lines[0], len(lines))
		}
	}
	// The pulled directory is analysed and has its report.
	stopReport := e2eStr(m, "report")
	if stopReport != filepath.Join(dir, "report.html") {
		t.Fatalf("perf-stop report %q (%v)", stopReport, m["reportError"])
	}
	// The pulled directory is ours: a second pull into it is refused.
	r.expect(3, e2ePoll("perf-stop", "--session-id", sid, "--output", dir)...)

	charts := filepath.Join(t.TempDir(), "charts")
	m = r.expect(0, "perf-analyze", "--input", dir, "--output", charts)
	analyzeReport := e2eStr(m, "report")
	if analyzeReport != filepath.Join(charts, "report.html") {
		t.Fatalf("perf-analyze report %q (%v)", analyzeReport, m["reportError"])
	}
	// Last, so that a machine without a browser still runs the rest.
	defer checkPerfReports(t, len(csvs), stopReport, analyzeReport)
	svgs, _ := filepath.Glob(filepath.Join(charts, "*.svg"))
	if len(svgs) != len(csvs) {
		t.Errorf("perf-analyze wrote %d SVG charts for %d CSV files", len(svgs), len(csvs))
	}
	for _, f := range svgs {
		if b, err := os.ReadFile(f); err != nil || !bytes.Contains(b, []byte("<svg")) {
			t.Errorf("chart %s is not an SVG: %v", f, err)
		}
	}
	files, _ := m["files"].([]any)
	if len(files) != len(csvs) {
		t.Errorf("perf-analyze describes %d files for %d CSVs", len(files), len(csvs))
	}
	for _, f := range files {
		cols, _ := f.(map[string]any)["columns"].([]any)
		if len(cols) < 2 {
			t.Errorf("perf-analyze file without columns: %v", f)
			continue
		}
		// The device writes GBK by default: recognised, not decoded, so
		// the metric is named from the (UTF-8) file name.
		fm := f.(map[string]any)
		if enc := e2eStr(fm, "encoding"); enc != "gbk-undecoded" {
			t.Errorf("perf-analyze encoding of a default (GBK) CSV: %q", enc)
		}
		if e2eStr(cols[1].(map[string]any), "kind") != "numeric" {
			t.Errorf("perf-analyze value column: %v", cols[1])
		}
		metric := e2eObj(fm, "metric")
		name := e2eStr(metric, "name")
		if name == "" || strings.ContainsRune(name, '\uFFFD') || !strings.HasPrefix(filepath.Base(e2eStr(fm, "path")), name+"_") || e2eNum(metric, "sampleCount") < 2 {
			t.Errorf("perf-analyze metric: %v", metric)
		}
		if !(e2eNum(metric, "min") <= e2eNum(metric, "median") && e2eNum(metric, "median") <= e2eNum(metric, "p90") && e2eNum(metric, "p90") <= e2eNum(metric, "max")) {
			t.Errorf("perf-analyze statistics out of order: %v", metric)
		}
	}

	// History: the record is listed, readable and deletable.
	m = r.expect(0, "perf-history-list")
	var id string
	recs, _ := m["records"].([]any)
	for _, rec := range recs {
		if e2eStr(rec.(map[string]any), "relativePath") == "performance-"+sid {
			id = e2eStr(rec.(map[string]any), "id")
		}
	}
	if id == "" {
		t.Fatalf("perf-history-list does not list performance-%s: %v", sid, m)
	}
	m = r.expect(0, "perf-history-get", "--id", id)
	hfiles, _ := m["files"].([]any)
	if e2eStr(m, "id") != id || len(hfiles) != len(csvs) {
		t.Errorf("perf-history-get: %v", m)
	}
	for _, f := range hfiles {
		if !strings.HasPrefix(e2eStr(f.(map[string]any), "preview"), "RecordTime,") {
			t.Errorf("perf-history-get preview: %v", f)
		}
	}
	m = r.expect(0, e2ePoll("perf-history-delete", "--id", id)...)
	if mu := e2eObj(m, "mutation"); e2eStr(mu, "state") != "completed" || !e2eBool(mu, "deleted") || e2eNum(mu, "deletedFiles") != float64(len(csvs)) {
		t.Errorf("perf-history-delete: %v", m)
	}
	if _, err := r.dev.Phone.Stat(outputPath); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the deleted record %s is still on the device: %v", outputPath, err)
	}
	m = r.expect(0, "perf-history-list")
	if strings.Contains(string(r.outs[len(r.outs)-1].stdout), id) {
		t.Errorf("perf-history-list still lists the deleted record: %v", m)
	}
	r.expect(2, "perf-history-get", "--id", id)

	// Live display lease.
	m = r.expect(0, e2ePoll("perf-display-start", "--global", "--items", "CPU,Memory")...)
	did := e2eStr(m, "sessionId")
	if e2eStr(m, "state") != "running" || did == "" || did == sid {
		t.Fatalf("perf-display-start: %v", m)
	}
	// The display lease excludes a performance recording.
	r.expect(2, e2ePoll("perf-start", "--global", "--items", "CPU")...)
	m = r.expect(0, "perf-display-status")
	owned := e2eStrings(m, "ownedDisplayNames")
	if e2eStr(m, "sessionId") != did || !e2eBool(m, "running") || len(owned) != 2 {
		t.Errorf("perf-display-status: %v", m)
	}
	for k := range e2eObj(m, "values") {
		if !slices.Contains(owned, k) {
			t.Errorf("perf-display-status value %q is not an owned display name %v", k, owned)
		}
	}
	m = r.expect(0, e2ePoll("perf-display-stop", "--session-id", did)...)
	if e2eStr(m, "state") != "stopped" || len(e2eStrings(m, "ownedDisplayNames")) != 0 {
		t.Errorf("perf-display-stop: %v", m)
	}
	m = r.expect(0, "perf-display-status")
	if e2eStr(m, "state") != "stopped" || e2eBool(m, "active") {
		t.Errorf("perf-display-status after stop: %v", m)
	}
}

func TestE2EStress(t *testing.T) {
	// The auto-stop must not beat the host's first poll: 2 s of device
	// time is 500 ms here.
	r := newE2ERig(t, sim.FarmOptions{TimeScale: 4})
	m := r.expect(0, e2ePoll("stress-start", "--cpu-count", "2", "--cpu-percent", "50", "--duration", "2")...)
	sid := e2eStr(m, "sessionId")
	if e2eStr(m, "state") != "running" || sid == "" || e2eNum(m, "cpuCount") != 2 || e2eNum(m, "cpuPercent") != 50 || e2eNum(m, "durationSec") != 2 {
		t.Fatalf("stress-start: %v", m)
	}
	// A second stress is refused while this one runs.
	r.expect(2, e2ePoll("stress-start", "--memory", "16")...)
	// The device removes the load by itself after durationSec.
	deadline := time.Now().Add(10 * time.Second)
	for {
		m = r.expect(0, "stress-status", "--session-id", sid)
		if e2eStr(m, "state") == "stopped" {
			break
		}
		if e2eStr(m, "state") != "running" && e2eStr(m, "state") != "stopping" || time.Now().After(deadline) {
			t.Fatalf("stress never auto-stopped: %v", m)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if e2eNum(m, "activeCpuCount") != 0 || e2eNum(m, "targetCpuCount") != 0 || e2eNum(m, "actualMemoryMb") != 0 || e2eBool(m, "active") || e2eNum(m, "finishedAt") == 0 {
		t.Errorf("stress after its auto-stop: %v", m)
	}
	// stop after the device's own auto-stop is still success.
	m = r.expect(0, e2ePoll("stress-stop", "--session-id", sid)...)
	if e2eStr(m, "state") != "stopped" {
		t.Errorf("stress-stop after auto-stop: %v", m)
	}

	// An explicit stop of another, long session.
	m = r.expect(0, e2ePoll("stress-start", "--cpu-count", "1", "--cpu-percent", "30", "--memory", "64", "--duration", "600")...)
	sid2 := e2eStr(m, "sessionId")
	if sid2 == sid || e2eStr(m, "state") != "running" {
		t.Fatalf("second stress-start: %v", m)
	}
	m = r.expect(2, "stress-status", "--session-id", sid)
	m = r.expect(0, e2ePoll("stress-stop", "--session-id", sid2)...)
	if e2eStr(m, "state") != "stopped" || e2eNum(m, "activeCpuCount") != 0 || e2eNum(m, "actualMemoryMb") != 0 {
		t.Errorf("stress-stop: %v", m)
	}
	// Stopping a session that is not the device's is refused.
	m = r.expect(2, e2ePoll("stress-stop", "--session-id", sid)...)
	if e2eStr(m, "errorCode") == "" {
		t.Errorf("stress-stop of a replaced session: %v", m)
	}
}

func TestE2ERecord(t *testing.T) {
	r := newE2ERig(t, sim.FarmOptions{})
	m := r.expect(0, e2ePoll("record-start", "--name", "X", "--target-package", "com.example.counter")...)
	sid := e2eStr(m, "sessionId")
	if e2eStr(m, "state") != "recording" || sid == "" || e2eStr(m, "caseName") != "X" || e2eStr(m, "targetPackage") != "com.example.counter" {
		t.Fatalf("record-start: %v", m)
	}
	if pkg, _ := r.dev.Phone.Foreground(); pkg != "com.example.counter" {
		t.Errorf("record-start left %s in the foreground", pkg)
	}
	if m := r.expect(0, "app-status"); e2eStr(m, "status") != "record" {
		t.Errorf("app-status while recording: %v", m)
	}
	m = r.expect(0, "record-status")
	if e2eStr(m, "sessionId") != sid || !e2eBool(m, "recording") {
		t.Errorf("record-status: %v", m)
	}
	m = r.expect(0, e2ePoll("record-stop", "--session-id", sid)...)
	caseID := e2eNum(m, "caseId")
	if e2eStr(m, "state") != "stopped" || caseID <= 0 || e2eBool(m, "cancelledBeforeStart") {
		t.Fatalf("record-stop: %v", m)
	}
	// The status resolver never publishes anything after "record".
	if m := r.expect(0, "app-status"); e2eStr(m, "status") != "record" {
		t.Errorf("app-status after the recording: %v", m)
	}
	m = r.expect(0, "cases")
	found := false
	cases, _ := m["cases"].([]any)
	for _, c := range cases {
		found = found || e2eNum(c.(map[string]any), "id") == caseID && e2eStr(c.(map[string]any), "name") == "X"
	}
	if !found {
		t.Errorf("the recorded case %v is not listed: %v", caseID, m)
	}
	// A stop of a finished session is not a second recording.
	r.expect(0, e2ePoll("record-stop", "--session-id", sid)...)
}

func TestE2EScreenRecordAndVideoAnalysis(t *testing.T) {
	r := newE2ERig(t, sim.FarmOptions{})
	r.dev.App.SetScreenRecordAutoConfirm(true)
	m := r.expect(0, e2ePoll("screen-record-start", "--duration", "600")...)
	sid := e2eStr(m, "sessionId")
	if e2eStr(m, "state") != "recording" || sid == "" {
		t.Fatalf("screen-record-start: %v", m)
	}
	m = r.expect(0, "screen-record-status")
	if e2eStr(m, "sessionId") != sid || !e2eBool(m, "recording") {
		t.Errorf("screen-record-status: %v", m)
	}
	r.dev.Clock().Sleep(context.Background(), 4*time.Second) // device time: some frames
	out := filepath.Join(t.TempDir(), "screen.mp4")
	m = r.expect(0, e2ePoll("screen-record-stop", "--session-id", sid, "--output", out)...)
	remote := e2eStr(m, "outputPath")
	if e2eStr(m, "state") != "stopped" || e2eBool(m, "cancelledBeforeStart") || remote == "" {
		t.Fatalf("screen-record-stop: %v", m)
	}
	mp4, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(mp4) == 0 || float64(len(mp4)) != e2eNum(m, "fileSize") || len(mp4) < 12 || string(mp4[4:8]) != "ftyp" {
		t.Errorf("pulled MP4: %d bytes (fileSize %v), head %q", len(mp4), m["fileSize"], mp4[:min(12, len(mp4))])
	}
	if art := e2eObj(e2eObj(m, "artifacts"), "screenRecording"); e2eStr(art, "path") != out || e2eStr(art, "remotePath") != remote {
		t.Errorf("screen-record-stop artifacts: %v", e2eObj(m, "artifacts"))
	}
	// The output exists now: refused before the device is asked.
	r.expect(3, e2ePoll("screen-record-stop", "--session-id", sid, "--output", out)...)

	// Stop while the MediaProjection dialog is pending: cancelled before
	// start, no file.
	r.dev.App.SetScreenRecordAutoConfirm(false)
	start := exec.Command(binPath, e2ePoll("screen-record-start", "--ack-timeout", "30")...)
	start.Env = append(os.Environ(), r.env...)
	var startOut bytes.Buffer
	start.Stdout = &startOut
	if err := start.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { start.Process.Kill(); start.Wait() })
	var pending string
	deadline := time.Now().Add(10 * time.Second)
	for pending == "" {
		m = r.expect(0, "screen-record-status")
		if e2eStr(m, "state") == "pending-user-confirmation" {
			pending = e2eStr(m, "sessionId")
			if !e2eBool(m, "userActionRequired") || e2eStr(m, "requiredUserAction") == "" {
				t.Errorf("pending screen recording: %v", m)
			}
		} else if time.Now().After(deadline) {
			t.Fatalf("screen recording never pending: %v", m)
		}
		time.Sleep(30 * time.Millisecond)
	}
	capturesRoot := e2eStr(m, "capturesRoot")
	before, err := r.dev.Phone.ReadDir(capturesRoot)
	if err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(t.TempDir(), "never.mp4")
	m = r.expect(0, e2ePoll("screen-record-stop", "--session-id", pending, "--output", out2)...)
	if e2eStr(m, "state") != "stopped" || !e2eBool(m, "cancelledBeforeStart") || m["outputPath"] != nil || m["fileSize"] != nil {
		t.Errorf("stop while pending: %v", m)
	}
	if _, err := os.Stat(out2); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stop while pending wrote %s: %v", out2, err)
	}
	if after, _ := r.dev.Phone.ReadDir(capturesRoot); len(after) != len(before) {
		t.Errorf("a recording cancelled before start left a file in %s (%d → %d entries)", capturesRoot, len(before), len(after))
	}
	werr := start.Wait()
	if ee, ok := werr.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Errorf("screen-record-start whose pending session was stopped: %v %s", werr, startOut.Bytes())
	}
	schemas.Validate(t, "screen-record-start", startOut.Bytes())
	t.Logf("screen-record-start whose pending session was stopped: %s", startOut.Bytes())

	// Video analysis of the recorded MP4.
	m = r.expect(0, e2ePoll("video-analysis-start", "--video-path", remote, "--action-offset-ms", "0", "--difference-threshold", "0.2", "--wait")...)
	if e2eStr(m, "state") != "completed" || !e2eBool(m, "terminal") || m["visualResponseTimeMs"] == nil || e2eNum(m, "visualResponseTimeMs") < 0 ||
		e2eNum(m, "sizeBytes") != float64(len(mp4)) || e2eStr(m, "videoFileName") != filepath.Base(remote) {
		t.Errorf("video-analysis-start --wait: %v", m)
	}
	m2 := r.expect(0, "video-analysis-status", "--request-id", e2eStr(m, "requestId"))
	if e2eStr(m2, "state") != "completed" || m2["visualResponseTimeMs"] != m["visualResponseTimeMs"] {
		t.Errorf("video-analysis-status: %v", m2)
	}
	// One analysis at a time.
	r.dev.App.SetVideoAnalysisDuration(time.Hour)
	m = r.expect(0, e2ePoll("video-analysis-start", "--video-path", remote, "--action-offset-ms", "100", "--difference-threshold", "0.5", "--no-wait")...)
	if e2eStr(m, "state") != "analyzing" {
		t.Errorf("video-analysis-start --no-wait: %v", m)
	}
	m = r.expect(2, e2ePoll("video-analysis-start", "--video-path", remote, "--action-offset-ms", "0", "--difference-threshold", "0.2", "--no-wait")...)
	if e2eStr(m, "errorCode") != "analysis_busy" {
		t.Errorf("second analysis while one runs: %v", m)
	}
}

func TestE2EScan(t *testing.T) {
	r := newE2ERig(t, sim.FarmOptions{})
	m := r.expect(0, e2ePoll("scan-start")...)
	sid := e2eStr(m, "sessionId")
	if e2eStr(m, "state") != "scanning" || sid == "" {
		t.Fatalf("scan-start: %v", m)
	}
	if err := r.dev.App.DeliverScanResult("https://example.test", "QR_CODE"); err != nil {
		t.Fatal(err)
	}
	m = r.expect(0, "scan-status", "--session-id", sid)
	if e2eStr(m, "state") != "completed" || e2eStr(m, "content") != "https://example.test" || e2eStr(m, "format") != "QR_CODE" ||
		e2eStr(m, "codeType") != "QR CODE" || m["contentExecuted"] != false {
		t.Errorf("scan-status after a QR code: %v", m)
	}
	// Cancel on a fresh scan.
	m = r.expect(0, e2ePoll("scan-start")...)
	sid2 := e2eStr(m, "sessionId")
	if sid2 == sid || !e2eBool(m, "active") {
		t.Fatalf("second scan-start: %v", m)
	}
	r.expect(2, "scan-status", "--session-id", sid)
	m = r.expect(0, e2ePoll("scan-cancel", "--session-id", sid2)...)
	if e2eStr(m, "state") != "cancelled" || m["content"] != nil {
		t.Errorf("scan-cancel: %v", m)
	}
	if err := r.dev.App.DeliverScanResult("late", "QR_CODE"); err == nil {
		t.Error("a cancelled scan still accepted a result")
	}
}

// e2ePluginZip writes a plugin archive the simulator accepts: desc.json with
// a jar payload whose MD5 it names.
func e2ePluginZip(t *testing.T, name string, version float64) string {
	t.Helper()
	jar := bytes.Repeat([]byte("plugin class bytes "), 20)
	sum := md5.Sum(jar)
	desc, _ := json.Marshal(map[string]any{"name": name, "version": version, "filter": "com.example",
		"jar": "plugin.jar", "jarMd5": hex.EncodeToString(sum[:])})
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for n, b := range map[string][]byte{"desc.json": desc, "plugin.jar": jar} {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name+".zip")
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestE2EPlugins(t *testing.T) {
	r := newE2ERig(t, sim.FarmOptions{})
	m := r.expect(0, "plugin-list")
	importPath := e2eStr(m, "importPath")
	if int(e2eNum(m, "total")) != 2 || importPath == "" {
		t.Fatalf("plugin-list: %v", m)
	}

	// staged is the archive the host pushed into the import directory.
	staged := func(m map[string]any) string {
		name := e2eStr(m, "fileName")
		if name == "" {
			name = e2eStr(e2eObj(m, "cleanup"), "fileName")
		}
		if name == "" {
			t.Fatalf("plugin-install names no staged file: %v", m)
		}
		return importPath + "/" + name
	}
	m = r.expect(0, e2ePoll("plugin-install", "--file", e2ePluginZip(t, "demo_plugin", 1.5))...)
	mu := e2eObj(m, "mutation")
	if e2eStr(m, "state") != "completed_restart_required" || e2eStr(mu, "state") != "completed_restart_required" || !e2eBool(m, "restartRequired") {
		t.Fatalf("plugin-install: %v", m)
	}
	pluginID := e2eStr(e2eObj(mu, "plugin"), "id")
	if _, err := r.dev.Phone.Stat(staged(m)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the staged archive %s is still on the device: %v", staged(m), err)
	}
	m = r.expect(0, "plugin-list")
	if int(e2eNum(m, "total")) != 3 || !strings.Contains(string(r.outs[len(r.outs)-1].stdout), pluginID) {
		t.Errorf("plugin-list after install: %v", m)
	}
	if files, _ := m["importFiles"].([]any); len(files) != 0 {
		t.Errorf("plugin-list import files after install: %v", files)
	}

	// v1.0.2's activity check bug: the import fails, the staged file is
	// still removed.
	r.dev.App.SetPluginActivityBug(true)
	m = r.expect(2, e2ePoll("plugin-install", "--file", e2ePluginZip(t, "demo_plugin", 2.5))...)
	if e2eStr(m, "errorCode") != "activity_status_unavailable" {
		t.Errorf("plugin-install with the activity bug: %v", m)
	}
	if _, err := r.dev.Phone.Stat(staged(m)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the staged archive %s is still on the device after a failed import: %v", staged(m), err)
	}
	m = r.expect(2, e2ePoll("plugin-remove", "--id", pluginID)...)
	if e2eStr(m, "errorCode") != "activity_status_unavailable" {
		t.Errorf("plugin-remove with the activity bug: %v", m)
	}
	r.dev.App.SetPluginActivityBug(false)

	m = r.expect(0, e2ePoll("plugin-remove", "--id", pluginID)...)
	if mu := e2eObj(m, "mutation"); e2eStr(mu, "state") != "completed_restart_required" || !e2eBool(mu, "removedFromRegistry") {
		t.Errorf("plugin-remove: %v", m)
	}
	m = r.expect(0, "plugin-list")
	if int(e2eNum(m, "total")) != 2 || strings.Contains(string(r.outs[len(r.outs)-1].stdout), pluginID) {
		t.Errorf("plugin-list after remove: %v", m)
	}
}

// checkPerfReports opens performance reports in Chromium: one statistics
// row and one chart per metric, every chart loaded, nothing fetched from
// outside the report's directory.
func checkPerfReports(t *testing.T, metrics int, paths ...string) {
	browser := browsertest.Start(t)
	for _, path := range paths {
		p := browsertest.Open(t, browser, "file://"+filepath.ToSlash(path), 390, 844)
		if n := browsertest.Eval[int](t, p, `document.querySelectorAll('#statistics tbody tr').length`); n != metrics {
			t.Errorf("%s: %d statistics rows, want %d", path, n, metrics)
		}
		if n := browsertest.Eval[int](t, p, `document.querySelectorAll('#charts img').length`); n != metrics {
			t.Errorf("%s: %d charts, want %d", path, n, metrics)
		}
		if broken := browsertest.BrokenImages(t, p); len(broken) > 0 {
			t.Errorf("%s: charts that did not load: %v", path, broken)
		}
		if out := p.RequestsOutside(filepath.Dir(path)); len(out) > 0 {
			t.Errorf("%s: requests outside its directory: %v", path, out)
		}
		browsertest.Screenshot(t, p, "perf-report-"+filepath.Base(filepath.Dir(path)))
	}
}

package sessioncmd

// SoloPi's other session types against a simulated phone: performance
// recording, live display and history, stress, interactive recording,
// screen recording with video analysis, scanning and plugins, every real
// stdout schema-checked.

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
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/internal/browsertest"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
)

func TestPerformanceRecordAnalyzeHistoryAndDisplay(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})

	m := r.Cmd(0, "perf-list")
	var keys []string
	items, _ := m["items"].([]any)
	for _, it := range items {
		keys = append(keys, cmdtest.Str(it.(map[string]any), "key"))
	}
	for _, k := range []string{"Battery", "CPU", "FPS", "Memory", "Network", "Response", "Status", "Temperature"} {
		if !slices.Contains(keys, k) {
			t.Errorf("perf-list lacks %s: %v", k, keys)
		}
	}

	m = r.Cmd(0, poll("perf-start", "--global", "--items", "CPU,Memory")...)
	sid := cmdtest.Str(m, "sessionId")
	if cmdtest.Str(m, "state") != "recording" || sid == "" || cmdtest.Str(m, "targetPackage") != "-" || !slices.Equal(cmdtest.Strs(m, "items"), []string{"CPU", "Memory"}) {
		t.Fatalf("perf-start: %v", m)
	}
	// A second recording is refused while this one runs.
	m = r.Cmd(2, poll("perf-start", "--global", "--items", "CPU")...)
	if cmdtest.Str(m, "errorCode") == "" {
		t.Errorf("second perf-start: %v", m)
	}
	r.Dev.Clock().Sleep(context.Background(), 12*time.Second) // device time: some samples
	m = r.Cmd(0, "perf-status")
	if cmdtest.Str(m, "sessionId") != sid || cmdtest.Str(m, "state") != "recording" || !cmdtest.Bool(m, "recording") {
		t.Errorf("perf-status: %v", m)
	}

	dir := filepath.Join(t.TempDir(), "perf")
	m = r.Cmd(0, poll("perf-stop", "--session-id", sid, "--output", dir)...)
	outputPath := cmdtest.Str(m, "outputPath")
	if cmdtest.Str(m, "state") != "stopped" || !strings.HasSuffix(outputPath, "/performance-"+sid) {
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
	stopReport := cmdtest.Str(m, "report")
	if stopReport != filepath.Join(dir, "report.html") {
		t.Fatalf("perf-stop report %q (%v)", stopReport, m["reportError"])
	}
	// The pulled directory is ours: a second pull into it is refused.
	r.Cmd(3, poll("perf-stop", "--session-id", sid, "--output", dir)...)

	charts := filepath.Join(t.TempDir(), "charts")
	m = r.Cmd(0, "perf-analyze", "--input", dir, "--output", charts)
	analyzeReport := cmdtest.Str(m, "report")
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
		if enc := cmdtest.Str(fm, "encoding"); enc != "gbk-undecoded" {
			t.Errorf("perf-analyze encoding of a default (GBK) CSV: %q", enc)
		}
		if cmdtest.Str(cols[1].(map[string]any), "kind") != "numeric" {
			t.Errorf("perf-analyze value column: %v", cols[1])
		}
		metric := cmdtest.Obj(fm, "metric")
		name := cmdtest.Str(metric, "name")
		if name == "" || strings.ContainsRune(name, '\uFFFD') || !strings.HasPrefix(filepath.Base(cmdtest.Str(fm, "path")), name+"_") || cmdtest.Num(metric, "sampleCount") < 2 {
			t.Errorf("perf-analyze metric: %v", metric)
		}
		if !(cmdtest.Num(metric, "min") <= cmdtest.Num(metric, "median") && cmdtest.Num(metric, "median") <= cmdtest.Num(metric, "p90") && cmdtest.Num(metric, "p90") <= cmdtest.Num(metric, "max")) {
			t.Errorf("perf-analyze statistics out of order: %v", metric)
		}
	}

	// History: the record is listed, readable and deletable.
	m = r.Cmd(0, "perf-history-list")
	var id string
	recs, _ := m["records"].([]any)
	for _, rec := range recs {
		if cmdtest.Str(rec.(map[string]any), "relativePath") == "performance-"+sid {
			id = cmdtest.Str(rec.(map[string]any), "id")
		}
	}
	if id == "" {
		t.Fatalf("perf-history-list does not list performance-%s: %v", sid, m)
	}
	m = r.Cmd(0, "perf-history-get", "--id", id)
	hfiles, _ := m["files"].([]any)
	if cmdtest.Str(m, "id") != id || len(hfiles) != len(csvs) {
		t.Errorf("perf-history-get: %v", m)
	}
	for _, f := range hfiles {
		if !strings.HasPrefix(cmdtest.Str(f.(map[string]any), "preview"), "RecordTime,") {
			t.Errorf("perf-history-get preview: %v", f)
		}
	}
	m = r.Cmd(0, poll("perf-history-delete", "--id", id)...)
	if mu := cmdtest.Obj(m, "mutation"); cmdtest.Str(mu, "state") != "completed" || !cmdtest.Bool(mu, "deleted") || cmdtest.Num(mu, "deletedFiles") != float64(len(csvs)) {
		t.Errorf("perf-history-delete: %v", m)
	}
	if _, err := r.Dev.Phone.Stat(outputPath); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the deleted record %s is still on the device: %v", outputPath, err)
	}
	m = r.Cmd(0, "perf-history-list")
	if strings.Contains(r.last(), id) {
		t.Errorf("perf-history-list still lists the deleted record: %v", m)
	}
	r.Cmd(2, "perf-history-get", "--id", id)

	// Live display lease.
	m = r.Cmd(0, poll("perf-display-start", "--global", "--items", "CPU,Memory")...)
	did := cmdtest.Str(m, "sessionId")
	if cmdtest.Str(m, "state") != "running" || did == "" || did == sid {
		t.Fatalf("perf-display-start: %v", m)
	}
	// The display lease excludes a performance recording.
	r.Cmd(2, poll("perf-start", "--global", "--items", "CPU")...)
	m = r.Cmd(0, "perf-display-status")
	owned := cmdtest.Strs(m, "ownedDisplayNames")
	if cmdtest.Str(m, "sessionId") != did || !cmdtest.Bool(m, "running") || len(owned) != 2 {
		t.Errorf("perf-display-status: %v", m)
	}
	for k := range cmdtest.Obj(m, "values") {
		if !slices.Contains(owned, k) {
			t.Errorf("perf-display-status value %q is not an owned display name %v", k, owned)
		}
	}
	m = r.Cmd(0, poll("perf-display-stop", "--session-id", did)...)
	if cmdtest.Str(m, "state") != "stopped" || len(cmdtest.Strs(m, "ownedDisplayNames")) != 0 {
		t.Errorf("perf-display-stop: %v", m)
	}
	m = r.Cmd(0, "perf-display-status")
	if cmdtest.Str(m, "state") != "stopped" || cmdtest.Bool(m, "active") {
		t.Errorf("perf-display-status after stop: %v", m)
	}
}

func TestStress(t *testing.T) {
	t.Parallel()
	// The auto-stop must not beat the host's first poll: 2 s of device
	// time is 500 ms here.
	r := newRig(t, sim.Options{TimeScale: 4})
	m := r.Cmd(0, poll("stress-start", "--cpu-count", "2", "--cpu-percent", "50", "--duration", "2")...)
	sid := cmdtest.Str(m, "sessionId")
	if cmdtest.Str(m, "state") != "running" || sid == "" || cmdtest.Num(m, "cpuCount") != 2 || cmdtest.Num(m, "cpuPercent") != 50 || cmdtest.Num(m, "durationSec") != 2 {
		t.Fatalf("stress-start: %v", m)
	}
	// A second stress is refused while this one runs.
	r.Cmd(2, poll("stress-start", "--memory", "16")...)
	// The device removes the load by itself after durationSec.
	deadline := time.Now().Add(10 * time.Second)
	for {
		m = r.Cmd(0, "stress-status", "--session-id", sid)
		if cmdtest.Str(m, "state") == "stopped" {
			break
		}
		if cmdtest.Str(m, "state") != "running" && cmdtest.Str(m, "state") != "stopping" || time.Now().After(deadline) {
			t.Fatalf("stress never auto-stopped: %v", m)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if cmdtest.Num(m, "activeCpuCount") != 0 || cmdtest.Num(m, "targetCpuCount") != 0 || cmdtest.Num(m, "actualMemoryMb") != 0 || cmdtest.Bool(m, "active") || cmdtest.Num(m, "finishedAt") == 0 {
		t.Errorf("stress after its auto-stop: %v", m)
	}
	// stop after the device's own auto-stop is still success.
	m = r.Cmd(0, poll("stress-stop", "--session-id", sid)...)
	if cmdtest.Str(m, "state") != "stopped" {
		t.Errorf("stress-stop after auto-stop: %v", m)
	}

	// An explicit stop of another, long session.
	m = r.Cmd(0, poll("stress-start", "--cpu-count", "1", "--cpu-percent", "30", "--memory", "64", "--duration", "600")...)
	sid2 := cmdtest.Str(m, "sessionId")
	if sid2 == sid || cmdtest.Str(m, "state") != "running" {
		t.Fatalf("second stress-start: %v", m)
	}
	m = r.Cmd(2, "stress-status", "--session-id", sid)
	m = r.Cmd(0, poll("stress-stop", "--session-id", sid2)...)
	if cmdtest.Str(m, "state") != "stopped" || cmdtest.Num(m, "activeCpuCount") != 0 || cmdtest.Num(m, "actualMemoryMb") != 0 {
		t.Errorf("stress-stop: %v", m)
	}
	// Stopping a session that is not the device's is refused.
	m = r.Cmd(2, poll("stress-stop", "--session-id", sid)...)
	if cmdtest.Str(m, "errorCode") == "" {
		t.Errorf("stress-stop of a replaced session: %v", m)
	}
}

func TestRecord(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	m := r.Cmd(0, poll("record-start", "--name", "X", "--target-package", "com.example.counter")...)
	sid := cmdtest.Str(m, "sessionId")
	if cmdtest.Str(m, "state") != "recording" || sid == "" || cmdtest.Str(m, "caseName") != "X" || cmdtest.Str(m, "targetPackage") != "com.example.counter" {
		t.Fatalf("record-start: %v", m)
	}
	if pkg, _ := r.Dev.Phone.Foreground(); pkg != "com.example.counter" {
		t.Errorf("record-start left %s in the foreground", pkg)
	}
	if m := r.Cmd(0, "app-status"); cmdtest.Str(m, "status") != "record" {
		t.Errorf("app-status while recording: %v", m)
	}
	m = r.Cmd(0, "record-status")
	if cmdtest.Str(m, "sessionId") != sid || !cmdtest.Bool(m, "recording") {
		t.Errorf("record-status: %v", m)
	}
	m = r.Cmd(0, poll("record-stop", "--session-id", sid)...)
	caseID := cmdtest.Num(m, "caseId")
	if cmdtest.Str(m, "state") != "stopped" || caseID <= 0 || cmdtest.Bool(m, "cancelledBeforeStart") {
		t.Fatalf("record-stop: %v", m)
	}
	// The status resolver never publishes anything after "record".
	if m := r.Cmd(0, "app-status"); cmdtest.Str(m, "status") != "record" {
		t.Errorf("app-status after the recording: %v", m)
	}
	m = r.Cmd(0, "cases")
	found := false
	cases, _ := m["cases"].([]any)
	for _, c := range cases {
		found = found || cmdtest.Num(c.(map[string]any), "id") == caseID && cmdtest.Str(c.(map[string]any), "name") == "X"
	}
	if !found {
		t.Errorf("the recorded case %v is not listed: %v", caseID, m)
	}
	// A stop of a finished session is not a second recording.
	r.Cmd(0, poll("record-stop", "--session-id", sid)...)
}

func TestScreenRecordAndVideoAnalysis(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	r.Dev.App.SetScreenRecordAutoConfirm(true)
	m := r.Cmd(0, poll("screen-record-start", "--duration", "600")...)
	sid := cmdtest.Str(m, "sessionId")
	if cmdtest.Str(m, "state") != "recording" || sid == "" {
		t.Fatalf("screen-record-start: %v", m)
	}
	m = r.Cmd(0, "screen-record-status")
	if cmdtest.Str(m, "sessionId") != sid || !cmdtest.Bool(m, "recording") {
		t.Errorf("screen-record-status: %v", m)
	}
	r.Dev.Clock().Sleep(context.Background(), 4*time.Second) // device time: some frames
	out := filepath.Join(t.TempDir(), "screen.mp4")
	m = r.Cmd(0, poll("screen-record-stop", "--session-id", sid, "--output", out)...)
	remote := cmdtest.Str(m, "outputPath")
	if cmdtest.Str(m, "state") != "stopped" || cmdtest.Bool(m, "cancelledBeforeStart") || remote == "" {
		t.Fatalf("screen-record-stop: %v", m)
	}
	mp4, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(mp4) == 0 || float64(len(mp4)) != cmdtest.Num(m, "fileSize") || len(mp4) < 12 || string(mp4[4:8]) != "ftyp" {
		t.Errorf("pulled MP4: %d bytes (fileSize %v), head %q", len(mp4), m["fileSize"], mp4[:min(12, len(mp4))])
	}
	if art := cmdtest.Obj(cmdtest.Obj(m, "artifacts"), "screenRecordingFile"); cmdtest.Str(art, "path") != out || cmdtest.Str(art, "remotePath") != remote ||
		cmdtest.Str(cmdtest.Obj(m, "artifacts"), "screenRecording") != out {
		t.Errorf("screen-record-stop artifacts: %v", cmdtest.Obj(m, "artifacts"))
	}
	// The output exists now: refused before the device is asked.
	r.Cmd(3, poll("screen-record-stop", "--session-id", sid, "--output", out)...)

	// Stop while the MediaProjection dialog is pending: cancelled before
	// start, no file.
	r.Dev.App.SetScreenRecordAutoConfirm(false)
	started := make(chan cmdtest.Result, 1)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { started <- r.RunCtx(ctx, poll("screen-record-start", "--ack-timeout", "30")...) }()
	var pending string
	deadline := time.Now().Add(10 * time.Second)
	for pending == "" {
		m = r.Cmd(0, "screen-record-status")
		if cmdtest.Str(m, "state") == "pending-user-confirmation" {
			pending = cmdtest.Str(m, "sessionId")
			if !cmdtest.Bool(m, "userActionRequired") || cmdtest.Str(m, "requiredUserAction") == "" {
				t.Errorf("pending screen recording: %v", m)
			}
		} else if time.Now().After(deadline) {
			t.Fatalf("screen recording never pending: %v", m)
		}
		time.Sleep(30 * time.Millisecond)
	}
	capturesRoot := cmdtest.Str(m, "capturesRoot")
	before, err := r.Dev.Phone.ReadDir(capturesRoot)
	if err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(t.TempDir(), "never.mp4")
	m = r.Cmd(0, poll("screen-record-stop", "--session-id", pending, "--output", out2)...)
	if cmdtest.Str(m, "state") != "stopped" || !cmdtest.Bool(m, "cancelledBeforeStart") || m["outputPath"] != nil || m["fileSize"] != nil {
		t.Errorf("stop while pending: %v", m)
	}
	if _, err := os.Stat(out2); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stop while pending wrote %s: %v", out2, err)
	}
	if after, _ := r.Dev.Phone.ReadDir(capturesRoot); len(after) != len(before) {
		t.Errorf("a recording cancelled before start left a file in %s (%d → %d entries)", capturesRoot, len(before), len(after))
	}
	res := <-started
	if res.Code != 2 {
		t.Errorf("screen-record-start whose pending session was stopped: exit %d %s", res.Code, res.Stdout)
	}
	schematest.Validate(t, "screen-record-start", res.Stdout)

	// Video analysis of the recorded MP4.
	m = r.Cmd(0, poll("video-analysis-start", "--video-path", remote, "--action-offset-ms", "0", "--difference-threshold", "0.2", "--wait")...)
	if cmdtest.Str(m, "state") != "completed" || !cmdtest.Bool(m, "terminal") || m["visualResponseTimeMs"] == nil || cmdtest.Num(m, "visualResponseTimeMs") < 0 ||
		cmdtest.Num(m, "sizeBytes") != float64(len(mp4)) || cmdtest.Str(m, "videoFileName") != filepath.Base(remote) {
		t.Errorf("video-analysis-start --wait: %v", m)
	}
	m2 := r.Cmd(0, "video-analysis-status", "--request-id", cmdtest.Str(m, "requestId"))
	if cmdtest.Str(m2, "state") != "completed" || m2["visualResponseTimeMs"] != m["visualResponseTimeMs"] {
		t.Errorf("video-analysis-status: %v", m2)
	}
	// One analysis at a time.
	r.Dev.App.SetVideoAnalysisDuration(time.Hour)
	m = r.Cmd(0, poll("video-analysis-start", "--video-path", remote, "--action-offset-ms", "100", "--difference-threshold", "0.5", "--no-wait")...)
	if cmdtest.Str(m, "state") != "analyzing" {
		t.Errorf("video-analysis-start --no-wait: %v", m)
	}
	m = r.Cmd(2, poll("video-analysis-start", "--video-path", remote, "--action-offset-ms", "0", "--difference-threshold", "0.2", "--no-wait")...)
	if cmdtest.Str(m, "errorCode") != "analysis_busy" {
		t.Errorf("second analysis while one runs: %v", m)
	}
}

func TestScan(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	m := r.Cmd(0, poll("scan-start")...)
	sid := cmdtest.Str(m, "sessionId")
	if cmdtest.Str(m, "state") != "scanning" || sid == "" {
		t.Fatalf("scan-start: %v", m)
	}
	if err := r.Dev.App.DeliverScanResult("https://example.test", "QR_CODE"); err != nil {
		t.Fatal(err)
	}
	m = r.Cmd(0, "scan-status", "--session-id", sid)
	if cmdtest.Str(m, "state") != "completed" || cmdtest.Str(m, "content") != "https://example.test" || cmdtest.Str(m, "format") != "QR_CODE" ||
		cmdtest.Str(m, "codeType") != "QR CODE" || m["contentExecuted"] != false {
		t.Errorf("scan-status after a QR code: %v", m)
	}
	// Cancel on a fresh scan.
	m = r.Cmd(0, poll("scan-start")...)
	sid2 := cmdtest.Str(m, "sessionId")
	if sid2 == sid || !cmdtest.Bool(m, "active") {
		t.Fatalf("second scan-start: %v", m)
	}
	r.Cmd(2, "scan-status", "--session-id", sid)
	m = r.Cmd(0, poll("scan-cancel", "--session-id", sid2)...)
	if cmdtest.Str(m, "state") != "cancelled" || m["content"] != nil {
		t.Errorf("scan-cancel: %v", m)
	}
	if err := r.Dev.App.DeliverScanResult("late", "QR_CODE"); err == nil {
		t.Error("a cancelled scan still accepted a result")
	}
}

// e2ePluginZip writes a plugin archive the simulator accepts: desc.json with
// a jar payload whose MD5 it names.
func pluginZip(t *testing.T, name string, version float64) string {
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

func TestPlugins(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	m := r.Cmd(0, "plugin-list")
	importPath := cmdtest.Str(m, "importPath")
	if int(cmdtest.Num(m, "total")) != 2 || importPath == "" {
		t.Fatalf("plugin-list: %v", m)
	}

	// staged is the archive the host pushed into the import directory.
	staged := func(m map[string]any) string {
		name := cmdtest.Str(m, "fileName")
		if name == "" {
			name = cmdtest.Str(cmdtest.Obj(m, "cleanup"), "fileName")
		}
		if name == "" {
			t.Fatalf("plugin-install names no staged file: %v", m)
		}
		return importPath + "/" + name
	}
	m = r.Cmd(0, poll("plugin-install", "--file", pluginZip(t, "demo_plugin", 1.5))...)
	mu := cmdtest.Obj(m, "mutation")
	if cmdtest.Str(m, "state") != "completed_restart_required" || cmdtest.Str(mu, "state") != "completed_restart_required" || !cmdtest.Bool(m, "restartRequired") {
		t.Fatalf("plugin-install: %v", m)
	}
	pluginID := cmdtest.Str(cmdtest.Obj(mu, "plugin"), "id")
	if _, err := r.Dev.Phone.Stat(staged(m)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the staged archive %s is still on the device: %v", staged(m), err)
	}
	m = r.Cmd(0, "plugin-list")
	if int(cmdtest.Num(m, "total")) != 3 || !strings.Contains(r.last(), pluginID) {
		t.Errorf("plugin-list after install: %v", m)
	}
	if files, _ := m["importFiles"].([]any); len(files) != 0 {
		t.Errorf("plugin-list import files after install: %v", files)
	}

	// v1.0.2's activity check bug: the import fails, the staged file is
	// still removed.
	r.Dev.App.SetPluginActivityBug(true)
	m = r.Cmd(2, poll("plugin-install", "--file", pluginZip(t, "demo_plugin", 2.5))...)
	if cmdtest.Str(m, "errorCode") != "activity_status_unavailable" {
		t.Errorf("plugin-install with the activity bug: %v", m)
	}
	if _, err := r.Dev.Phone.Stat(staged(m)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the staged archive %s is still on the device after a failed import: %v", staged(m), err)
	}
	m = r.Cmd(2, poll("plugin-remove", "--id", pluginID)...)
	if cmdtest.Str(m, "errorCode") != "activity_status_unavailable" {
		t.Errorf("plugin-remove with the activity bug: %v", m)
	}
	r.Dev.App.SetPluginActivityBug(false)

	m = r.Cmd(0, poll("plugin-remove", "--id", pluginID)...)
	if mu := cmdtest.Obj(m, "mutation"); cmdtest.Str(mu, "state") != "completed_restart_required" || !cmdtest.Bool(mu, "removedFromRegistry") {
		t.Errorf("plugin-remove: %v", m)
	}
	m = r.Cmd(0, "plugin-list")
	if int(cmdtest.Num(m, "total")) != 2 || strings.Contains(r.last(), pluginID) {
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

package soloapp

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

func TestPerformanceListItems(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	m := r.get("performance", "mode", "listItems")
	items := m["items"].([]any)
	if num(m, "total") != 8 || len(items) != 8 {
		t.Fatal(m)
	}
	var keys, names []string
	for _, e := range items {
		o := e.(map[string]any)
		keys = append(keys, str(o, "key"))
		names = append(names, str(o, "name"))
	}
	if !slices.IsSorted(keys) || names[2] != "帧率" || names[0] != "电池" || str(items[0].(map[string]any), "trigger") != "清零" {
		t.Errorf("chinese list: %v %v", keys, names)
	}
	r2 := newRig(t, core.Config{Settings: map[string]string{"KEY_USE_LANGUAGE": "2"}})
	items = r2.get("performance", "mode", "listItems")["items"].([]any)
	if str(items[2].(map[string]any), "name") != "Frame Rate" || str(items[7].(map[string]any), "name") != "Temperature(BETA)" {
		t.Errorf("english list: %v", items)
	}
	r.app.SetPerfProviderReady(false)
	if m := r.get("performance", "mode", "listItems"); m["success"] != false || str(m, "error") != "Performance display service is not ready" || has(m, "errorCode") {
		t.Errorf("not ready: %v", m)
	}
	for _, q := range [][]string{{}, {"mode", "bogus"}, {"mode", "normal", "action", "pause"}} {
		m := r.get("performance", q...)
		if m["success"] != false || has(m, "errorCode") {
			t.Errorf("%v: %v", q, m)
		}
	}
	if e := str(r.get("performance", "mode", "bogus"), "error"); e != "Unsupported performance mode: bogus" {
		t.Error(e)
	}
}

func TestPerformanceRecordingWritesGBKCSV(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	st := r.get("performance", "mode", "status")
	checkPerf(t, st)
	if str(st, "state") != "idle" || str(st, "recordsRoot") != "/sdcard/solopi/records" {
		t.Fatal(st)
	}
	r.adb("performance", "mode", "normal", "action", "start", "targetApp", counterPkg, "items", " FPS, CPU,,FPS,电池", "sessionId", "perf-1")
	m := r.poll("recording", 5*time.Second, checkPerf, stateIs("recording", "failed"), "performance", "mode", "status")
	if str(m, "state") != "recording" || strings.Join(strList(t, m, "items"), ",") != "FPS,CPU,Battery" || str(m, "targetPackage") != counterPkg {
		t.Fatal(m)
	}
	if got := strList(t, m, "runningItems"); !slices.Equal(got, []string{"帧率", "CPU", "电池"}) {
		t.Errorf("runningItems %v", got)
	}
	cur := r.get("performance", "mode", "current")
	if num(cur, "sampledAt") <= 0 || len(sub(cur, "values")) != 3 || !strings.HasSuffix(str(sub(cur, "values"), "CPU"), "%") {
		t.Errorf("current: %v", cur)
	}
	// A second start is an invisible conflict; the session is unchanged.
	if d := r.mutate("performance", "mode", "normal", "action", "start", "items", "CPU", "sessionId", "other"); str(d, "error") != "A performance recording is already active" || sub(d, "performance") == nil {
		t.Errorf("conflict: %v", d)
	}
	if d := r.mutate("performance", "mode", "normal", "action", "stop", "sessionId", "other"); str(d, "error") != "Performance sessionId does not match" {
		t.Errorf("mismatch: %v", d)
	}
	r.sleep(2500 * time.Millisecond)
	r.adb("performance", "mode", "normal", "action", "stop", "sessionId", "perf-1")
	m = r.poll("stopped", 5*time.Second, checkPerf, stateIs("stopped", "failed"), "performance", "mode", "status")
	if str(m, "state") != "stopped" || str(m, "outputPath") != "/sdcard/solopi/records/performance-perf-1" || num(m, "durationMs") <= 0 {
		t.Fatal(m)
	}
	dir := "/storage/emulated/0/solopi/records/performance-perf-1/"
	nameRe := regexp.MustCompile(`^(.+)_([^_]+)_([0-9a-f]{16})_(\d+)_(\d+)\.csv$`)
	var csvs []string
	for p, data := range r.phone.allFiles() {
		if strings.Contains(p, ".tmp-") {
			t.Errorf("temporary file left: %s", p)
		}
		if !strings.HasPrefix(p, dir) {
			continue
		}
		name := strings.TrimPrefix(p, dir)
		csvs = append(csvs, name)
		if !nameRe.MatchString(name) {
			t.Errorf("bad csv name %s", name)
		}
		if strings.HasPrefix(name, "帧率_FPS_") {
			want := append(append([]byte("RecordTime,"), 0xd6, 0xa1, 0xc2, 0xca, '(', 0xd6, 0xa1), []byte("),extra,SimpleTime\n")...)
			if !bytes.HasPrefix(data, want) {
				t.Errorf("GBK header: % x", data[:min(len(data), 40)])
			}
			if rows := bytes.Count(data, []byte("\n")); rows < 3 {
				t.Errorf("rows: %q", data)
			}
		}
	}
	// FPS 4 + CPU (global, process) 2 + Battery 4.
	if len(csvs) != 10 {
		t.Errorf("csv files: %v", csvs)
	}
	if m := r.get("performance", "mode", "current"); len(sub(m, "values")) != 0 {
		t.Errorf("values after stop: %v", m)
	}
}

func TestPerformanceUTF8AndStopRetry(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{Settings: map[string]string{"KEY_OUTPUT_CHARSET": "UTF-8"}})
	r.app.SetPerfCleanupIncomplete(2)
	r.adb("performance", "mode", "normal", "action", "start", "targetApp", "-", "items", "Temperature", "sessionId", "p2")
	r.poll("recording", 5*time.Second, checkPerf, stateIs("recording"), "performance", "mode", "status")
	for i := 0; i < 2; i++ {
		r.adb("performance", "mode", "normal", "action", "stop", "sessionId", "p2")
		m := r.get("performance", "mode", "status")
		checkPerf(t, m)
		if str(m, "state") != "stopping" || m["stopRetryable"] != true || !strings.HasPrefix(str(m, "error"), "Performance cleanup is incomplete; retry stop with the same sessionId") {
			t.Fatalf("retry %d: %v", i, m)
		}
	}
	r.adb("performance", "mode", "normal", "action", "stop", "sessionId", "p2")
	m := r.poll("stopped", 5*time.Second, checkPerf, stateIs("stopped", "failed"), "performance", "mode", "status")
	if str(m, "state") != "stopped" || has(m, "error") {
		t.Fatal(m)
	}
	found := false
	for p, data := range r.phone.allFiles() {
		if strings.Contains(p, "/performance-p2/CPU温度_Temperature_") {
			found = bytes.HasPrefix(data, []byte("RecordTime,CPU温度(度),extra,SimpleTime\n"))
		}
	}
	if !found {
		t.Error("UTF-8 temperature CSV missing")
	}
	// Stopping an already stopped session is refused.
	if d := r.mutate("performance", "mode", "normal", "action", "stop", "sessionId", "p2"); str(d, "error") != "There is no active performance recording" {
		t.Error(d)
	}
}

func TestPerformanceStartFailures(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	for _, tc := range []struct {
		setup func()
		kv    []string
		err   string
	}{
		{nil, []string{"items", ""}, "Parameter 'items' is required"},
		{nil, []string{"items", "CPU,Disk,GPU"}, "Unsupported performance item(s): Disk,GPU"},
		{nil, []string{"items", "CPU", "targetApp", "com.nope"}, "Target application is not installed: com.nope"},
		{func() { r.app.SetPerfProviderReady(false) }, []string{"items", "CPU"}, "Performance display service is not ready"},
		{func() { r.app.SetPerfProviderReady(true); r.app.SetManualPerformanceWindow(true) }, []string{"items", "CPU"}, "Another performance display session is already running"},
		{func() {
			r.app.SetManualPerformanceWindow(false)
			_ = r.app.SetPermission(core.PermAccessibility, false)
		}, []string{"items", "Response"}, "Performance permissions are not ready: accessibility"},
	} {
		if tc.setup != nil {
			tc.setup()
		}
		sid := "s" + strings.ReplaceAll(tc.err[:8], " ", "")
		r.adb("performance", append([]string{"mode", "normal", "action", "start", "sessionId", sid}, tc.kv...)...)
		m := r.poll("failed", 2*time.Second, checkPerf, stateIs("failed"), "performance", "mode", "status")
		if str(m, "sessionId") != sid || str(m, "error") != tc.err {
			t.Errorf("%v: %v", tc.kv, m)
		}
	}
	// Invalid sessionId: invisible.
	if d := r.mutate("performance", "mode", "normal", "action", "start", "items", "CPU", "sessionId", "-bad"); str(d, "error") != "Invalid performance sessionId" {
		t.Error(d)
	}
	// Stop while the permission request is pending: stopping, then failed.
	_ = r.app.SetPermission(core.PermAccessibility, true)
	r.app.SetPermissionDialogDelay(10 * time.Second)
	r.adb("performance", "mode", "normal", "action", "start", "items", "CPU", "sessionId", "early")
	r.adb("performance", "mode", "normal", "action", "stop", "sessionId", "early")
	m := r.get("performance", "mode", "status")
	checkPerf(t, m)
	if str(m, "state") != "stopping" || str(m, "error") != "Performance start cancellation is waiting for the permission request" {
		t.Fatal(m)
	}
	m = r.poll("failed", 15*time.Second, checkPerf, stateIs("failed"), "performance", "mode", "status")
	if str(m, "error") != "Performance start was cancelled before recording" {
		t.Error(m)
	}
	// A generated sessionId when none is given.
	r.app.SetPermissionDialogDelay(0)
	r.adb("performance", "mode", "normal", "action", "start", "items", "CPU")
	m = r.poll("recording", 5*time.Second, checkPerf, stateIs("recording"), "performance", "mode", "status")
	if !regexp.MustCompile(`^[0-9a-f-]{36}$`).MatchString(str(m, "sessionId")) {
		t.Error(m)
	}
}

func TestPerformanceDisplayLease(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	idle := r.get("performance", "mode", "display", "action", "status")
	checkDisplay(t, idle)
	if d := r.get("performance", "mode", "display", "action", "pause"); str(d, "error") != "Unsupported performance display action: pause" || has(d, "errorCode") {
		t.Error(d)
	}
	r.adb("performance", "mode", "display", "action", "start", "targetApp", counterPkg, "items", "CPU,Memory", "sessionId", "disp-1")
	m := r.poll("running", 5*time.Second, checkDisplay, stateIs("running", "failed"), "performance", "mode", "display", "action", "status")
	if str(m, "state") != "running" || !slices.Equal(strList(t, m, "ownedDisplayNames"), []string{"CPU", "内存"}) || str(m, "targetPackage") != counterPkg {
		t.Fatal(m)
	}
	m = r.get("performance", "mode", "display", "action", "status")
	checkDisplay(t, m)
	if len(sub(m, "values")) != 2 || num(m, "sampledAt") <= 0 {
		t.Errorf("values: %v", m)
	}
	// Another owner can neither stop it nor take the provider.
	if d := r.mutate("performance", "mode", "display", "action", "stop", "sessionId", "intruder"); str(d, "error") != "Performance display sessionId does not match" || sub(d, "performanceDisplay") == nil {
		t.Error(d)
	}
	if d := r.mutate("performance", "mode", "display", "action", "start", "items", "CPU", "sessionId", "disp-2"); str(d, "error") != "A performance display session is already active" {
		t.Error(d)
	}
	r.adb("performance", "mode", "normal", "action", "start", "items", "CPU", "sessionId", "rec")
	pm := r.poll("failed", 2*time.Second, checkPerf, stateIs("failed"), "performance", "mode", "status")
	if str(pm, "error") != "Another performance display session is already running" {
		t.Error(pm)
	}
	if st := r.get("performance", "mode", "display", "action", "status"); str(st, "state") != "running" || str(st, "sessionId") != "disp-1" {
		t.Errorf("display disturbed: %v", st)
	}
	// Cleanup incomplete once, then stopped.
	r.app.SetPerfCleanupIncomplete(1)
	r.adb("performance", "mode", "display", "action", "stop", "sessionId", "disp-1")
	m = r.get("performance", "mode", "display", "action", "status")
	checkDisplay(t, m)
	if str(m, "state") != "stopping" || m["stopRetryable"] != true {
		t.Fatal(m)
	}
	r.adb("performance", "mode", "display", "action", "stop", "sessionId", "disp-1")
	m = r.get("performance", "mode", "display", "action", "status")
	checkDisplay(t, m)
	if str(m, "state") != "stopped" || len(strList(t, m, "ownedDisplayNames")) != 0 || len(sub(m, "values")) != 0 {
		t.Fatal(m)
	}
	// While a recording owns the provider, display start fails visibly.
	r.adb("performance", "mode", "normal", "action", "start", "items", "CPU", "sessionId", "rec2")
	r.poll("recording", 5*time.Second, checkPerf, stateIs("recording"), "performance", "mode", "status")
	r.adb("performance", "mode", "display", "action", "start", "items", "Memory", "sessionId", "disp-3")
	m = r.poll("failed", 2*time.Second, checkDisplay, stateIs("failed"), "performance", "mode", "display", "action", "status")
	if str(m, "error") != "Another performance session is already running" {
		t.Error(m)
	}
	// Display stop while starting waits for the permission callback.
	r.adb("performance", "mode", "normal", "action", "stop", "sessionId", "rec2")
	r.poll("stopped", 5*time.Second, checkPerf, stateIs("stopped"), "performance", "mode", "status")
	r.app.SetPermissionDialogDelay(10 * time.Second)
	r.adb("performance", "mode", "display", "action", "start", "items", "Memory", "sessionId", "disp-4")
	r.adb("performance", "mode", "display", "action", "stop", "sessionId", "disp-4")
	if m := r.get("performance", "mode", "display", "action", "status"); str(m, "state") != "stopping" ||
		str(m, "error") != "Performance display start cancellation is waiting for permissions" {
		t.Error(m)
	}
	m = r.poll("failed", 15*time.Second, checkDisplay, stateIs("failed"), "performance", "mode", "display", "action", "status")
	if str(m, "error") != "Performance display start was cancelled" {
		t.Error(m)
	}
}

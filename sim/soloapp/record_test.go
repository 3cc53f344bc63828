package soloapp

import (
	"bytes"
	"encoding/binary"
	"image/jpeg"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/sim/soloapp/core"
	"github.com/solopi-dev/solopi/sim/soloapp/media"
)

func TestRecordLifecycle(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	checkRecording(t, r.get("record", "recordMode", "status"))
	for _, tc := range []struct {
		kv         []string
		code, msg  string
		withRecord bool
	}{
		{[]string{"recordMode", "pause"}, "unsupported_mode", "Unsupported record mode: pause", false},
		{[]string{}, "unsupported_mode", "Unsupported record mode: null", false},
		{[]string{"recordMode", "normal", "caseName", "x", "targetApp", counterPkg}, "missing_session_id", "Parameter 'sessionId' is required", false},
		{[]string{"recordMode", "normal", "sessionId", "s", "caseName", "  ", "targetApp", counterPkg}, "missing_case_name", "", false},
		{[]string{"recordMode", "normal", "sessionId", "s", "caseName", "c", "targetApp", "com.android.launcher3"}, "target_app_not_found", "Target application was not found", false},
		{[]string{"recordMode", "stop", "sessionId", "s"}, "recording_not_active", "The recording session has no active owner", true},
	} {
		wantErr(t, r.mutate("record", tc.kv...), tc.code, tc.msg)
	}
	r.adb("record", "recordMode", "normal", "sessionId", "rec-1", "caseName", " Smoke ", "targetApp", counterPkg, "caseDesc", "d")
	m := r.poll("recording", 5*time.Second, checkRecording, stateIs("recording", "failed"), "record", "recordMode", "status")
	if str(m, "state") != "recording" || str(m, "caseName") != "Smoke" {
		t.Fatal(m)
	}
	if s := r.get("status", "type", "status"); str(s, "status") != "record" {
		t.Errorf("status resolver: %v", s)
	}
	r.phone.mu.Lock()
	stops, launches := slices.Clone(r.phone.stops), slices.Clone(r.phone.launches)
	r.phone.mu.Unlock()
	if !slices.Contains(stops, counterPkg) || !slices.Contains(launches, counterPkg) {
		t.Errorf("target not restarted: %v %v", stops, launches)
	}
	d := r.mutate("record", "recordMode", "normal", "sessionId", "rec-2", "caseName", "x", "targetApp", counterPkg)
	wantErr(t, d, "recording_conflict", "A recording session is already active")
	wantErr(t, r.mutate("record", "recordMode", "stop", "sessionId", "rec-2"), "session_mismatch", "Recording sessionId does not match")
	r.adb("record", "recordMode", "stop", "sessionId", "rec-1")
	m = r.poll("stopped", 5*time.Second, checkRecording, stateIs("stopped", "failed"), "record", "recordMode", "status")
	if str(m, "state") != "stopped" || num(m, "caseId") <= 0 {
		t.Fatal(m)
	}
	// The recorded case is in the DB and loads as a one-step case.
	cq := r.get("harness", "type", "case", "caseName", "Smoke")
	if cq["success"] != true || num(sub(cq, "case"), "id") != num(m, "caseId") || !strings.Contains(str(sub(cq, "case"), "operationLog"), "CLICK") {
		t.Errorf("case: %v", cq)
	}
	wantErr(t, r.mutate("record", "recordMode", "stop", "sessionId", "rec-1"), "recording_not_active", "The recording session has no active owner")
}

func TestRecordStopWhileStartingAndDenied(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	r.app.SetPermissionDialogDelay(10 * time.Second)
	r.adb("record", "recordMode", "normal", "sessionId", "a", "caseName", "c", "targetApp", counterPkg)
	r.adb("record", "recordMode", "stop", "sessionId", "a")
	m := r.get("record", "recordMode", "status")
	checkRecording(t, m)
	if str(m, "state") != "stopped" || m["cancelledBeforeStart"] != true {
		t.Fatal(m)
	}
	r.sleep(11 * time.Second)
	if m := r.get("record", "recordMode", "status"); str(m, "state") != "stopped" || r.get("status", "type", "status")["status"] != "none" {
		t.Errorf("late callback changed the session: %v", m)
	}
	r.app.SetPermissionDialogDelay(0)
	_ = r.app.SetPermission(core.PermFloat, false)
	r.adb("record", "recordMode", "normal", "sessionId", "b", "caseName", "c", "targetApp", counterPkg)
	m = r.poll("failed", 2*time.Second, checkRecording, stateIs("failed"), "record", "recordMode", "status")
	if str(m, "error") != "Permission denied: float" {
		t.Error(m)
	}
	r.app.SetRecordingManagerAvailable(false)
	wantErr(t, r.mutate("record", "recordMode", "normal", "sessionId", "c", "caseName", "c", "targetApp", counterPkg), "recording_manager_unavailable", "")
}

func TestMP4Structure(t *testing.T) {
	t.Parallel()
	data, err := media.BuildMP4(720, 480, 2300)
	if err != nil {
		t.Fatal(err)
	}
	boxes, good := media.ParseMP4(data)
	if !good || len(boxes) != 3 || boxes[0].Type != "ftyp" || boxes[1].Type != "moov" || boxes[2].Type != "mdat" {
		t.Fatalf("top level: %+v", boxes)
	}
	var path []string
	var walk func(bs []media.Mp4Box, prefix string)
	walk = func(bs []media.Mp4Box, prefix string) {
		for _, b := range bs {
			path = append(path, prefix+b.Type)
			walk(b.Children, prefix+b.Type+"/")
		}
	}
	walk(boxes, "")
	for _, want := range []string{"moov/mvhd", "moov/trak/tkhd", "moov/trak/mdia/mdhd", "moov/trak/mdia/hdlr",
		"moov/trak/mdia/minf/stbl/stsd", "moov/trak/mdia/minf/stbl/stsz", "moov/trak/mdia/minf/stbl/stco"} {
		if !slices.Contains(path, want) {
			t.Errorf("missing %s in %v", want, path)
		}
	}
	// stco points at the first frame, a decodable 720x480 JPEG.
	i := bytes.Index(data, []byte("stco"))
	off := binary.BigEndian.Uint32(data[i+12:])
	img, err := jpeg.Decode(bytes.NewReader(data[off:]))
	if err != nil || img.Bounds().Dx() != 720 || img.Bounds().Dy() != 480 {
		t.Fatalf("first frame: %v %v", err, img)
	}
	if big, err := media.BuildMP4(4096, 4096, 100); err != nil || len(big) == 0 {
		t.Fatal(err)
	}
}

func TestScreenRecordLifecycle(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	checkScreen(t, r.get("screen-record", "action", "status"))
	for _, tc := range []struct {
		kv        []string
		code, msg string
	}{
		{[]string{"action", "pause"}, "unsupported_action", "Unsupported screen-record action: pause"},
		{[]string{"action", "start", "sessionId", "bad id"}, "invalid_session_id", "sessionId must contain 1-128 letters, numbers, dots, underscores, or hyphens"},
		{[]string{"action", "start", "sessionId", "s", "resolution", "720*480"}, "invalid_screen_record_config", "resolution must use WIDTHxHEIGHT format"},
		{[]string{"action", "start", "sessionId", "s", "resolution", "721x480"}, "invalid_screen_record_config", "resolution dimensions must be even numbers between 128 and 4096"},
		{[]string{"action", "start", "sessionId", "s", "resolution", "100x480"}, "invalid_screen_record_config", "resolution dimensions must be even numbers between 128 and 4096"},
		{[]string{"action", "start", "sessionId", "s", "bitrateKbps", "fast"}, "invalid_screen_record_config", "bitrateKbps must be an integer"},
		{[]string{"action", "start", "sessionId", "s", "bitrateKbps", "99"}, "invalid_screen_record_config", "bitrateKbps is outside the supported range"},
		{[]string{"action", "start", "sessionId", "s", "frameRate", "121"}, "invalid_screen_record_config", "frameRate is outside the supported range"},
		{[]string{"action", "start", "sessionId", "s", "durationSec", "0"}, "invalid_screen_record_config", "durationSec is outside the supported range"},
		{[]string{"action", "stop", "sessionId", ""}, "invalid_session_id", "A valid sessionId is required"},
		{[]string{"action", "stop", "sessionId", "nope"}, "session_mismatch", "Screen recording sessionId does not match"},
	} {
		wantErr(t, r.mutate("screen-record", tc.kv...), tc.code, tc.msg)
	}
	if err := r.app.ConfirmScreenRecord(true); err == nil {
		t.Error("confirm without a pending session")
	}
	r.adb("screen-record", "action", "start", "sessionId", "sr-1", "resolution", "", "durationSec", "30")
	m := r.get("screen-record", "action", "status")
	checkScreen(t, m)
	if str(m, "state") != "pending-user-confirmation" || str(m, "capturesRoot") != "/storage/emulated/0/solopi/ScreenCaptures" ||
		str(m, "resolution") != "720x480" || num(m, "bitrateKbps") != 2500 || num(m, "frameRate") != 30 {
		t.Fatal(m)
	}
	wantErr(t, r.mutate("screen-record", "action", "start", "sessionId", "sr-2"), "screen_record_conflict", "A screen recording session is already active")
	if err := r.app.ConfirmScreenRecord(true); err != nil {
		t.Fatal(err)
	}
	m = r.poll("recording", 5*time.Second, checkScreen, stateIs("recording", "failed"), "screen-record", "action", "status")
	if str(m, "state") != "recording" || !strings.HasPrefix(str(m, "outputPath"), "/storage/emulated/0/solopi/ScreenCaptures/Screen-") ||
		!strings.HasSuffix(str(m, "outputPath"), "-720x480.mp4") {
		t.Fatal(m)
	}
	// A recording snapshot carries a live durationMs on the device clock.
	first := num(m, "durationMs")
	r.sleep(time.Second)
	m = r.get("screen-record", "action", "status")
	checkScreen(t, m)
	if str(m, "state") != "recording" || num(m, "durationMs")-first < 1000 || num(m, "durationMs") > r.app.NowMs()-num(m, "startedAt") {
		t.Fatalf("durationMs is not live: %d then %v", first, m)
	}
	r.adb("screen-record", "action", "stop", "sessionId", "sr-1")
	m = r.poll("stopped", 5*time.Second, checkScreen, stateIs("stopped", "failed"), "screen-record", "action", "status")
	if str(m, "state") != "stopped" || m["autoStopped"] != false {
		t.Fatal(m)
	}
	data, err := r.phone.ReadFile(str(m, "outputPath"))
	if err != nil || int64(len(data)) != num(m, "fileSize") {
		t.Fatalf("file: %v %d", err, len(data))
	}
	if _, good := media.ParseMP4(data); !good {
		t.Error("output is not an MP4")
	}
	// Stop of a terminal session returns its snapshot.
	if d := r.mutate("screen-record", "action", "stop", "sessionId", "sr-1"); str(d, "state") != "stopped" {
		t.Error(d)
	}
	// The recording is a valid input of video-analysis (shell spelling).
	shell := core.ShellForm(str(m, "outputPath"))
	r.adb("video-analysis", "action", "start", "requestId", "e2e", "videoPath", shell, "actionOffsetMs", "100", "differenceThreshold", "0.02")
	va := r.poll("analysis", 10*time.Second, nil, func(m map[string]any) bool { return m["terminal"] == true }, "video-analysis", "action", "status", "requestId", "e2e")
	if str(va, "state") != "completed" || str(va, "videoPath") != shell || num(va, "sizeBytes") != num(m, "fileSize") {
		t.Errorf("analysis of the recording: %v", va)
	}
}

func TestScreenRecordCancelDenyAutoStop(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	before := len(r.phone.allFiles())
	r.adb("screen-record", "action", "start", "sessionId", "p")
	r.adb("screen-record", "action", "stop", "sessionId", "p")
	m := r.get("screen-record", "action", "status")
	checkScreen(t, m)
	if str(m, "state") != "stopped" || m["cancelledBeforeStart"] != true {
		t.Fatal(m)
	}
	if err := r.app.ConfirmScreenRecord(true); err == nil {
		t.Error("late confirmation accepted")
	}
	if len(r.phone.allFiles()) != before {
		t.Error("a file was written for a cancelled recording")
	}
	r.adb("screen-record", "action", "start", "sessionId", "d")
	_ = r.app.ConfirmScreenRecord(false)
	m = r.get("screen-record", "action", "status")
	checkScreen(t, m)
	if str(m, "state") != "failed" || !strings.HasPrefix(str(m, "error"), "MediaProjection permission was not granted: ") {
		t.Fatal(m)
	}
	// Stop while starting (encoder not yet running) is a cancellation too.
	r.app.SetScreenEncoderDelay(30 * time.Second)
	r.adb("screen-record", "action", "start", "sessionId", "s")
	_ = r.app.ConfirmScreenRecord(true)
	r.adb("screen-record", "action", "stop", "sessionId", "s")
	m = r.poll("stopped", 2*time.Second, checkScreen, stateIs("stopped"), "screen-record", "action", "status")
	if m["cancelledBeforeStart"] != true {
		t.Error(m)
	}
	r.app.SetScreenEncoderDelay(0)
	r.app.SetScreenRecordAutoConfirm(true)
	r.adb("screen-record", "action", "start", "sessionId", "auto", "durationSec", "1", "resolution", "320x240")
	m = r.poll("auto-stopped", 10*time.Second, checkScreen, stateIs("stopped", "failed"), "screen-record", "action", "status")
	if str(m, "state") != "stopped" || m["autoStopped"] != true || num(m, "fileSize") <= 0 {
		t.Fatal(m)
	}
	r.app.SetExternalScreenRecorder(true)
	wantErr(t, r.mutate("screen-record", "action", "start", "sessionId", "x"), "external_screen_record_conflict", "Another SoloPi screen recorder is already active")
	r2 := newRig(t, core.Config{Device: core.DeviceInfo{SDK: 19, AndroidVersion: "4.4"}})
	wantErr(t, r2.mutate("screen-record", "action", "start", "sessionId", "x"), "unsupported_android_version", "Screen recording requires Android 5.0 or newer")
}

func TestScanLifecycle(t *testing.T) {
	t.Parallel()
	r := newRig(t, core.Config{})
	checkScan(t, r.get("scan", "action", "status"))
	wantErr(t, r.mutate("scan", "action", "look"), "unsupported_action", "Unsupported scan action: look")
	wantErr(t, r.mutate("scan", "action", "start", "sessionId", "-x"), "invalid_session_id", "A valid sessionId is required")
	for _, tc := range []struct{ format, codeType string }{
		{"EAN_13", "EAN-13"}, {"EAN_8", "EAN-8"}, {"CODE_128", "CODE 128"}, {"CODE_39", "CODE 39"},
		{"QR_CODE", "QR CODE"}, {"PDF_417", "PDF 417"}, {"DATA_MATRIX", "Datamatrix"},
	} {
		sid := "scan-" + tc.format
		r.adb("scan", "action", "start", "sessionId", sid)
		r.poll("scanning", 2*time.Second, checkScan, stateIs("scanning"), "scan", "action", "status")
		wantErr(t, r.mutate("scan", "action", "start", "sessionId", "other"), "scan_conflict", "A scan session is already active")
		if err := r.app.DeliverScanResult("solopi://startaction/replay?x=1", tc.format); err != nil {
			t.Fatal(err)
		}
		m := r.get("scan", "action", "status")
		checkScan(t, m)
		if str(m, "state") != "completed" || str(m, "codeType") != tc.codeType || str(m, "content") != "solopi://startaction/replay?x=1" {
			t.Fatal(m)
		}
		if err := r.app.DeliverScanResult("again", tc.format); err == nil {
			t.Error("second read accepted")
		}
	}
	// Cancel requires the exact sessionId.
	r.adb("scan", "action", "start", "sessionId", "c1")
	wantErr(t, r.mutate("scan", "action", "cancel", "sessionId", "c2"), "session_mismatch", "The scan sessionId does not match the active or latest session")
	r.adb("scan", "action", "cancel", "sessionId", "c1")
	m := r.get("scan", "action", "status")
	checkScan(t, m)
	if str(m, "state") != "cancelled" {
		t.Fatal(m)
	}
	// Camera permission missing, then granted; then denied.
	r.app.SetCameraPermission(false)
	r.adb("scan", "action", "start", "sessionId", "perm")
	r.poll("pending", 2*time.Second, checkScan, stateIs("pending-camera-permission"), "scan", "action", "status")
	r.app.SetCameraPermission(true)
	r.poll("scanning", 2*time.Second, checkScan, stateIs("scanning"), "scan", "action", "status")
	_ = r.app.CloseScanPage()
	r.app.SetCameraPermission(false)
	r.adb("scan", "action", "start", "sessionId", "deny")
	r.poll("pending", 2*time.Second, checkScan, stateIs("pending-camera-permission"), "scan", "action", "status")
	_ = r.app.RespondCameraPermission(false)
	if m := r.get("scan", "action", "status"); str(m, "error") != "Camera permission was denied" {
		t.Error(m)
	}
	r.app.SetCameraPermission(true)
	r.app.SetCameraInitError("camera busy")
	r.adb("scan", "action", "start", "sessionId", "init")
	m = r.poll("failed", 2*time.Second, checkScan, stateIs("failed"), "scan", "action", "status")
	if str(m, "error") != "Unable to initialize camera scanner: camera busy" {
		t.Error(m)
	}
	r.app.SetCameraInitError("")
	if err := r.app.SetManualScanActive(true); err != nil {
		t.Fatal(err)
	}
	wantErr(t, r.mutate("scan", "action", "start", "sessionId", "m"), "manual_scan_active", "A manual scan page is already active")
	checkScan(t, r.get("scan", "action", "status"))
	_ = r.app.SetManualScanActive(false)
	r.app.SetScanActivityBusy(true)
	wantErr(t, r.mutate("scan", "action", "start", "sessionId", "m"), "scan_activity_busy", "The previous scan page is still closing")
}

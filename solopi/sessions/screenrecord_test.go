package sessions

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/fault"
)

func TestScreenRecordStartStopAndPull(t *testing.T) {
	f := newSessFake(t)
	res, err := StartScreenRecording(context.Background(), f.device(), ScreenRecordConfig{}, ssFast)
	m := ssExpect(t, "screen-record-start", res, err, passed)
	id := m["sessionId"].(string)
	if m["state"] != "recording" || f.mutationCount("action=start", "sessionId="+id, "resolution=720x480", "bitrateKbps=2500", "frameRate=30", "durationSec=300") != 1 {
		t.Fatalf("start = %v, mutations %v", m, f.mutations)
	}
	out := filepath.Join(t.TempDir(), "rec.mp4")
	res, err = StopScreenRecording(context.Background(), f.device(), ScreenStopOptions{SessionID: id, Output: out, SessionTimings: ssFast})
	m = ssExpect(t, "screen-record-stop", res, err, passed)
	art := m["artifacts"].(map[string]any)["screenRecording"].(map[string]any)
	got, rerr := os.ReadFile(out)
	if rerr != nil || !bytes.Equal(got, f.file(fakeCaptures+"/Screen-20260101-120000-720x480.mp4")) || art["sizeBytes"] != m["fileSize"] {
		t.Fatalf("pulled file differs (%v): %v", rerr, m)
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 1 {
		t.Fatalf("temporary files were left next to the output: %v", entries)
	}
	for _, want := range []string{"test -f ", "stat -c %s "} {
		found := false
		for _, c := range f.ShellLog() {
			found = found || strings.HasPrefix(c, want)
		}
		if !found {
			t.Fatalf("%q was not run before the pull: %v", want, f.ShellLog())
		}
	}
	// The output now exists: a second pull is refused before the device.
	n := len(f.ShellLog())
	res, err = StopScreenRecording(context.Background(), f.device(), ScreenStopOptions{SessionID: id, Output: out, SessionTimings: ssFast})
	m = ssExpect(t, "screen-record-stop", res, err, fault.Invalid)
	ssWantCode(t, m, artifacts.CodeOutputExists)
	if len(f.ShellLog()) != n {
		t.Fatalf("the device was contacted although the output exists")
	}
}

func TestScreenRecordStopWhilePendingIsCancelledWithoutMP4(t *testing.T) {
	f := newSessFake(t)
	f.screenPlan = "pending"
	f.begin("screen", "mine", "pending-user-confirmation", map[string]any{"resolution": "720x480", "width": 720, "height": 480,
		"bitrateKbps": 2500, "frameRate": 30, "durationSec": 300, "requestedAt": f.now(), "capturesRoot": fakeCaptures})
	out := filepath.Join(t.TempDir(), "rec.mp4")
	res, err := StopScreenRecording(context.Background(), f.device(), ScreenStopOptions{SessionID: "mine", Output: out, SessionTimings: ssFast})
	m := ssExpect(t, "screen-record-stop", res, err, passed)
	if m["cancelledBeforeStart"] != true || m["outputPath"] != nil {
		t.Fatalf("stop while pending = %v", m)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatalf("an MP4 was written for a recording cancelled before start")
	}
	for _, c := range f.ShellLog() {
		if strings.HasPrefix(c, "test -f") || strings.HasPrefix(c, "sha256sum") {
			t.Fatalf("a pull was attempted: %v", f.ShellLog())
		}
	}
}

func TestScreenRecordPendingTimesOutWithHintAndCleanup(t *testing.T) {
	f := newSessFake(t)
	f.screenPlan = "pending"
	res, err := StartScreenRecording(context.Background(), f.device(), ScreenRecordConfig{},
		SessionTimings{Timeout: 80 * time.Millisecond, Interval: 5 * time.Millisecond})
	m := ssExpect(t, "screen-record-start", res, err, fault.Timeout)
	if !strings.Contains(m["error"].(string), "MediaProjection") {
		t.Fatalf("no MediaProjection hint: %v", m)
	}
	cl := m["cleanup"].(map[string]any)
	if cl["success"] != true || cl["cancelledBeforeStart"] != true || m["lastStatus"].(map[string]any)["state"] != "pending-user-confirmation" {
		t.Fatalf("cleanup = %v", m)
	}
}

func TestScreenRecordDeniedIsExit2(t *testing.T) {
	f := newSessFake(t)
	f.screenPlan = "deny"
	res, err := StartScreenRecording(context.Background(), f.device(), ScreenRecordConfig{}, ssFast)
	m := ssExpect(t, "screen-record-start", res, err, fault.Failed)
	if m["state"] != "failed" || !strings.Contains(m["error"].(string), "MediaProjection") {
		t.Fatalf("denied = %v", m)
	}
}

func TestScreenRecordPullRefusesSizeMismatch(t *testing.T) {
	f := newSessFake(t)
	res, err := StartScreenRecording(context.Background(), f.device(), ScreenRecordConfig{}, ssFast)
	id := ssExpect(t, "screen-record-start", res, err, passed)["sessionId"].(string)
	// The device reports one size, the file on disk has another.
	f.then("screen", func(s map[string]any) {})
	f.mu.Lock()
	f.screenMutation("stop", id, nil)
	f.tick("screen")
	f.snaps["screen"]["fileSize"] = int64(5)
	f.mu.Unlock()
	out := filepath.Join(t.TempDir(), "rec.mp4")
	res, err = StopScreenRecording(context.Background(), f.device(), ScreenStopOptions{SessionID: id, Output: out, SessionTimings: ssFast})
	m := ssExpect(t, "screen-record-stop", res, err, fault.Transport)
	ssWantCode(t, m, CodeArtifactMismatch)
	if _, err := os.Stat(out); err == nil {
		t.Fatalf("a mismatching MP4 was published")
	}
}

func TestScreenRecordConfigAndOutputChecks(t *testing.T) {
	for _, c := range []ScreenRecordConfig{{Resolution: "721x480"}, {Resolution: "720*480"}, {Resolution: "64x64"}, {BitrateKbps: 99},
		{FrameRate: 121}, {DurationSec: 3601}} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	dir := t.TempDir()
	link := filepath.Join(dir, "link.mp4")
	os.Symlink(filepath.Join(dir, "target.mp4"), link)
	if _, err := CheckScreenOutput(link, true); err == nil {
		t.Errorf("a symlink output was accepted with --overwrite")
	}
	if _, err := CheckScreenOutput(dir, true); err == nil {
		t.Errorf("a directory output was accepted")
	}
	if _, err := CheckScreenOutput(filepath.Join(dir, "missing", "x.mp4"), false); err == nil {
		t.Errorf("an output without a parent directory was accepted")
	}
}

func TestScreenRecordValidator(t *testing.T) {
	base := `"success":true,"kind":"screen-recording","sessionId":"s1","resolution":"720x480","width":720,"height":480,"bitrateKbps":2500,"frameRate":30,"durationSec":300,"requestedAt":10,"capturesRoot":"/storage/emulated/0/solopi/ScreenCaptures"`
	rec := `"state":"recording","recording":true,"active":true,"terminal":false,"userActionRequired":false,"startedAt":20,"durationMs":5`
	ssValidatorCases(t, validateScreenRecording, []ssCase{
		{"idle", `{"success":true,"kind":"screen-recording","state":"idle","recording":false,"active":false,"terminal":false,"userActionRequired":false,"autoStopped":false,"cancelledBeforeStart":false}`, true},
		{"idle with root", `{"success":true,"kind":"screen-recording","state":"idle","recording":false,"active":false,"terminal":false,"userActionRequired":false,"capturesRoot":"/a/b/c/ScreenCaptures"}`, false},
		{"pending", `{` + base + `,"state":"pending-user-confirmation","recording":false,"active":true,"terminal":false,"userActionRequired":true,"requiredUserAction":"Confirm the Android MediaProjection system dialog"}`, true},
		{"pending without action text", `{` + base + `,"state":"pending-user-confirmation","recording":false,"active":true,"terminal":false,"userActionRequired":true}`, false},
		{"recording", `{` + base + `,` + rec + `,"outputPath":"/storage/emulated/0/solopi/ScreenCaptures/Screen-1.mp4"}`, true},
		{"output outside root", `{` + base + `,` + rec + `,"outputPath":"/storage/emulated/0/Download/Screen-1.mp4"}`, false},
		{"output not mp4", `{` + base + `,` + rec + `,"outputPath":"/storage/emulated/0/solopi/ScreenCaptures/../x.mp4"}`, false},
		{"resolution mismatch", `{` + strings.Replace(base, `"width":720`, `"width":640`, 1) + `,` + rec + `,"outputPath":"/storage/emulated/0/solopi/ScreenCaptures/a.mp4"}`, false},
		{"short root", `{` + strings.Replace(base, "/storage/emulated/0/solopi/ScreenCaptures", "/x/ScreenCaptures", 1) + `,` + rec + `,"outputPath":"/x/ScreenCaptures/a.mp4"}`, false},
		{"stopped without size", `{` + base + `,"state":"stopped","recording":false,"active":false,"terminal":true,"userActionRequired":false,"startedAt":20,"finishedAt":30,"durationMs":10,"outputPath":"/storage/emulated/0/solopi/ScreenCaptures/a.mp4"}`, false},
		{"duration mismatch", `{` + base + `,"state":"stopped","recording":false,"active":false,"terminal":true,"userActionRequired":false,"startedAt":20,"finishedAt":30,"durationMs":11,"fileSize":9,"outputPath":"/storage/emulated/0/solopi/ScreenCaptures/a.mp4"}`, false},
		{"cancelled with file", `{` + base + `,"state":"stopped","recording":false,"active":false,"terminal":true,"userActionRequired":false,"finishedAt":30,"cancelledBeforeStart":true,"fileSize":9}`, false},
		{"recording without live durationMs", `{` + base + `,` + strings.Replace(rec, `,"durationMs":5`, "", 1) + `,"outputPath":"/storage/emulated/0/solopi/ScreenCaptures/a.mp4"}`, false},
		{"negative durationMs", `{` + base + `,` + strings.Replace(rec, `"durationMs":5`, `"durationMs":-1`, 1) + `,"outputPath":"/storage/emulated/0/solopi/ScreenCaptures/a.mp4"}`, false},
		{"autoStopped while recording", `{` + base + `,` + rec + `,"outputPath":"/storage/emulated/0/solopi/ScreenCaptures/a.mp4","autoStopped":true}`, false},
	})
}

func TestScreenRecordPullOnlyFromSharedStorage(t *testing.T) {
	f := newSessFake(t)
	res, err := StartScreenRecording(context.Background(), f.device(), ScreenRecordConfig{}, ssFast)
	id := ssExpect(t, "screen-record-start", res, err, passed)["sessionId"].(string)
	f.mu.Lock()
	f.screenMutation("stop", id, nil)
	f.tick("screen")
	// A root the validator accepts, but outside shared storage.
	f.snaps["screen"]["capturesRoot"] = "/data/local/tmp/solopi/ScreenCaptures"
	f.snaps["screen"]["outputPath"] = "/data/local/tmp/solopi/ScreenCaptures/Screen-1.mp4"
	f.Files.Put("/data/local/tmp/solopi/ScreenCaptures/Screen-1.mp4", []byte("secret"))
	f.snaps["screen"]["fileSize"] = int64(6)
	f.mu.Unlock()
	out := filepath.Join(t.TempDir(), "rec.mp4")
	res, err = StopScreenRecording(context.Background(), f.device(), ScreenStopOptions{SessionID: id, Output: out, SessionTimings: ssFast})
	ssWantCode(t, ssExpect(t, "screen-record-stop", res, err, fault.Transport), CodeUnsafeDevicePath)
	if _, err := os.Stat(out); err == nil {
		t.Fatalf("a file outside shared storage was pulled")
	}
}

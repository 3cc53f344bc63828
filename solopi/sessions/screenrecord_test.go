package sessions

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
)

// screenRecorder is a phone whose user grants the MediaProjection dialog.
func screenRecorder(t *testing.T) *simPhone {
	f := newSimPhone(t)
	f.dev.App.SetScreenRecordAutoConfirm(true)
	return f
}

func TestScreenRecordStartStopAndPull(t *testing.T) {
	t.Parallel()
	f := screenRecorder(t)
	res, err := ssOut(StartScreenRecording(context.Background(), f.device(), ScreenRecordConfig{}, ssFast))
	m := ssExpect(t, "screen-record-start", res, err, passed)
	id := m["sessionId"].(string)
	if m["state"] != "recording" || f.mutationCount("action=start", "sessionId="+id, "resolution=720x480", "bitrateKbps=2500", "frameRate=30", "durationSec=300") != 1 {
		t.Fatalf("start = %v, mutations %v", m, f.dev.Mutations())
	}
	out := filepath.Join(t.TempDir(), "rec.mp4")
	res, err = ssOut(StopScreenRecording(context.Background(), f.device(), ScreenStopOptions{SessionID: id, Output: out, SessionTimings: ssFast}))
	m = ssExpect(t, "screen-record-stop", res, err, passed)
	// solopi-ai's screenRecording is the local path; ours is beside it.
	if p, _ := m["artifacts"].(map[string]any)["screenRecording"].(string); p != out {
		t.Errorf("artifacts.screenRecording = %v, want the path %s", m["artifacts"], out)
	}
	art := m["artifacts"].(map[string]any)["screenRecordingFile"].(map[string]any)
	got, rerr := os.ReadFile(out)
	if rerr != nil || len(got) == 0 || !bytes.Equal(got, f.file(m["outputPath"].(string))) || art["sizeBytes"] != m["fileSize"] {
		t.Fatalf("pulled file differs (%v): %v", rerr, m)
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 1 {
		t.Fatalf("temporary files were left next to the output: %v", entries)
	}
	for _, want := range []string{"test -f ", "stat -c %s "} {
		if !f.ran(want) {
			t.Fatalf("%q was not run before the pull: %v", want, f.dev.Commands())
		}
	}
	// The output now exists: a second pull is refused before the device.
	n := len(f.dev.Commands())
	res, err = ssOut(StopScreenRecording(context.Background(), f.device(), ScreenStopOptions{SessionID: id, Output: out, SessionTimings: ssFast}))
	m = ssExpect(t, "screen-record-stop", res, err, fault.Invalid)
	ssWantCode(t, m, fault.CodeOutputExists)
	if len(f.dev.Commands()) != n {
		t.Fatalf("the device was contacted although the output exists")
	}
}

func TestScreenRecordStopWhilePendingIsCancelledWithoutMP4(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t) // nobody answers the MediaProjection dialog
	f.otherClient("screen-record", "action", "start", "sessionId", "mine", "resolution", "720x480", "bitrateKbps", "2500", "frameRate", "30", "durationSec", "300")
	out := filepath.Join(t.TempDir(), "rec.mp4")
	res, err := ssOut(StopScreenRecording(context.Background(), f.device(), ScreenStopOptions{SessionID: "mine", Output: out, SessionTimings: ssFast}))
	m := ssExpect(t, "screen-record-stop", res, err, passed)
	if m["cancelledBeforeStart"] != true || m["outputPath"] != nil {
		t.Fatalf("stop while pending = %v", m)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatalf("an MP4 was written for a recording cancelled before start")
	}
	if f.ran("test -f") || f.ran("sha256sum") {
		t.Fatalf("a pull was attempted: %v", f.dev.Commands())
	}
}

func TestScreenRecordPendingTimesOutWithHintAndCleanup(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t) // nobody answers the MediaProjection dialog
	res, err := ssOut(StartScreenRecording(context.Background(), f.device(), ScreenRecordConfig{},
		SessionTimings{Timeout: 80 * time.Millisecond, Interval: 5 * time.Millisecond}))
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
	t.Parallel()
	f := newSimPhone(t)
	// The user refuses the dialog as soon as it shows.
	f.onState("screen-record", "pending-user-confirmation", func(device.WireObject) {
		if err := f.dev.App.ConfirmScreenRecord(false); err != nil {
			t.Errorf("refuse: %v", err)
		}
	})
	res, err := ssOut(StartScreenRecording(context.Background(), f.device(), ScreenRecordConfig{}, ssFast))
	m := ssExpect(t, "screen-record-start", res, err, fault.Failed)
	if m["state"] != "failed" || !strings.Contains(m["error"].(string), "MediaProjection") {
		t.Fatalf("denied = %v", m)
	}
}

func TestScreenRecordPullRefusesSizeMismatch(t *testing.T) {
	t.Parallel()
	f := screenRecorder(t)
	res, err := ssOut(StartScreenRecording(context.Background(), f.device(), ScreenRecordConfig{}, ssFast))
	id := ssExpect(t, "screen-record-start", res, err, passed)["sessionId"].(string)
	// The device reports one size, the file on disk has another.
	f.answerFault(sim.AnswerFault{Action: "screen-record", When: map[string]any{"state": "stopped"}, Set: map[string]any{"fileSize": 5}})
	out := filepath.Join(t.TempDir(), "rec.mp4")
	res, err = ssOut(StopScreenRecording(context.Background(), f.device(), ScreenStopOptions{SessionID: id, Output: out, SessionTimings: ssFast}))
	m := ssExpect(t, "screen-record-stop", res, err, fault.Transport)
	ssWantCode(t, m, fault.CodeArtifactMismatch)
	if _, err := os.Stat(out); err == nil {
		t.Fatalf("a mismatching MP4 was published")
	}
}

func TestScreenRecordConfigAndOutputChecks(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
	f := screenRecorder(t)
	res, err := ssOut(StartScreenRecording(context.Background(), f.device(), ScreenRecordConfig{}, ssFast))
	id := ssExpect(t, "screen-record-start", res, err, passed)["sessionId"].(string)
	// A root the validator accepts, but outside shared storage.
	if err := f.dev.Push(context.Background(), strings.NewReader("secret"), "/data/local/tmp/solopi/ScreenCaptures/Screen-1.mp4", 0o644, time.Time{}); err != nil {
		t.Fatal(err)
	}
	f.answerFault(sim.AnswerFault{Action: "screen-record", When: map[string]any{"state": "stopped"}, Set: map[string]any{
		"capturesRoot": "/data/local/tmp/solopi/ScreenCaptures", "outputPath": "/data/local/tmp/solopi/ScreenCaptures/Screen-1.mp4", "fileSize": 6}})
	out := filepath.Join(t.TempDir(), "rec.mp4")
	res, err = ssOut(StopScreenRecording(context.Background(), f.device(), ScreenStopOptions{SessionID: id, Output: out, SessionTimings: ssFast}))
	ssWantCode(t, ssExpect(t, "screen-record-stop", res, err, fault.Transport), fault.CodeUnsafeDevicePath)
	if _, err := os.Stat(out); err == nil {
		t.Fatalf("a file outside shared storage was pulled")
	}
}

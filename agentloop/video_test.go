package agentloop

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/mp4check"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/video"
)

// simScreen is an in-process simulated phone as every recording run
// sees it (device.RecorderView: its shell runs screenrecord, its sync
// service pulls the parts).
type simScreen struct {
	device.RecorderView
	dev *sim.Device
}

// newSimScreen starts one whose time runs scale times faster than the
// host's (1: a part of a recording lasts its full 180 s).
func newSimScreen(t *testing.T, scale float64) simScreen {
	t.Helper()
	dev := sim.New(sim.Options{Serial: "sim-agent-video", TimeScale: scale})
	t.Cleanup(func() { dev.Close() })
	return simScreen{RecorderView: device.NewDevice(dev, device.DeviceOptions{}).RecorderView(), dev: dev}
}

// deviceFiles is what the recorder left in the phone's temporary directory.
func (s simScreen) deviceFiles(t *testing.T) string {
	t.Helper()
	out, _, _, err := s.dev.Shell(context.Background(), "ls /data/local/tmp")
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func readVideoRecord(t *testing.T, dir string) VideoRecord {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, VideoFile))
	if err != nil {
		t.Fatal(err)
	}
	var r VideoRecord
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRunVideoAlwaysKeepsAPlayableRecording: a recording around an agent
// run on the counter device is kept beside the trajectory as video.mp4,
// playable, with video.json naming it and its start; every step of the
// run is a moment in it. The phone's own copy is deleted. A second run
// into the directory is refused without overwrite and, with it, starts
// from a directory without the stale recording.
func TestRunVideoAlwaysKeepsAPlayableRecording(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	phone := newSimScreen(t, 1)
	dir := t.TempDir()
	rv, err := OpenVideo(dir, video.ModeAlways, video.Options{Size: "180x400"}, false)
	if err != nil || rv == nil {
		t.Fatalf("open: %v %v", rv, err)
	}
	rv.Start(ctx, phone)
	res, a := runScript(t, "increase the counter to 2", &scriptModel{plans: []string{tapPlus, tapPlus, `finish(success=True, message="2")`}}, &counterDevice{}, nil)
	if res.Outcome != OutcomeCompleted {
		t.Fatalf("outcome %s: %s", res.Outcome, res.ErrorMessage)
	}
	r := rv.Stop(ctx, true)
	if !r.Kept || r.Error != "" || r.Discarded != "" || r.Mode != video.ModeAlways || r.Parts != 1 || len(r.Files) != 1 || r.Files[0].Path != "video.mp4" || r.StartedAt == nil {
		t.Fatalf("record %+v", r)
	}
	if r.PartSeconds != 180 {
		t.Errorf("part length %v s, want screenrecord's 180", r.PartSeconds)
	}
	b, err := os.ReadFile(filepath.Join(dir, "video.mp4"))
	if err != nil {
		t.Fatal(err)
	}
	if info, err := mp4check.Check(b); err != nil || info.Frames < 1 || info.Width != 180 {
		t.Fatalf("not a playable recording: %+v %v", info, err)
	}
	onDisk := readVideoRecord(t, dir)
	if !onDisk.Kept || len(onDisk.Files) != 1 || onDisk.Files[0].SHA256 != r.Files[0].SHA256 || onDisk.StartedAt == nil || !onDisk.StartedAt.Equal(*r.StartedAt) {
		t.Errorf("video.json %+v, the run's %+v", onDisk, r)
	}
	if left := phone.deviceFiles(t); strings.Contains(left, "solopi-video-") {
		t.Errorf("left on the phone: %s", left)
	}

	steps := StepTimeline(a.State().Events(), res.StartedAt, r)
	if len(steps) != 3 {
		t.Fatalf("steps %+v", steps)
	}
	for i, s := range steps {
		if s.Video == nil || s.Video.File != "video.mp4" || s.Video.Seconds < 0 || s.Video.Seconds > 180 {
			t.Errorf("step %d not on the recording: %+v", s.Step, s.Video)
		}
		if i > 0 && s.Video != nil && steps[i-1].Video != nil && s.Video.Seconds < steps[i-1].Video.Seconds {
			t.Errorf("step %d is before step %d in the recording", s.Step, steps[i-1].Step)
		}
	}

	_, err = OpenVideo(dir, video.ModeOnFailure, video.Options{}, false)
	if fault.CodeOf(err) != fault.CodeOutputExists || !strings.Contains(fault.From(err).Fields()["output"].(string), "video") {
		t.Fatalf("a stale recording was not refused: %v", err)
	}
	rv, err = OpenVideo(dir, video.ModeOnFailure, video.Options{}, true)
	if err != nil || rv == nil {
		t.Fatalf("overwrite: %v", err)
	}
	for _, name := range []string{"video.mp4", VideoFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s of the earlier run is still there: %v", name, err)
		}
	}
}

// TestRunVideoOnFailure keeps the recording of a run that did not
// complete and discards (on the phone too) that of one that did.
func TestRunVideoOnFailure(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	phone := newSimScreen(t, 1)
	for _, completed := range []bool{true, false} {
		dir := t.TempDir()
		rv, err := OpenVideo(dir, video.ModeOnFailure, video.Options{Size: "180x400"}, false)
		if err != nil {
			t.Fatal(err)
		}
		rv.Start(ctx, phone)
		if err := phone.Clock().Sleep(ctx, 100*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		r := rv.Stop(ctx, completed)
		mp4s, _ := filepath.Glob(filepath.Join(dir, "*.mp4"))
		_, jsonErr := os.Stat(filepath.Join(dir, VideoFile))
		if completed {
			if r.Kept || r.Discarded != "passed" || len(mp4s) != 0 || !os.IsNotExist(jsonErr) || r.StartedAt == nil || r.Error != "" {
				t.Errorf("completed run: record %+v, files %v, video.json %v", r, mp4s, jsonErr)
			}
		} else if !r.Kept || r.Discarded != "" || len(mp4s) != 1 || jsonErr != nil {
			t.Errorf("failed run: record %+v, files %v, video.json %v", r, mp4s, jsonErr)
		}
		if left := phone.deviceFiles(t); strings.Contains(left, "solopi-video-") {
			t.Errorf("completed=%v left on the phone: %s", completed, left)
		}
	}
}

// TestRunVideoFaultsAreTheRecordsError: a recorder that cannot start (a
// size screenrecord refuses) leaves the run alone and says why in the
// record; a record that cannot be written says so beside the kept parts.
// Mode off records nothing and its nil recording is safe to use.
func TestRunVideoFaultsAreTheRecordsError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	phone := newSimScreen(t, 1)

	for _, m := range []video.Mode{"", video.ModeOff} {
		rv, err := OpenVideo(t.TempDir(), m, video.Options{}, false)
		if rv != nil || err != nil {
			t.Fatalf("mode %q: %v %v", m, rv, err)
		}
		rv.Start(ctx, phone)
		if r := rv.Stop(ctx, false); r != nil {
			t.Fatalf("mode %q: record %+v", m, r)
		}
	}

	dir := t.TempDir()
	rv, err := OpenVideo(dir, video.ModeAlways, video.Options{Size: "3x3"}, false)
	if err != nil {
		t.Fatal(err)
	}
	rv.Start(ctx, phone)
	r := rv.Stop(ctx, false)
	if r.Kept || r.StartedAt != nil || len(r.Files) != 0 || r.Files == nil || !strings.HasPrefix(r.Error, "screenrecord did not start: ") || r.Mode != video.ModeAlways {
		t.Fatalf("record %+v", r)
	}
	if StepTimeline([]AgentEvent{{Step: 1, Timestamp: time.Now()}}, time.Now(), r)[0].Video != nil {
		t.Error("a step was put on a recording that never started")
	}

	// video.json's place is taken by a directory the run cannot replace.
	dir = t.TempDir()
	rv, err = OpenVideo(dir, video.ModeAlways, video.Options{Size: "180x400"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, VideoFile, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	rv.Start(ctx, phone)
	r = rv.Stop(ctx, true)
	if !r.Kept || len(r.Files) != 1 || !strings.Contains(r.Error, "video.json: ") {
		t.Fatalf("record %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "video.mp4")); err != nil {
		t.Errorf("the recording was not kept: %v", err)
	}
}

// TestRunVideoRollsOver: parts of one second of phone time; a recording longer
// than that keeps numbered parts, and a moment past the first part is in
// a later one.
func TestRunVideoRollsOver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	phone := newSimScreen(t, 100)
	dir := t.TempDir()
	rv, err := OpenVideo(dir, video.ModeAlways, video.Options{Size: "180x400", TimeLimit: time.Second}, false)
	if err != nil {
		t.Fatal(err)
	}
	rv.Start(ctx, phone)
	// The phone runs 100 times faster than the host: wait until the
	// recorder has rolled over to a second part.
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for !strings.Contains(phone.deviceFiles(t), "-2.mp4") {
		if err := phone.Clock().Sleep(wctx, 10*time.Millisecond); err != nil {
			t.Fatalf("no second part: %v", err)
		}
	}
	r := rv.Stop(ctx, true)
	if !r.Kept || r.Error != "" || r.Parts < 2 || len(r.Files) != r.Parts || r.PartSeconds != 1 {
		t.Fatalf("record %+v", r)
	}
	for i, f := range r.Files {
		if want := "video-" + strconv.Itoa(i+1) + ".mp4"; f.Path != want {
			t.Errorf("part %d is %s, want %s", i+1, f.Path, want)
		}
	}
	at := r.StartedAt.Add(1250 * time.Millisecond)
	m := r.moment(at)
	if m == nil || m.File != "video-2.mp4" || m.Seconds != 0.25 {
		t.Errorf("1.25 s in: %+v", m)
	}
	if m := r.moment(r.StartedAt.Add(-time.Second)); m == nil || m.File != "video-1.mp4" || m.Seconds != 0 {
		t.Errorf("before the start: %+v", m)
	}
	last := r.Files[len(r.Files)-1].Path
	if m := r.moment(r.StartedAt.Add(time.Hour)); m == nil || m.File != last || m.Seconds < 3600-float64(len(r.Files)) {
		t.Errorf("past the end: %+v (last part %s)", m, last)
	}
}

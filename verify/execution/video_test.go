package execution

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/internal/mp4check"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/video"
	"github.com/solopi-dev/solopi/verify"
)

// simScreen is an in-process simulated phone's screen as verify-run
// records it (device.RecorderView); the replays and sessions stay the
// scripted counterPhone's. Its time is the host's, so that a slow host
// never rolls a part over (180 s) within a test.
func simScreen(t *testing.T, serial string) (device.RecorderView, *sim.Device) {
	t.Helper()
	dev := sim.New(sim.Options{Serial: serial, TimeScale: 1})
	t.Cleanup(func() { dev.Close() })
	return device.NewDevice(dev, device.DeviceOptions{}).RecorderView(), dev
}

// noDeviceParts fails when a recording's parts were left on the phone.
func noDeviceParts(t *testing.T, dev *sim.Device) {
	t.Helper()
	out, _, _, err := dev.Shell(context.Background(), "ls /data/local/tmp")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "solopi-video-") {
		t.Errorf("left on the phone: %s", out)
	}
}

// runVideo runs fixture (with the static decisions when decisions) on
// phones with e's recording settings.
func runVideo(t *testing.T, ctx context.Context, fixture string, decisions bool, phones []Ports, edit func(*Engine)) *runOutput {
	t.Helper()
	plan := compileFixture(t, fixture)
	rememberCases(plan)
	e := &Engine{Phones: phones}
	if decisions {
		d, err := parseDecisions(readFixture(t, "counter-agent-decisions"), plan)
		if err != nil {
			t.Fatal(err)
		}
		e.Decisions = d
	}
	edit(e)
	out, err := e.Run(ctx, plan, filepath.Join(t.TempDir(), "run"))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readManifest(t *testing.T, root string) artifacts.Manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, artifacts.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m artifacts.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestEngineRecordsEveryPhoneOfAFailedRun: a failed run on two phones
// with on-failure keeps one playable recording per phone, named by its
// serial (made a file name), in the evidence and its manifest; every
// segment and step of the timeline is a moment in its own phone's
// recording.
func TestEngineRecordsEveryPhoneOfAFailedRun(t *testing.T) {
	t.Parallel()
	serials := []string{"127.0.0.1:5555", "emulator-5556"}
	var phones []Ports
	var sims []*sim.Device
	for _, s := range serials {
		screen, dev := simScreen(t, s)
		p := &counterPhone{}
		phones = append(phones, Ports{Serial: s, Runner: p, Agent: p, Screen: screen})
		sims = append(sims, dev)
	}
	out := runVideo(t, context.Background(), "counter-outcome-matrix", true, phones, func(e *Engine) {
		e.Video, e.VideoOptions = video.ModeOnFailure, video.Options{Size: "180x400"}
	})
	if out.Report.Status != verify.Failed || out.Report.OutcomeFingerprint != outcomeMatrixDecisions {
		t.Fatalf("status %s fingerprint %s: the recording changed the verdict", out.Report.Status, out.Report.OutcomeFingerprint)
	}
	tl := out.Timeline
	if len(tl.Videos) != 2 {
		t.Fatalf("videos %+v", tl.Videos)
	}
	root := filepath.Dir(out.ReportPath)
	files := map[string]string{} // part → serial
	for i, v := range tl.Videos {
		want := []string{"video-127.0.0.1_5555.mp4", "video-emulator-5556.mp4"}[i]
		if v.Serial != serials[i] || !v.Kept || v.Error != "" || v.Discarded != "" || v.Mode != video.ModeOnFailure || len(v.Files) != 1 || v.Files[0].Path != want || v.OffsetMs < 0 {
			t.Fatalf("video %d: %+v", i, v)
		}
		b, err := os.ReadFile(filepath.Join(root, want))
		if err != nil {
			t.Fatal(err)
		}
		if info, err := mp4check.Check(b); err != nil || info.Frames < 1 || info.Width != 180 {
			t.Errorf("%s: %+v %v", want, info, err)
		}
		files[want] = v.Serial
		noDeviceParts(t, sims[i])
	}
	listed := map[string]bool{}
	for _, f := range readManifest(t, root).Files {
		listed[f.Path] = true
	}
	for name := range files {
		if !listed[name] {
			t.Errorf("manifest.json does not bind %s", name)
		}
	}
	if !listed["report.json"] || !listed[TimelineFile] {
		t.Errorf("manifest.json lacks the report or the timeline: %v", listed)
	}
	steps := 0
	for _, s := range tl.Segments {
		if s.Video == nil || files[s.Video.File] != s.Serial || s.Video.Seconds < 0 {
			t.Errorf("segment %s on %s: %+v", s.SegmentID, s.Serial, s.Video)
		}
		for _, st := range s.Steps {
			steps++
			if st.Video == nil || st.Video.File != s.Video.File || st.Video.Seconds < s.Video.Seconds {
				t.Errorf("segment %s step %d: %+v (segment at %+v)", s.SegmentID, st.Index, st.Video, s.Video)
			}
		}
	}
	if len(tl.Segments) == 0 || steps == 0 {
		t.Fatalf("the timeline has %d segments, %d steps", len(tl.Segments), steps)
	}
	// timeline.json is the output's timeline, in its schema.
	var onDisk Timeline
	b, err := os.ReadFile(out.TimelinePath)
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, "verify-timeline", b)
	if err := json.Unmarshal(b, &onDisk); err != nil || len(onDisk.Videos) != 2 || onDisk.Videos[1].Files[0].SHA256 != tl.Videos[1].Files[0].SHA256 {
		t.Errorf("timeline.json %s (%v)", b, err)
	}
}

// TestEngineVideoOnFailureDiscardsAPassedRun: a passed run keeps no
// recording (on the phone neither), puts no segment on one and names one
// phone's recording without a serial.
func TestEngineVideoOnFailureDiscardsAPassedRun(t *testing.T) {
	t.Parallel()
	screen, dev := simScreen(t, "sim-passed")
	p := &counterPhone{}
	out := runVideo(t, context.Background(), "counter-success", false, []Ports{{Serial: "sim-passed", Runner: p, Agent: p, Screen: screen}}, func(e *Engine) {
		e.Video, e.VideoOptions = video.ModeOnFailure, video.Options{Size: "180x400"}
	})
	if out.Report.Status != verify.Passed {
		t.Fatalf("status %s", out.Report.Status)
	}
	v := out.Timeline.Videos
	if len(v) != 1 || v[0].Kept || v[0].Discarded != "passed" || v[0].Serial != "" || v[0].Error != "" || v[0].Parts < 1 {
		t.Fatalf("videos %+v", v)
	}
	root := filepath.Dir(out.ReportPath)
	if mp4s, _ := filepath.Glob(filepath.Join(root, "*.mp4")); len(mp4s) != 0 {
		t.Errorf("a passed run kept %v", mp4s)
	}
	for _, s := range out.Timeline.Segments {
		if s.Video != nil {
			t.Errorf("segment %s is on a discarded recording: %+v", s.SegmentID, s.Video)
		}
	}
	// The run asked for a recording: its files are bound by a manifest.
	if m := readManifest(t, root); m.Kind != "verification" || m.RunID != out.Report.ReportID || !m.Complete {
		t.Errorf("manifest %+v", m)
	}
	noDeviceParts(t, dev)
}

// TestEngineVideoFaultsNeverChangeTheVerdict: a phone that cannot record
// and one whose recorder does not start (a size screenrecord refuses)
// are each reported in its video[].error; the verdict is the one without
// a recording. Off records nothing and writes no manifest.
func TestEngineVideoFaultsNeverChangeTheVerdict(t *testing.T) {
	t.Parallel()
	fake := func(e *Engine) { e.Clock = clock.NewFake(time.UnixMilli(1_700_000_000_000)) }
	screen, _ := simScreen(t, "sim-bad-size")
	a, b := &counterPhone{}, &counterPhone{}
	out := runVideo(t, context.Background(), "counter-success", false, []Ports{{Serial: "no-screen", Runner: a, Agent: a}, {Serial: "sim-bad-size", Runner: b, Agent: b, Screen: screen}}, func(e *Engine) {
		fake(e)
		e.Video, e.VideoOptions = video.ModeAlways, video.Options{Size: "3x3"}
	})
	if out.Report.OutcomeFingerprint != outcomeCounterSuccess {
		t.Fatalf("fingerprint %s, want %s", out.Report.OutcomeFingerprint, outcomeCounterSuccess)
	}
	v := out.Timeline.Videos
	if len(v) != 2 || v[0].Serial != "no-screen" || v[0].Error != "this phone cannot record its screen" || v[0].Kept || v[0].Files == nil ||
		v[1].Serial != "sim-bad-size" || !strings.HasPrefix(v[1].Error, "screenrecord did not start: ") || v[1].Kept || v[1].Mode != video.ModeAlways {
		t.Fatalf("videos %+v", v)
	}
	for _, s := range out.Timeline.Segments {
		if s.Video != nil {
			t.Errorf("segment %s is on a recording that never started", s.SegmentID)
		}
	}
	tb, err := os.ReadFile(out.TimelinePath)
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, "verify-timeline", tb)

	p := &counterPhone{}
	out = runVideo(t, context.Background(), "counter-success", false, []Ports{{Runner: p, Agent: p, Screen: screen}}, func(e *Engine) {
		fake(e)
		e.Video = video.ModeOff
	})
	if out.Report.OutcomeFingerprint != outcomeCounterSuccess || out.Timeline.Videos != nil {
		t.Fatalf("off: fingerprint %s videos %+v", out.Report.OutcomeFingerprint, out.Timeline.Videos)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(out.ReportPath), artifacts.ManifestName)); !os.IsNotExist(err) {
		t.Errorf("off wrote a manifest: %v", err)
	}
}

// TestEngineVideoKeptAfterAnInterrupt: on-failure keeps the recording of
// an interrupted run (the user stopped it; it did not pass), stopped
// within the recorder's budget although the run's context is cancelled,
// and the failed action is a failed step of the timeline.
func TestEngineVideoKeptAfterAnInterrupt(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	screen, dev := simScreen(t, "sim-interrupt")
	phone := &counterPhone{}
	phone.onAct = func(actx context.Context, req ActRequest) error {
		cancel() // SIGINT while the step is in flight
		return interrupted(actx)
	}
	out := runVideo(t, ctx, "counter-outcome-matrix", true, []Ports{{Runner: phone, Agent: phone, Screen: screen}}, func(e *Engine) {
		e.Video, e.VideoOptions = video.ModeOnFailure, video.Options{Size: "180x400"}
	})
	if !out.Report.Interrupted {
		t.Fatal("the report is not marked interrupted")
	}
	v := out.Timeline.Videos
	if len(v) != 1 || !v[0].Kept || v[0].Discarded != "" || len(v[0].Files) != 1 || v[0].Files[0].Path != "video.mp4" {
		t.Fatalf("videos %+v", v)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(out.ReportPath), "video.mp4")); err != nil {
		t.Fatal(err)
	}
	var failed *TimelineStep
	for i := range out.Timeline.Segments {
		for j := range out.Timeline.Segments[i].Steps {
			if s := &out.Timeline.Segments[i].Steps[j]; s.Status == stepFailed {
				failed = s
			}
		}
	}
	if failed == nil || !strings.Contains(failed.Message, "interrupted") || failed.Video == nil || failed.Video.File != "video.mp4" {
		t.Fatalf("the interrupted action on the timeline: %+v", failed)
	}
	noDeviceParts(t, dev)
}

// TestActStep: an action's step is passed only on a succeeded receipt; an
// error, no receipt or another status fails it, with the receipt's
// status and error; the step is placed after the run's start and never
// lasts less than nothing.
func TestActStep(t *testing.T) {
	t.Parallel()
	req := ActRequest{StepID: "explore-1", Action: "click"}
	for _, c := range []struct {
		name   string
		res    *ActResult
		err    error
		status string
		msg    string
	}{
		{"succeeded", &ActResult{Status: "succeeded"}, nil, stepPassed, ""},
		{"error", &ActResult{Status: "succeeded"}, errors.New("session lost"), stepFailed, "session lost"},
		{"no receipt", nil, nil, stepFailed, ""},
		{"refused", &ActResult{Status: "rejected", Response: map[string]any{"error": "node gone"}}, nil, stepFailed, "receipt rejected: node gone"},
		{"failed", &ActResult{Status: "failed", Response: map[string]any{"error": ""}}, nil, stepFailed, "receipt failed"},
	} {
		s := actStep(3, req, c.res, c.err, 1500, 1200, 1000)
		want := TimelineStep{Index: 3, StepID: "explore-1", Action: "click", Status: c.status, OffsetMs: 500, DurationMs: 0, Message: c.msg}
		if s != want {
			t.Errorf("%s: %+v, want %+v", c.name, s, want)
		}
	}
	if s := actStep(0, req, &ActResult{Status: "succeeded"}, nil, 1500, 1750, 1000); s.DurationMs != 250 {
		t.Errorf("duration %d, want 250", s.DurationMs)
	}
}

// TestVideoOfIsTheKeptRecordingOfThePhone: a segment is put on its own
// phone's recording, and only on one that was kept with parts.
func TestVideoOfIsTheKeptRecordingOfThePhone(t *testing.T) {
	t.Parallel()
	part := []artifacts.FileEntry{{Path: "video-b.mp4"}}
	videos := []PhoneVideo{
		{Serial: "a", Result: video.Result{Kept: false, Files: []artifacts.FileEntry{{Path: "video-a.mp4"}}}},
		{Serial: "b", Result: video.Result{Kept: true, Files: part}},
		{Serial: "c", Result: video.Result{Kept: true, Files: []artifacts.FileEntry{}}},
	}
	if v := videoOf(videos, "b"); v == nil || v.Files[0].Path != "video-b.mp4" {
		t.Errorf("b: %+v", v)
	}
	for _, s := range []string{"a", "c", "d", ""} {
		if v := videoOf(videos, s); v != nil {
			t.Errorf("%q: %+v", s, v)
		}
	}
}

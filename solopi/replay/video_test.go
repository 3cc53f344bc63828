package replay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/mp4check"
	"github.com/solopi-dev/solopi/sim/android"
	"github.com/solopi-dev/solopi/solopi/video"
)

func videoRun(name, dir string, mode video.Mode) RunOptions {
	o := fastRun(name, dir)
	o.Video = mode
	o.VideoOptions = video.Options{Size: "270x600"}
	return o
}

// videoOf is the run output's "video" object as the run built it (its
// files typed), once the output is valid against the run schema.
func videoOf(t *testing.T, rep *RunReport) *videoReport {
	t.Helper()
	runObject(t, rep)
	v := rep.Payload.Video
	if v == nil {
		t.Fatalf("no video object in %v", rep.Payload)
	}
	return v
}

// checkVideo checks that the manifest lists name with the digest of a
// playable MP4 in dir and returns its description.
func checkVideo(t *testing.T, dir string, m artifacts.Manifest, name string) mp4check.Info {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	info, err := mp4check.Check(b)
	if err != nil {
		t.Fatalf("%s is not a playable MP4: %v", name, err)
	}
	if info.Frames < 1 || info.Decoded != info.Frames || info.Width != 270 || info.Height != 600 {
		t.Fatalf("%s: %+v", name, info)
	}
	for _, f := range m.Files {
		if f.Path == name {
			if f.Source != "screenrecord" {
				t.Fatalf("manifest entry %+v", f)
			}
			return info // checkArtifacts verified its size and SHA-256
		}
	}
	t.Fatalf("manifest lacks %s", name)
	return info
}

// videoNames are the evidence names of a recording's parts: video.mp4, or
// video-1.mp4 ... when it rolled over (a slow host stretches the
// simulator's scaled device time past the 180 s limit).
func videoNames(t *testing.T, v *videoReport) []string {
	t.Helper()
	n := v.Parts
	if n < 1 {
		t.Fatalf("video %v has no parts", v)
	}
	if n == 1 {
		return []string{"video.mp4"}
	}
	var out []string
	for i := 1; i <= n; i++ {
		out = append(out, fmt.Sprintf("video-%d.mp4", i))
	}
	return out
}

// noDeviceVideo fails if a recording's part is left on the device.
func noDeviceVideo(t *testing.T, p *simPhone) {
	t.Helper()
	out, _, _, err := p.d.Transport().Shell(context.Background(), "ls /data/local/tmp")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "solopi-video-") {
		t.Fatalf("device files left behind: %s", out)
	}
}

func TestRunVideoOnFailureKeepsPlayableMP4(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("broken", failSteps)
	dir := filepath.Join(t.TempDir(), "out")
	rep := RunReplay(context.Background(), p.d, videoRun("broken", dir, video.ModeOnFailure))
	if rep.ErrorCode != fault.CodeReplayFailed {
		t.Fatalf("code %s payload %v", rep.ErrorCode, rep.Payload)
	}
	v := videoOf(t, rep)
	if !v.Kept || v.Mode != "on-failure" || v.Error != "" {
		t.Fatalf("video %v", v)
	}
	names := videoNames(t, v)
	m := checkArtifacts(t, dir, rep.RunID, rep.RequestID, append([]string{ArtifactResult}, names...)...)
	inManifest := map[string]artifacts.FileEntry{}
	for _, f := range m.Files {
		inManifest[f.Path] = f
	}
	files := v.Files
	if len(files) != len(names) {
		t.Fatalf("output files %+v, want %v", files, names)
	}
	for i, name := range names {
		checkVideo(t, dir, m, name)
		if files[i] != inManifest[name] {
			t.Fatalf("output file %+v, manifest %+v", files[i], inManifest[name])
		}
	}
	noDeviceVideo(t, p)
}

func TestRunVideoOnFailureKeepsNoneForAPass(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("smoke", twoSteps)
	dir := filepath.Join(t.TempDir(), "out")
	rep := RunReplay(context.Background(), p.d, videoRun("smoke", dir, video.ModeOnFailure))
	if rep.Err != nil {
		t.Fatalf("err %v", rep.Err)
	}
	v := videoOf(t, rep)
	if v.Kept || v.Discarded != "passed" || len(v.Files) != 0 {
		t.Fatalf("video %v", v)
	}
	for _, f := range readManifest(t, dir).Files {
		if strings.HasPrefix(f.Path, "video") {
			t.Fatalf("a passed run kept %s", f.Path)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "video.mp4")); !os.IsNotExist(err) {
		t.Fatalf("video.mp4 exists: %v", err)
	}
	noDeviceVideo(t, p)
}

func TestRunVideoAlwaysKeepsOneForAPass(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("smoke", twoSteps)
	dir := filepath.Join(t.TempDir(), "out")
	rep := RunReplay(context.Background(), p.d, videoRun("smoke", dir, video.ModeAlways))
	if rep.Err != nil || printed(rep)["success"] != true {
		t.Fatalf("err %v", rep.Err)
	}
	v := videoOf(t, rep)
	if !v.Kept {
		t.Fatalf("video %v", v)
	}
	names := videoNames(t, v)
	m := checkArtifacts(t, dir, rep.RunID, rep.RequestID, names...)
	// The click on +1 changed the screen during the recording.
	frames := 0
	for _, name := range names {
		frames += checkVideo(t, dir, m, name).Frames
	}
	if frames < 2 {
		t.Fatalf("the recording did not see the run: %d frames", frames)
	}
	noDeviceVideo(t, p)
}

func TestRunVideoRollsOverAtTheTimeLimit(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	// 1 s of device time per part, over a case that sleeps 3.5 s.
	p.addCase("long", `[{"stepId":"ai-step-001","operationMethod":{"actionEnum":"SLEEP","operationParam":{"text":"3500"}}},
 {"stepId":"ai-step-002","operationMethod":{"actionEnum":"CLICK","operationParam":{}},"operationNode":{"resourceId":"com.example.counter:id/no_such_button"}}]`)
	dir := filepath.Join(t.TempDir(), "out")
	o := videoRun("long", dir, video.ModeOnFailure)
	o.VideoOptions.TimeLimit = time.Second
	rep := RunReplay(context.Background(), p.d, o)
	v := videoOf(t, rep)
	parts := v.Parts
	// At least one rollover (how many depends on how fast the host restarts
	// the recorder against the phone's clock).
	if rep.ErrorCode != fault.CodeReplayFailed || !v.Kept || parts < 2 || v.Error != "" {
		t.Fatalf("code %s video %v", rep.ErrorCode, v)
	}
	names := videoNames(t, v)
	m := checkArtifacts(t, dir, rep.RunID, rep.RequestID, names...)
	for _, name := range names {
		checkVideo(t, dir, m, name)
	}
	noDeviceVideo(t, p)
}

func TestRunVideoInterruptKeepsWhatWasRecorded(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("slow", hangSteps)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p.onStatus(func(r runAnswer, n int) {
		if r.State == "running" && n == 3 {
			cancel() // SIGINT while waiting for the terminal state
		}
	})
	dir := filepath.Join(t.TempDir(), "out")
	rep := RunReplay(ctx, p.d, videoRun("slow", dir, video.ModeOnFailure))
	if kindOf(rep.Err) != fault.Interrupted || rep.ErrorCode != fault.CodeInterrupted {
		t.Fatalf("kind %v code %s", kindOf(rep.Err), rep.ErrorCode)
	}
	// The replay is cancelled as without video.
	if p.mutations("type=cancel&runId="+rep.RunID) != 1 || p.status().State != "cancelled" {
		t.Fatalf("cancel not sent for our run: %v", p.dev.Mutations())
	}
	v := videoOf(t, rep)
	if !v.Kept {
		t.Fatalf("video %v", v)
	}
	names := videoNames(t, v)
	m := checkArtifacts(t, dir, rep.RunID, rep.RequestID, names...)
	for _, name := range names {
		checkVideo(t, dir, m, name)
	}
	noDeviceVideo(t, p)
}

func TestRunVideoFaultNeverChangesTheVerdict(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("smoke", twoSteps)
	// The device has no screenrecord (an override answers as a missing
	// command would).
	if err := p.dev.Phone.OverrideCommand("screenrecord", nil, android.CommandOutput{Stderr: "/system/bin/sh: screenrecord: inaccessible or not found\n", Exit: 127}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	rep := RunReplay(context.Background(), p.d, videoRun("smoke", dir, video.ModeAlways))
	if rep.Err != nil || printed(rep)["success"] != true {
		t.Fatalf("a recording fault changed the verdict: %v", rep.Err)
	}
	v := videoOf(t, rep)
	if !strings.Contains(v.Error, "screenrecord") || v.Kept {
		t.Fatalf("video %v", v)
	}
}

func TestRunVideoNeedsArtifactsDir(t *testing.T) {
	t.Parallel()
	for _, o := range []RunOptions{{CaseName: "x", Video: video.ModeAlways}, {CaseName: "x", Video: "sometimes", ArtifactsDir: t.TempDir()}} {
		if err := o.Validate(); fault.CodeOf(err) != fault.CodeInvalidOption {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

func TestRunVideoTimeoutKeepsTheRecording(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("slow", hangSteps)
	dir := filepath.Join(t.TempDir(), "out")
	o := videoRun("slow", dir, video.ModeOnFailure)
	o.RunTimeout = time.Second
	rep := RunReplay(context.Background(), p.d, o)
	if rep.ErrorCode != fault.CodeRunTimeout || p.mutations("type=cancel&runId="+rep.RunID) != 1 {
		t.Fatalf("code %s mutations %v", rep.ErrorCode, p.dev.Mutations())
	}
	v := videoOf(t, rep)
	if !v.Kept || v.Error != "" {
		t.Fatalf("video %v", v)
	}
	names := videoNames(t, v)
	m := checkArtifacts(t, dir, rep.RunID, rep.RequestID, names...)
	for _, name := range names {
		checkVideo(t, dir, m, name)
	}
	noDeviceVideo(t, p)
}

package plannercmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/internal/mp4check"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
)

// TestAgentRunVideoAlways: agent-run --video always keeps the recording of
// a completed run beside the trajectory, a playable MP4 with the digest the
// output gives, and report.html lists the steps with their times, each a
// link that plays the recording from that step. A second run into the
// same directory refuses to leave the first's recording behind silently.
func TestAgentRunVideoAlways(t *testing.T) {
	t.Parallel()
	d := cmdtest.CounterPhone(t, sim.Options{TimeScale: 10})
	srv := startFakeModel(t, fakemodel.Options{Coords: fakemodel.CoordsImagePixels})
	dir := t.TempDir()
	traj := filepath.Join(dir, "trajectory.json")
	app := plannerApp{env: fakeModelEnv(srv), open: func(ctx context.Context) (device.Transport, error) { return d, nil }}
	out, errOut, code := app.run(t, "--startup-timeout", "30", "agent-run", "--task", "increase the counter to 2", "--device-mode", agentloop.ModeSoloPi,
		"--trajectory", traj, "--calibration-cache", filepath.Join(dir, "cache"), "--max-steps", "10", "--max-duration", "120", "--settle", "0.2",
		"--video", "always")
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	validatePlannerSchema(t, "agent-run", out)
	var r agentRunResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	if r.Video == nil || !r.Video.Kept || len(r.Video.Files) != r.Video.Parts || r.Video.Error != "" || r.Video.StartedAt == nil {
		t.Fatalf("video %s", out)
	}
	f := r.Video.Files[0]
	b, err := os.ReadFile(filepath.Join(dir, f.Path))
	if err != nil {
		t.Fatal(err)
	}
	info, err := mp4check.Check(b)
	if err != nil || info.Frames < 1 {
		t.Fatalf("%s is not a playable MP4: %+v %v", f.Path, info, err)
	}
	if sum := sha256.Sum256(b); f.SHA256 != hex.EncodeToString(sum[:]) || f.Size != int64(len(b)) {
		t.Fatalf("the output's digest %s does not match the file's", f.SHA256)
	}
	t.Logf("recording: %d bytes, %d frames, %dx%d, %d ms", len(b), info.Frames, info.Width, info.Height, r.Video.DurationMs)
	// The step timeline: every step timed, inside the run, each a moment
	// in the recording.
	if len(r.StepTimeline) < 2 {
		t.Fatalf("step timeline %+v", r.StepTimeline)
	}
	total := int64(r.Duration * 1000)
	parts := map[string]bool{}
	for _, p := range r.Video.Files {
		parts[p.Path] = true
	}
	for i, st := range r.StepTimeline {
		if st.Step != i+1 || st.Video == nil || !parts[st.Video.File] || st.OffsetMs+st.DurationMs > total+1000 || (i > 0 && st.OffsetMs < r.StepTimeline[i-1].OffsetMs) {
			t.Errorf("step %+v (run %d ms)", st, total)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, agentloop.VideoFile)); err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<video controls preload="metadata" src="` + f.Path + `"`, `<section id="steps">`, `class="seek" href="` + f.Path + `#t=`, `class="dur"`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	// The next run names the same directory without --overwrite: the
	// first run's recording is not silently left for its report.
	out, _, code = app.run(t, "agent-run", "--task", "increase the counter to 3", "--trajectory", filepath.Join(dir, "second.json"), "--video", "on-failure")
	if code != outcome.ExitUsage || !strings.Contains(string(out), "output_exists") {
		t.Fatalf("exit %d %s", code, out)
	}
	// In adb mode the recorder runs over the plain transport; a completed
	// task with on-failure keeps nothing.
	adbDir := t.TempDir()
	out, errOut, code = app.run(t, "--startup-timeout", "30", "agent-run", "--task", "increase the counter to 4", "--device-mode", agentloop.ModeADB,
		"--trajectory", filepath.Join(adbDir, "t.json"), "--calibration-cache", filepath.Join(dir, "cache"), "--max-steps", "10", "--max-duration", "120",
		"--settle", "0.2", "--video", "on-failure")
	if code != 0 {
		t.Fatalf("adb mode: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	validatePlannerSchema(t, "agent-run", out)
	var ra agentRunResult
	if err := json.Unmarshal(out, &ra); err != nil {
		t.Fatal(err)
	}
	if ra.Video == nil || ra.Video.Kept || ra.Video.Discarded != "passed" || ra.Video.Error != "" || ra.Video.Parts != 1 {
		t.Fatalf("adb mode video %s", out)
	}
	if mp4s, _ := filepath.Glob(filepath.Join(adbDir, "*.mp4")); len(mp4s) > 0 {
		t.Errorf("a completed run kept %v", mp4s)
	}
	// --video needs the trajectory's directory.
	out, _, code = app.run(t, "agent-run", "--task", "x", "--video", "always")
	if code != outcome.ExitUsage || !strings.Contains(string(out), "--trajectory") {
		t.Fatalf("exit %d %s", code, out)
	}
}

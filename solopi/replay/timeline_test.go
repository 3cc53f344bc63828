package replay

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/video"
)

// readTimeline reads steps.json of an evidence directory.
func readTimeline(t *testing.T, dir string) Timeline {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ArtifactSteps))
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, "run-steps", b)
	var tl Timeline
	if err := json.Unmarshal(b, &tl); err != nil {
		t.Fatal(err)
	}
	return tl
}

// The counter case's timeline lists every step, in order, passed, and its
// durations add up to the device's own run (result startTime to endTime)
// within the polling interval; it is in the output, in steps.json (listed
// by the manifest) and in the JUnit's <system-out>. The phone runs at ten
// times real time here and the interval is the default (1 s): the host
// milliseconds around the steps (the app launch, the screenshot writes),
// magnified tenfold, stay inside it on a loaded machine too.
func TestRunTimelineOfTheCounterCase(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t, func(o *sim.Options) { o.TimeScale = 10 })
	p.addCase("counter", twoSteps)
	dir := filepath.Join(t.TempDir(), "out")
	o := fastRun("counter", dir)
	o.PollInterval = time.Second
	rep := RunReplay(context.Background(), p.d, o)
	if rep.Err != nil {
		t.Fatalf("run: %v", rep.Err)
	}
	runObject(t, rep)
	checkArtifacts(t, dir, rep.RunID, rep.RequestID, ArtifactResult, ArtifactSteps)
	tl := readTimeline(t, dir)
	wantIDs := []string{"ai-step-001", "ai-step-002", "ai-step-003"}
	wantActs := []string{"SLEEP", "CLICK", "SCREENSHOT"}
	if len(tl.Steps) != 3 || len(rep.Steps) != 3 {
		t.Fatalf("steps %+v (output %+v)", tl.Steps, rep.Steps)
	}
	var sum int64
	for i, s := range tl.Steps {
		if s != rep.Steps[i] {
			t.Fatalf("steps.json %+v differs from the output %+v", s, rep.Steps[i])
		}
		if s.Index != i || s.StepID != wantIDs[i] || s.Action != wantActs[i] || s.Status != StepPassed || s.End == "" || s.DurationMs < 0 {
			t.Fatalf("step %d: %+v", i, s)
		}
		start, err1 := time.Parse(time.RFC3339Nano, s.Start)
		end, err2 := time.Parse(time.RFC3339Nano, s.End)
		if err1 != nil || err2 != nil || end.Sub(start).Milliseconds() != s.DurationMs {
			t.Fatalf("step %d times %q %q (%d ms)", i, s.Start, s.End, s.DurationMs)
		}
		if i > 0 && s.Start != tl.Steps[i-1].End {
			t.Fatalf("step %d starts at %s, the one before ended at %s", i, s.Start, tl.Steps[i-1].End)
		}
		sum += s.DurationMs
	}
	if tl.Steps[0].DurationMs < 100 {
		t.Fatalf("the SLEEP 100 step took %d ms", tl.Steps[0].DurationMs)
	}
	r := rep.Status.Results[0]
	run := r.EndTime - r.StartTime
	if d := run - sum; d < -o.PollInterval.Milliseconds() || d > o.PollInterval.Milliseconds() {
		t.Fatalf("step durations add up to %d ms, the run took %d ms", sum, run)
	}
	if tl.VideoLeadMs != nil || !strings.HasPrefix(tl.Source, "device/") || !strings.HasSuffix(tl.Source, "running.log") {
		t.Fatalf("timeline %+v", tl)
	}
	out := RunJUnitCase(rep, "counter", 0).SystemOut
	for _, line := range []string{"step 0 SLEEP ai-step-001: passed ", "step 1 CLICK ai-step-002: passed ", "step 2 SCREENSHOT ai-step-003: passed "} {
		if !strings.Contains(out, line) {
			t.Fatalf("junit system-out lacks %q:\n%s", line, out)
		}
	}
}

// A run the fail-replays knob fails marks its first step failed with the
// device's message and its failure screenshot; with a video, the timeline
// says where the replay begins in it.
func TestRunTimelineMarksTheFailingStep(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	p.addCase("counter", twoSteps)
	if err := p.dev.App.FailReplays("counter", 1); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	rep := RunReplay(context.Background(), p.d, videoRun("counter", dir, video.ModeOnFailure))
	if rep.ErrorCode != fault.CodeReplayFailed {
		t.Fatalf("code %s", rep.ErrorCode)
	}
	tl := readTimeline(t, dir)
	if len(tl.Steps) != 1 {
		t.Fatalf("steps %+v", tl.Steps)
	}
	s := tl.Steps[0]
	if s.Status != StepFailed || s.Message != "injected failure" || s.StepID != "ai-step-001" || FailedStep(rep.Steps) == nil {
		t.Fatalf("failed step %+v", s)
	}
	if !strings.HasPrefix(s.Screenshot, "device/") || !strings.HasSuffix(s.Screenshot, ".png") {
		t.Fatalf("failure screenshot %q", s.Screenshot)
	}
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(s.Screenshot))); err != nil {
		t.Fatal(err)
	}
	if tl.VideoLeadMs == nil || *tl.VideoLeadMs < 0 {
		t.Fatalf("video lead %v", tl.VideoLeadMs)
	}
	tc := RunJUnitCase(rep, "counter", 2)
	if !strings.Contains(tc.SystemOut, "step 0 SLEEP ai-step-001: failed ") || !strings.Contains(tc.SystemOut, "s (injected failure)") {
		t.Fatalf("junit system-out:\n%s", tc.SystemOut)
	}
}

// A log the device cut short leaves the running step unfinished; a log
// without the replay's first line, or a result without startTime, gives
// no timeline.
func TestParseTimelineEdges(t *testing.T) {
	t.Parallel()
	log := "2026-01-02 03:04:05.000 I/Replay: start replay of case c (run r) on com.example\n" +
		"2026-01-02 03:04:05.250 I/Replay: step 0 (s1) SLEEP\n" +
		"garbage line\n" +
		"2026-01-02 03:04:06.000 I/Replay: step 1 (s2) CLICK\n"
	start := time.Date(2026, 1, 2, 1, 4, 5, 0, time.UTC).UnixMilli() // the device is two hours ahead
	steps := parseTimeline(log, start)
	if len(steps) != 2 || steps[0].Status != StepPassed || steps[0].DurationMs != 750 || steps[0].OffsetMs != 250 ||
		steps[0].Start != "2026-01-02T01:04:05.25Z" || steps[1].Status != StepUnfinished || steps[1].End != "" {
		t.Fatalf("steps %+v", steps)
	}
	if parseTimeline(log, 0) != nil || parseTimeline("2026-01-02 03:04:05.250 I/Replay: step 0 (s1) SLEEP\n", start) != nil {
		t.Fatal("a timeline without its anchor")
	}
	launch := "2026-01-02 03:04:05.000 I/Replay: start replay of case c (run r) on com.example\n" +
		"2026-01-02 03:04:05.100 I/Replay: replay failed at step 0: Unable to launch target application: gone\n"
	steps = parseTimeline(launch, start)
	if len(steps) != 1 || steps[0].Status != StepFailed || steps[0].DurationMs != 0 || !strings.HasPrefix(steps[0].Message, "Unable to launch") {
		t.Fatalf("launch failure %+v", steps)
	}
}

package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/internal/browsertest"
	"github.com/solopi-dev/solopi/sim/soloapp/media"
)

// runTimelineSteps is the steps.json `run` writes for testdata/run-failed:
// its device/001-running.log read as solopi/replay reads it (anchored on
// the result's startTime 1796126138066), with a recording that began
// 2.5 s before the replay.
const runTimelineSteps = `{
  "source": "device/001-running.log",
  "replayStart": "2026-12-01T11:55:38.066Z",
  "videoLeadMs": 2500,
  "steps": [
    {"index": 0, "stepId": "reset", "action": "CLICK", "status": "passed", "start": "2026-12-01T11:55:38.067Z", "end": "2026-12-01T11:55:38.069Z", "offsetMs": 1, "durationMs": 2},
    {"index": 1, "stepId": "increment-1", "action": "CLICK", "status": "passed", "start": "2026-12-01T11:55:38.069Z", "end": "2026-12-01T11:55:38.07Z", "offsetMs": 3, "durationMs": 1},
    {"index": 2, "stepId": "increment-2", "action": "CLICK", "status": "passed", "start": "2026-12-01T11:55:38.07Z", "end": "2026-12-01T11:55:38.071Z", "offsetMs": 4, "durationMs": 1},
    {"index": 3, "stepId": "increment-3", "action": "CLICK", "status": "passed", "start": "2026-12-01T11:55:38.071Z", "end": "2026-12-01T11:55:38.071Z", "offsetMs": 5, "durationMs": 0},
    {"index": 4, "stepId": "before-assert", "action": "SCREENSHOT", "status": "passed", "start": "2026-12-01T11:55:38.071Z", "end": "2026-12-01T11:55:46.401Z", "offsetMs": 5, "durationMs": 8330},
    {"index": 5, "stepId": "expect-four", "action": "ASSERT", "status": "failed", "start": "2026-12-01T11:55:46.401Z", "end": "2026-12-01T11:55:46.406Z", "offsetMs": 8335, "durationMs": 5,
     "message": "Assert failed: text \"3\" is not \"4\"", "screenshot": "device/003-failure-step-5.png"}
  ]
}
`

// timedRun is testdata/run-failed with its step timeline and, when video,
// a playable recording (the simulator's MP4 writer).
func timedRun(t *testing.T, video bool) string {
	t.Helper()
	dir := copyTestdata(t, "run-failed")
	if err := os.WriteFile(filepath.Join(dir, runStepsFile), []byte(runTimelineSteps), 0o644); err != nil {
		t.Fatal(err)
	}
	if video {
		mp4, err := media.BuildMP4(270, 600, 11_000)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, runVideo), mp4, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestRunReportShowsTheStepTimeline(t *testing.T) {
	t.Parallel()
	b, _, err := render(timedRun(t, true), Options{})
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{
		`media-src 'self' file:`,
		`<video controls preload="metadata" src="video.mp4">`,
		// every step is a link to its moment: lead 2.5 s + offset
		`<a class="seek" href="video.mp4#t=2.5">`,
		`<a class="seek" href="video.mp4#t=10.8">`,
		`<span class="dur">8.3 s</span>`,
		// the failed step carries its message and screenshot
		`<a class="shot" href="device/003-failure-step-5.png"><img src="device/003-failure-step-5.png"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the run report lacks %s", want)
		}
	}
	if n := strings.Count(html, `class="seek"`); n != 6 {
		t.Errorf("%d seek links, want one per step (6)", n)
	}
	// The case's step after the failed one never ran: no time.
	if !strings.Contains(html, `<li class="not_reached" data-index="6">`) || strings.Count(html, `class="dur"`) != 6 {
		t.Error("the step after the failure is not not_reached without a time")
	}
	// Without a recording: durations, no video, no media-src.
	b, _, err = render(timedRun(t, false), Options{})
	if err != nil {
		t.Fatal(err)
	}
	html = string(b)
	if strings.Contains(html, "media-src") || strings.Contains(html, "<video") || strings.Contains(html, `class="seek"`) || !strings.Contains(html, `<span class="dur">8.3 s</span>`) {
		t.Errorf("a run without video:\n%s", html)
	}
}

// The timeline renders in Chromium without network: the failing step is
// marked with its duration and screenshot, every step links into the
// recording, and the recording and the screenshot are the files beside
// the report.
func TestRunTimelineInChromium(t *testing.T) {
	t.Parallel()
	browser := browsertest.Start(t)
	dir := timedRun(t, true)
	res, err := Write(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := browsertest.Open(t, browser, "file://"+filepath.ToSlash(res.Path), 1280, 900)
	text := browsertest.Eval[string](t, p, `document.querySelector('#failing-step').innerText`)
	for _, want := range []string{"expect-four", "is not", "+8.3 s", "5 ms"} {
		if !strings.Contains(text, want) {
			t.Errorf("the failing step shows %q, want %q", text, want)
		}
	}
	if n := browsertest.Eval[int](t, p, `document.querySelectorAll('ol.steps a.seek').length`); n != 6 {
		t.Errorf("%d seek links", n)
	}
	if ok := browsertest.Eval[bool](t, p, `(() => { const i = document.querySelector('#failing-step img'); return !!i && i.complete && i.naturalWidth > 0 })()`); !ok {
		t.Error("the failed step's screenshot did not load")
	}
	if n := browsertest.Eval[int](t, p, `document.querySelectorAll('video').length`); n != 1 {
		t.Errorf("%d video elements", n)
	}
	if n := browsertest.Eval[int](t, p, `document.scripts.length`); n != 0 {
		t.Errorf("%d script elements", n)
	}
	// The player's own control icons are data: URIs Chromium builds in;
	// anything else must be a file of the evidence directory.
	var out []string
	for _, u := range p.RequestsOutside(dir) {
		if !strings.HasPrefix(u, "data:") {
			out = append(out, u)
		}
	}
	if len(out) > 0 {
		t.Errorf("requests outside the evidence directory: %v", out)
	}
	browsertest.Screenshot(t, p, "report-run-timeline")
}

package verifycmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/internal/browsertest"
	"github.com/solopi-dev/solopi/internal/mp4check"
	"github.com/solopi-dev/solopi/internal/testwait"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/verify/execution"
)

// runTimeline is what the tests read of timeline.json and the output.
type runTimeline struct {
	Segments []execution.SegmentTimeline `json:"segments"`
	Video    []execution.PhoneVideo      `json:"video"`
}

func readTimeline(t *testing.T, art string) execution.Timeline {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(art, execution.TimelineFile))
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, "verify-timeline", b)
	var tl execution.Timeline
	if err := json.Unmarshal(b, &tl); err != nil {
		t.Fatal(err)
	}
	return tl
}

// TestVerifyRunVideoOnFailure: the outcome matrix fails, so --video
// on-failure keeps the phone's recording: a playable MP4 whose digest the
// manifest and the output give; the timeline lists every segment that ran
// with its steps (the replays' from the device's log, the explore step's
// Agent actions), their durations and their moments in the recording; the
// JUnit file and report.html carry them.
func TestVerifyRunVideoOnFailure(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	dir := t.TempDir()
	art, junit := filepath.Join(dir, "run"), filepath.Join(dir, "junit.xml")
	res, _ := r.verifyRun("--plan", cmdtest.FixturePlan(t, "counter-outcome-matrix"), "--agent-decisions", fixture("counter-agent-decisions"),
		"--artifacts", art, "--junit", junit, "--video", "on-failure")
	if res.Code != 2 {
		t.Fatalf("exit %d: %s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	var out runTimeline
	if err := json.Unmarshal(res.Stdout, &out); err != nil {
		t.Fatal(err)
	}
	// The simulator's clock runs 20 times faster: a loaded host can make
	// the run outlast screenrecord's 180 s time limit, and the recording
	// rolls over to a second part.
	if len(out.Video) != 1 || !out.Video[0].Kept || len(out.Video[0].Files) != out.Video[0].Parts || out.Video[0].Error != "" {
		t.Fatalf("video %+v", out.Video)
	}
	manifest := map[string]artifacts.FileEntry{}
	for _, e := range cmdtest.Manifest(t, art).Files {
		manifest[e.Path] = e
	}
	for _, f := range out.Video[0].Files {
		b, err := os.ReadFile(filepath.Join(art, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		info, err := mp4check.Check(b)
		if err != nil || info.Frames < 1 {
			t.Fatalf("%s is not a playable MP4: %+v %v", f.Path, info, err)
		}
		sum := sha256.Sum256(b)
		if e := manifest[f.Path]; e.SHA256 != hex.EncodeToString(sum[:]) || e.SHA256 != f.SHA256 || e.Size != int64(len(b)) {
			t.Fatalf("the manifest does not bind %s to its digest: %+v", f.Path, e)
		}
		t.Logf("recording %s: %d bytes, %d frames, %dx%d", f.Path, len(b), info.Frames, info.Width, info.Height)
	}
	t.Logf("recorded for %d ms", out.Video[0].DurationMs)
	f := out.Video[0].Files[0]
	parts := map[string]bool{}
	for _, p := range out.Video[0].Files {
		parts[p.Path] = true
	}

	tl := readTimeline(t, art)
	if len(tl.Segments) != len(out.Segments) || len(tl.Segments) == 0 {
		t.Fatalf("timeline %d segments, output %d", len(tl.Segments), len(out.Segments))
	}
	replaySteps, agentSteps, failed, timed := 0, 0, 0, 0
	for _, s := range tl.Segments {
		if s.DurationMs > 0 {
			timed++
		}
		// A segment with nothing to do on the phone (an uncovered
		// checkpoint's) may take less than a millisecond.
		if s.DurationMs < 0 || s.Video == nil || !parts[s.Video.File] {
			t.Errorf("segment %s: duration %d, video %+v", s.SegmentID, s.DurationMs, s.Video)
		}
		if s.OffsetMs+s.DurationMs > tl.FinishedAt-tl.StartedAt {
			t.Errorf("segment %s ends after the run", s.SegmentID)
		}
		for _, st := range s.Steps {
			if st.OffsetMs < s.OffsetMs || st.OffsetMs+st.DurationMs > s.OffsetMs+s.DurationMs || st.Video == nil {
				t.Errorf("segment %s step %d lies outside its segment or has no moment: %+v", s.SegmentID, st.Index, st)
			}
			if st.Status == "failed" {
				failed++
				if st.Message == "" {
					t.Errorf("failed step %+v has no message", st)
				}
			}
			if s.Route == "dynamic" {
				agentSteps++
			} else {
				replaySteps++
			}
		}
	}
	if replaySteps == 0 || agentSteps == 0 || failed == 0 || timed == 0 {
		t.Fatalf("%d replay steps, %d Agent steps, %d failed", replaySteps, agentSteps, failed)
	}
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(x), "<system-out>") || !strings.Contains(string(x), "  step 0 ") || !strings.Contains(string(x), "[video video") {
		t.Errorf("the JUnit file has no step lines:\n%s", x)
	}
	html, err := os.ReadFile(filepath.Join(art, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<video controls preload="metadata" src="` + f.Path + `"`, `class="seek" href="video`, "Agent actions",
		`<li class="failed"`, "media-src 'self'"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	checkReportInChromium(t, art, f.Path)
}

// checkReportInChromium opens a recorded run's report.html: the
// player fetches the recording (the page's Content-Security-Policy lets
// it), every step and segment time is a seek link,
// the failed steps show their messages, and nothing outside the evidence
// directory is requested.
func checkReportInChromium(t *testing.T, art, first string) {
	t.Helper()
	browser := browsertest.Start(t)
	p := browsertest.Open(t, browser, "file://"+filepath.ToSlash(filepath.Join(art, "report.html")), 1280, 900)
	ctx, cancel := context.WithTimeout(p.Ctx, 60*time.Second)
	defer cancel()
	// The simulator's screenrecord writes Motion-JPEG in MP4 (playable by
	// common players, not by Chromium, which says so with error 4); a
	// phone's is H.264. What the page must do is let the player fetch the
	// file: the load is started again with a listener for what the
	// Content-Security-Policy refuses, and none may be refused.
	browsertest.Eval[bool](t, p, `(() => { window.refused = []; document.addEventListener("securitypolicyviolation", e => window.refused.push(e.violatedDirective + " " + e.blockedURI));
		document.querySelectorAll("video").forEach(v => v.load()); return true })()`)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const v = document.querySelector("video"); return !!v && (v.readyState >= 1 || !!v.error) })()`)); err != nil {
		t.Fatalf("the player never settled: %v", err)
	}
	if refused := browsertest.Eval[[]string](t, p, `window.refused`); len(refused) > 0 {
		t.Errorf("the page's policy refused %v", refused)
	}
	want := "file://" + filepath.ToSlash(filepath.Join(art, first))
	if !slices.Contains(p.Requests(), want) {
		t.Errorf("the page never fetched the recording %s: %v", want, p.Requests())
	}
	if n := browsertest.Eval[int](t, p, `document.querySelectorAll('ol.steps a.seek').length`); n < 3 {
		t.Errorf("%d step seek links", n)
	}
	if n := browsertest.Eval[int](t, p, `document.querySelectorAll('.segment a.seek').length`); n < 3 {
		t.Errorf("%d seek links in the segments", n)
	}
	if n := browsertest.Eval[int](t, p, `[...document.querySelectorAll('ol.steps li.failed .msg')].filter(e => e.textContent.trim() !== "").length`); n < 1 {
		t.Error("no failed step shows its message")
	}
	var out []string
	for _, u := range p.RequestsOutside(art) {
		if !strings.HasPrefix(u, "data:") {
			out = append(out, u)
		}
	}
	if len(out) > 0 {
		t.Errorf("requests outside the evidence directory: %v", out)
	}
	browsertest.Screenshot(t, p, "verify-report-video")
}

// TestVerifyRunVideoPassedKeepsNone: a passing run with on-failure keeps
// no recording (the output says why) and the manifest lists no MP4; a run
// without --video is as before: no video in the output, no manifest, but
// its timeline.
func TestVerifyRunVideoPassedKeepsNone(t *testing.T) {
	t.Parallel()
	r := newRig(t, sim.Options{})
	dir := t.TempDir()
	plan := cmdtest.FixturePlan(t, "counter-success")
	art := filepath.Join(dir, "run")
	res, _ := r.verifyRun("--plan", plan, "--artifacts", art, "--video", "on-failure")
	if res.Code != 0 {
		t.Fatalf("exit %d: %s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	var out runTimeline
	if err := json.Unmarshal(res.Stdout, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Video) != 1 || out.Video[0].Kept || out.Video[0].Discarded != "passed" || len(out.Video[0].Files) != 0 {
		t.Fatalf("video %+v", out.Video)
	}
	for _, e := range cmdtest.Manifest(t, art).Files {
		if strings.HasSuffix(e.Path, ".mp4") {
			t.Errorf("the manifest lists %s", e.Path)
		}
	}
	mp4s, _ := filepath.Glob(filepath.Join(art, "*.mp4"))
	if len(mp4s) > 0 {
		t.Errorf("a passed run kept %v", mp4s)
	}
	steps := 0
	for _, s := range readTimeline(t, art).Segments {
		steps += len(s.Steps)
		if s.Video != nil {
			t.Errorf("segment %s names a moment of a recording that was not kept", s.SegmentID)
		}
	}
	if steps == 0 {
		t.Error("the passing run's timeline has no steps")
	}

	plain := filepath.Join(dir, "plain")
	res, m := r.verifyRun("--plan", plan, "--artifacts", plain)
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stdout)
	}
	if _, ok := m["video"]; ok {
		t.Errorf("a run without --video reports a video: %s", res.Stdout)
	}
	if _, err := os.Stat(filepath.Join(plain, artifacts.ManifestName)); err == nil {
		t.Error("a run without --video wrote a manifest")
	}
	if len(readTimeline(t, plain).Segments) == 0 {
		t.Error("no timeline without --video")
	}
}

// TestVerifyRunVideoInterrupted: an interrupt during an explore step ends
// the run as without --video (exit 130, the session cancelled, the report
// marked interrupted) and keeps what was recorded, a playable MP4, with
// the device's file deleted.
func TestVerifyRunVideoInterrupted(t *testing.T) {
	t.Parallel()
	r0 := newRig(t, sim.Options{})
	var once sync.Once
	asked := make(chan struct{})
	cloud := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		once.Do(func() { close(asked) })
		<-r.Context().Done() // the decision never comes
	}))
	t.Cleanup(cloud.Close)
	art := filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelled time.Time
	go func() {
		testwait.Until(t, 60*time.Second, "the decision to be asked", func() bool {
			select {
			case <-asked:
				return true
			default:
				return false
			}
		})
		cancelled = time.Now()
		cancel()
	}()
	res := r0.RunCtx(ctx, "verify-run", "--plan", cmdtest.FixturePlan(t, "counter-outcome-matrix"), "--artifacts", art,
		"--decision-provider", "cloud", "--cloud-endpoint", cloud.URL, "--video", "on-failure")
	t.Logf("from the interrupt to the exit: %s", time.Since(cancelled).Round(time.Millisecond))
	schematest.Validate(t, "verify-run", res.Stdout)
	if res.Code != 130 {
		t.Fatalf("exit %d: %s", res.Code, res.Stdout)
	}
	var out runTimeline
	if err := json.Unmarshal(res.Stdout, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Video) != 1 || !out.Video[0].Kept || len(out.Video[0].Files) != 1 {
		t.Fatalf("video %+v", out.Video)
	}
	b, err := os.ReadFile(filepath.Join(art, out.Video[0].Files[0].Path))
	if err != nil {
		t.Fatal(err)
	}
	if info, err := mp4check.Check(b); err != nil || info.Frames < 1 {
		t.Fatalf("the interrupted run's recording is not playable: %+v %v", info, err)
	}
	stdout, _, _, err := r0.Dev.Shell(context.Background(), "ls /data/local/tmp")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(stdout), "solopi-video-") {
		t.Errorf("the recording was left on the device: %s", stdout)
	}
}

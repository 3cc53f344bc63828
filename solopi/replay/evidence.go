package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
	"github.com/solopi-dev/solopi/solopi/device"
)

// Evidence file names inside a run's artifacts directory.
const (
	ArtifactResult     = "result.json"
	artifactCase       = "case.json"
	ArtifactScreenshot = "screen.png"
	artifactLogcat     = "logcat.txt"
	artifactDeviceDir  = "device"
	logcatMaxBytes     = 8 << 20
	// deviceTextMaxBytes bounds a pulled text file, which is redacted in
	// memory before it is written.
	deviceTextMaxBytes = 64 << 20
	// evidenceBudget bounds the whole collection; each item also has its
	// own deadline (RunOptions.EvidenceTimeout), so one stalled command
	// cannot use up the others' time.
	evidenceBudget = 30 * time.Second
	// interruptedEvidenceBudget is the collection's budget after an
	// interrupt: the run was cancelled and the user waits for the command
	// to end.
	interruptedEvidenceBudget = time.Second
)

// Causes of an evidence item that did not finish.
var (
	errEvidenceDeadline = errors.New("no answer within the evidence deadline (--evidence-timeout)")
	errEvidenceBudget   = errors.New("the evidence budget ran out")
)

// RunArtifacts is the evidence collected for one run.
type RunArtifacts struct {
	Dir        string
	Result     string
	Case       string
	Screenshot string
	Logcat     string
	Manifest   string
	// Steps is steps.json, the step timeline read from the device's log
	// (timeline.go); empty when the log gave none.
	Steps       string
	DeviceFiles []artifacts.FileEntry
	Skipped     []artifacts.SkippedFile
	Errors      []string
	Complete    bool
	// Replaced is the earlier evidence set this one replaced (only in
	// artifacts.EvidenceReplace mode).
	Replaced *artifacts.Replaced
}

// artifactsReport is the run's "artifacts" object: where the evidence is
// (absolute paths) and what is missing. Report and ReportError are set by
// the command that renders report.html.
type artifactsReport struct {
	Case        string                  `json:"case,omitempty"`
	Complete    bool                    `json:"complete"`
	DeviceFiles []artifacts.FileEntry   `json:"deviceFiles"`
	Dir         string                  `json:"dir"`
	Errors      []string                `json:"errors,omitempty"`
	Logcat      string                  `json:"logcat,omitempty"`
	Manifest    string                  `json:"manifest,omitempty"`
	Replaced    *artifacts.Replaced     `json:"replaced,omitempty"`
	Report      string                  `json:"report,omitempty"`
	ReportError string                  `json:"reportError,omitempty"`
	Result      string                  `json:"result,omitempty"`
	Screenshot  string                  `json:"screenshot,omitempty"`
	Skipped     []artifacts.SkippedFile `json:"skipped,omitempty"`
	Steps       string                  `json:"steps,omitempty"`
}

// report renders the evidence for the command output, redacted: an error
// or a skipped file's reason may quote the device.
func (a *RunArtifacts) report(red *redact.Redactor) *artifactsReport {
	r := &artifactsReport{Dir: red.Text(a.Dir), Complete: a.Complete, Case: red.Text(a.Case), Result: red.Text(a.Result),
		Screenshot: red.Text(a.Screenshot), Logcat: red.Text(a.Logcat), Manifest: red.Text(a.Manifest), Steps: red.Text(a.Steps),
		DeviceFiles: a.DeviceFiles, Errors: redactTexts(red, a.Errors), Replaced: a.Replaced}
	if r.DeviceFiles == nil {
		r.DeviceFiles = []artifacts.FileEntry{}
	}
	for _, sk := range a.Skipped {
		sk.Reason = red.Text(sk.Reason)
		r.Skipped = append(r.Skipped, sk)
	}
	return r
}

// Attachments lists the absolute paths of the run's images, for JUnit.
func (a *RunArtifacts) Attachments() []string {
	if a == nil {
		return nil
	}
	var out []string
	if a.Screenshot != "" {
		out = append(out, a.Screenshot)
	}
	for _, f := range a.DeviceFiles {
		if strings.HasSuffix(strings.ToLower(f.Path), ".png") || strings.HasSuffix(strings.ToLower(f.Path), ".jpg") {
			out = append(out, filepath.Join(a.Dir, filepath.FromSlash(f.Path)))
		}
	}
	return out
}

// collect writes the evidence of our run: what the host knows at once
// (the run's last status, the case as replayed), then what the device must
// give (device files, screenshot, logcat, the device's description), those
// at the same time and each within its own deadline. It runs after a
// timeout or an interrupt too; an interrupt that arrives while it runs
// ends it at once. Failures are recorded in the manifest and the output,
// never turned into another verdict: the run's exit code says what
// happened to the run. verdict is the run's failure, nil when it passed;
// the result is the run's once its performance budgets are judged.
func (rs *runState) collect(ctx context.Context, verdict *fault.Error) (*RunArtifacts, *fault.Error) {
	clk := rs.d.Clock()
	base, budget := ctx, evidenceBudget
	if ctx.Err() != nil {
		base, budget = context.WithoutCancel(ctx), interruptedEvidenceBudget
	}
	cctx, cancel := clock.WithTimeout(base, clk, budget, errEvidenceBudget)
	defer cancel()
	a := &RunArtifacts{}
	dir, err := artifacts.Open(rs.o.ArtifactsDir, artifacts.EvidenceModeOf(rs.o.Overwrite),
		ArtifactResult, ArtifactSteps, artifactCase, ArtifactScreenshot, artifactLogcat, artifacts.ManifestName, artifactDeviceDir, artifactPerfDir)
	if err != nil {
		a.Errors = append(a.Errors, errText(err))
		return a, rs.perfVerdict(verdict)
	}
	a.Dir = dir.Root()
	c := &collection{rs: rs, dir: dir, a: a, info: map[string]string{}, texts: map[string]string{}}
	// The performance recording (stopped with the run) judges the run
	// before the video decides what to keep (perf.go).
	verdict = rs.perfEvidence(ctx, dir, verdict)
	rs.stopVideo(ctx, dir, verdict == nil) // so the recording ends with the run (video.go)
	c.writeResult()
	c.writeCase()
	var wg sync.WaitGroup
	for _, item := range []func(context.Context){c.deviceFiles, c.screenshot, c.logcat, c.deviceInfo} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			item(cctx)
		}()
	}
	wg.Wait()
	c.writeSteps()
	rep := rs.rep
	terminal := rep.Status != nil && rep.Status.Terminal
	if rep.Status != nil && !terminal {
		a.Errors = append(a.Errors, fmt.Sprintf("%s: the run's last status is %s, not terminal", ArtifactResult, rep.Status.State))
	}
	a.Complete = terminal && len(a.Errors) == 0 && len(a.Skipped) == 0
	extra := c.info // the items are done
	extra["serial"] = rs.d.Serial()
	if rep.State != "" {
		extra["state"] = rep.State
	}
	if verdict != nil {
		extra["errorCode"] = verdict.Code
	}
	if rep.Redaction != nil {
		extra["redaction"] = rep.Redaction.Basis
	}
	man := artifacts.Manifest{Kind: "run", RunID: rep.RunID, RequestID: rep.RequestID, CaseName: rep.CaseName,
		CreatedAt: clk.Now().UTC().Format(time.RFC3339Nano), Complete: a.Complete, Skipped: a.Skipped, Errors: a.Errors, Extra: extra}
	if _, err := dir.WriteManifest(man); err != nil {
		a.Errors = append(a.Errors, artifacts.ManifestName+": "+errText(err))
		a.Complete = false
	} else {
		a.Manifest, _ = dir.Abs(artifacts.ManifestName)
		a.Replaced = dir.Replaced()
	}
	return a, verdict
}

// collection is one evidence collection; its items run concurrently.
type collection struct {
	rs   *runState
	dir  *artifacts.Dir
	mu   sync.Mutex
	a    *RunArtifacts
	info map[string]string // manifest extras from the device
	// texts are the pulled text files as kept (redacted), by device path:
	// the timeline is read from the result's log.
	texts map[string]string
}

// fail records why an item is missing. ctx is the item's context: when it
// ended first, its cause (a deadline, the budget, the interrupt) is the
// reason, not the error the cancelled command returned.
func (c *collection) fail(ctx context.Context, what string, err error) {
	msg := errText(err)
	if ctx != nil && ctx.Err() != nil {
		msg = "interrupted: the command was stopped"
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			msg = cause.Error()
		}
	}
	c.mu.Lock()
	c.a.Errors = append(c.a.Errors, what+": "+msg)
	c.mu.Unlock()
}

// item runs f with the per-item deadline.
func (c *collection) item(ctx context.Context, what string, f func(ctx context.Context) error) {
	ictx, cancel := clock.WithTimeout(ctx, c.rs.d.Clock(), c.rs.o.EvidenceTimeout, errEvidenceDeadline)
	defer cancel()
	if err := f(ictx); err != nil {
		c.fail(ictx, what, err)
	}
}

// setPath records the absolute path of a written file.
func (c *collection) setPath(dst *string, rel string) {
	p, _ := c.dir.Abs(rel)
	c.mu.Lock()
	*dst = p
	c.mu.Unlock()
}

// writeResult writes the run's last status (redacted).
func (c *collection) writeResult() {
	st := c.rs.rep.Status
	if st == nil {
		c.fail(nil, ArtifactResult, errors.New("no status of this run was observed"))
		return
	}
	obj := st.Object
	if p := c.rs.perf; p != nil {
		// The performance figures beside the device's status (perf.go).
		obj = maps.Clone(obj)
		obj["perf"] = p.report(c.rs.redactor())
	}
	if _, err := c.dir.WriteJSON(ArtifactResult, "harness?type=status", c.rs.redactor().Value(obj)); err != nil {
		c.fail(nil, ArtifactResult, err)
		return
	}
	c.setPath(&c.a.Result, ArtifactResult)
}

// writeCase writes the case as the device replayed it, its secrets
// redacted (the report lists its steps).
func (c *collection) writeCase() {
	ci := c.rs.caseInfo
	if ci == nil {
		return
	}
	if _, err := c.dir.WriteJSON(artifactCase, "harness?type=case", c.rs.redactor().Value(ci.Object)); err != nil {
		c.fail(nil, artifactCase, err)
		return
	}
	c.setPath(&c.a.Case, artifactCase)
}

func (c *collection) screenshot(ctx context.Context) {
	c.item(ctx, ArtifactScreenshot, func(ctx context.Context) error {
		png, err := c.rs.d.Screencap(ctx)
		if err != nil {
			return err
		}
		if _, err := c.dir.WriteFile(ArtifactScreenshot, "screencap -p", png); err != nil {
			return err
		}
		c.setPath(&c.a.Screenshot, ArtifactScreenshot)
		return nil
	})
}

func (c *collection) logcat(ctx context.Context) {
	c.item(ctx, artifactLogcat, func(ctx context.Context) error {
		log, err := c.rs.d.Logcat(ctx, c.rs.o.LogcatLines, logcatMaxBytes)
		if err != nil {
			return err
		}
		if _, err := c.dir.WriteFile(artifactLogcat, "logcat -d -v threadtime", []byte(c.rs.redactor().Text(string(log)))); err != nil {
			return err
		}
		c.setPath(&c.a.Logcat, artifactLogcat)
		return nil
	})
}

// deviceInfo reads the device's model and UTC offset for the manifest
// (the report places logcat lines, which are in device local time, on the
// run's timeline with it).
func (c *collection) deviceInfo(ctx context.Context) {
	c.item(ctx, "device description", func(ctx context.Context) error {
		out, _, code, err := c.rs.d.Transport().Shell(ctx, "getprop ro.product.model; date +%z")
		if err != nil {
			if ie := device.CtxErr(ctx, err); ie != nil {
				return ie
			}
			return fault.Wrap(fault.Transport, fault.CodeAdbError, "getprop/date failed", err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		c.mu.Lock()
		defer c.mu.Unlock()
		if m := strings.TrimSpace(lines[0]); code == 0 && m != "" {
			c.info["model"] = m
		}
		if len(lines) > 1 {
			if z := strings.TrimSpace(lines[len(lines)-1]); utcOffset(z) {
				c.info["deviceUtcOffset"] = z
			}
		}
		return nil
	})
}

// utcOffset reports a `date +%z` answer: +hhmm or -hhmm.
func utcOffset(s string) bool {
	if len(s) != 5 || (s[0] != '+' && s[0] != '-') {
		return false
	}
	for _, r := range s[1:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// deviceFiles pulls results[].logFile and screenshotFiles into device/,
// each checked against SoloPi's directories and by SHA-256, each within
// its own deadline, text files redacted. Only while the device still
// publishes our run: a later run may reuse the same paths.
func (c *collection) deviceFiles(ctx context.Context) {
	rep := c.rs.rep
	if rep.Status == nil || rep.RunID == "" {
		return
	}
	var current *replayStatus
	c.item(ctx, "status", func(ctx context.Context) error {
		st, err := FetchReplayStatus(ctx, c.rs.d)
		current = st
		return err
	})
	switch {
	case current == nil:
		return
	case current.RunID == "":
		c.fail(nil, "device files", errors.New("SoloPi no longer knows the run (restarted?); its files were not collected"))
		return
	case current.RunID != rep.RunID:
		c.fail(nil, "device files", fmt.Errorf("the device now publishes another run (%q); its files were not collected", current.RunID))
		return
	}
	type item struct{ remote, label string }
	var items []item
	seen := map[string]bool{}
	for i, r := range rep.Status.Results {
		if r.LogFile != "" && !seen[r.LogFile] {
			seen[r.LogFile] = true
			items = append(items, item{r.LogFile, fmt.Sprintf("results[%d].logFile", i)})
		}
		keys := make([]string, 0, len(r.ScreenshotFiles))
		for k := range r.ScreenshotFiles {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := r.ScreenshotFiles[k]
			if p != "" && !seen[p] {
				seen[p] = true
				items = append(items, item{p, fmt.Sprintf("results[%d].screenshotFiles[%s]", i, k)})
			}
		}
	}
	for n, it := range items {
		if err := checkEvidencePath(c.rs.d.Package(), it.remote); err != nil {
			c.skip(it.remote, err.Error())
			continue
		}
		name := fmt.Sprintf("%s/%03d-%s", artifactDeviceDir, n+1, artifacts.SanitizeName(path.Base(it.remote)))
		c.item(ctx, it.label, func(ctx context.Context) error {
			e, err := c.pull(ctx, it.remote, name)
			if err != nil {
				if ctx.Err() == nil && fault.KindOf(err) == fault.Transport {
					// The device could not give this file (gone, digest
					// mismatch): skipped, not a host failure.
					c.skip(it.remote, errText(err))
					return nil
				}
				return err
			}
			c.mu.Lock()
			c.a.DeviceFiles = append(c.a.DeviceFiles, e)
			c.mu.Unlock()
			return nil
		})
	}
}

func (c *collection) skip(remote, reason string) {
	c.mu.Lock()
	c.a.Skipped = append(c.a.Skipped, artifacts.SkippedFile{Source: remote, Reason: reason})
	c.mu.Unlock()
}

// pull copies one device file to name. A text file is read whole, its
// secrets redacted, then written (its digest is of what is kept); other
// files stream straight into place.
func (c *collection) pull(ctx context.Context, remote, name string) (artifacts.FileEntry, error) {
	if textEvidence(name) {
		var buf limitedBuffer
		buf.max = deviceTextMaxBytes
		if _, err := c.rs.d.Pull(ctx, remote, &buf); err != nil {
			return artifacts.FileEntry{}, err
		}
		text := c.rs.redactor().Text(buf.String())
		e, err := c.dir.WriteFile(name, remote, []byte(text))
		if err == nil {
			c.mu.Lock()
			c.texts[remote] = text
			c.mu.Unlock()
		}
		return e, err
	}
	w, err := c.dir.Create(name, remote)
	if err != nil {
		return artifacts.FileEntry{}, err
	}
	if _, err := c.rs.d.Pull(ctx, remote, w); err != nil {
		w.Abort()
		return artifacts.FileEntry{}, err
	}
	return w.Commit()
}

// textEvidence reports a device file that may quote parameter values.
func textEvidence(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".log", ".txt", ".json", ".xml", ".csv":
		return true
	}
	return false
}

// limitedBuffer refuses to grow past max bytes.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.max {
		return 0, fmt.Errorf("the file is larger than %d bytes", b.max)
	}
	return b.Buffer.Write(p)
}

// writeSteps writes steps.json, the timeline read from the first result's
// log as it was pulled, with the failed step's screenshot when the device
// took one and it was collected. A log that gives no steps writes nothing.
func (c *collection) writeSteps() {
	st := c.rs.rep.Status
	if st == nil || len(st.Results) == 0 {
		return
	}
	r := st.Results[0]
	text, ok := c.texts[r.LogFile]
	if !ok {
		return
	}
	steps := parseTimeline(text, r.StartTime)
	if steps == nil {
		return
	}
	local := map[string]string{}
	var source string
	for _, f := range c.a.DeviceFiles {
		local[f.Source] = f.Path
		if f.Source == r.LogFile {
			source = f.Path
		}
	}
	if f := FailedStep(steps); f != nil {
		if remote, ok := r.ScreenshotFiles[failureShot(f.Index)]; ok {
			f.Screenshot = local[remote]
		}
	}
	tl := Timeline{Source: source, ReplayStart: time.UnixMilli(r.StartTime).UTC().Format(time.RFC3339Nano), Steps: steps}
	if v := c.rs.video; v != nil && v.Kept && !c.rs.videoStarted.IsZero() && !c.rs.startSent.IsZero() {
		lead := max(c.rs.startSent.Sub(c.rs.videoStarted).Milliseconds(), 0)
		tl.VideoLeadMs = &lead
	}
	if _, err := c.dir.WriteJSON(ArtifactSteps, source, tl); err != nil {
		c.fail(nil, ArtifactSteps, err)
		return
	}
	c.setPath(&c.a.Steps, ArtifactSteps)
	c.rs.rep.Steps = steps
}

package replay

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/solopi/device"
)

// Evidence file names inside a run's artifacts directory.
const (
	ArtifactResult     = "result.json"
	ArtifactScreenshot = "screen.png"
	ArtifactLogcat     = "logcat.txt"
	ArtifactDeviceDir  = "device"
	logcatMaxBytes     = 8 << 20
	// maxStatusFailures is how many consecutive unreachable status polls a
	// run wait tolerates.
	maxStatusFailures = 3
	// evidenceBudget bounds evidence collection, which also runs after an
	// interrupt when the user is waiting for the command to end.
	evidenceBudget = 30 * time.Second
)

// RunArtifacts is the evidence collected for one run.
type RunArtifacts struct {
	Dir         string
	Result      string
	Screenshot  string
	Logcat      string
	Manifest    string
	DeviceFiles []artifacts.FileEntry
	Skipped     []artifacts.SkippedFile
	Errors      []string
	Complete    bool
	// Replaced is the earlier evidence set this one replaced (only in
	// artifacts.EvidenceReplace mode).
	Replaced *artifacts.Replaced
}

// Report renders the evidence for the command output (absolute paths).
func (a *RunArtifacts) Report() map[string]any {
	m := map[string]any{"dir": a.Dir, "complete": a.Complete}
	for k, v := range map[string]string{"result": a.Result, "screenshot": a.Screenshot, "logcat": a.Logcat, "manifest": a.Manifest} {
		if v != "" {
			m[k] = v
		}
	}
	df := a.DeviceFiles
	if df == nil {
		df = []artifacts.FileEntry{}
	}
	m["deviceFiles"] = df
	if len(a.Skipped) > 0 {
		m["skipped"] = a.Skipped
	}
	if len(a.Errors) > 0 {
		m["errors"] = a.Errors
	}
	if a.Replaced != nil {
		m["replaced"] = a.Replaced
	}
	return m
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

// collect writes the evidence of our run. It runs with a fresh bounded
// context because it also runs after a timeout or an interrupt. Failures
// are recorded in the manifest and the output, never turned into another
// verdict: the run's exit code says what happened to the run.
func (rs *runState) collect(ctx context.Context) *RunArtifacts {
	cctx, cancel := device.Cleanup(ctx, evidenceBudget)
	defer cancel()
	a := &RunArtifacts{}
	dir, err := artifacts.Open(rs.o.ArtifactsDir, artifacts.EvidenceModeOf(rs.o.Overwrite), ArtifactResult, ArtifactScreenshot, ArtifactLogcat, artifacts.ManifestName, ArtifactDeviceDir)
	if err != nil {
		a.Errors = append(a.Errors, errText(err))
		return a
	}
	a.Dir = dir.Root()
	rep := rs.rep
	fail := func(what string, err error) { a.Errors = append(a.Errors, what+": "+errText(err)) }
	if rep.Status != nil {
		if _, err := dir.WriteJSON(ArtifactResult, "harness?type=status", rep.Status.Object); err != nil {
			fail(ArtifactResult, err)
		} else {
			a.Result, _ = dir.Abs(ArtifactResult)
		}
	} else {
		fail(ArtifactResult, errors.New("no status of this run was observed"))
	}
	// Device-side files only while the device still publishes our run:
	// a later run may reuse the same paths.
	current, err := FetchReplayStatus(cctx, rs.d)
	switch {
	case err != nil:
		fail("status", err)
	case current.RunID != rep.RunID:
		a.Errors = append(a.Errors, "device files: the device now publishes another run ("+current.RunID+"); its files were not collected")
	case rep.Status != nil:
		rs.pullDeviceFiles(cctx, dir, a)
	}
	if png, err := rs.d.Screencap(cctx); err != nil {
		fail(ArtifactScreenshot, err)
	} else if _, err := dir.WriteFile(ArtifactScreenshot, "screencap -p", png); err != nil {
		fail(ArtifactScreenshot, err)
	} else {
		a.Screenshot, _ = dir.Abs(ArtifactScreenshot)
	}
	if log, err := rs.d.Logcat(cctx, rs.o.LogcatLines, logcatMaxBytes); err != nil {
		fail(ArtifactLogcat, err)
	} else if _, err := dir.WriteFile(ArtifactLogcat, "logcat -d -v threadtime", log); err != nil {
		fail(ArtifactLogcat, err)
	} else {
		a.Logcat, _ = dir.Abs(ArtifactLogcat)
	}
	a.Complete = len(a.Errors) == 0 && len(a.Skipped) == 0
	man := artifacts.Manifest{Kind: "run", RunID: rep.RunID, RequestID: rep.RequestID, CaseName: rep.CaseName,
		CreatedAt: rs.d.Clock().Now().UTC().Format(time.RFC3339Nano), Complete: a.Complete, Skipped: a.Skipped, Errors: a.Errors}
	if rep.State != "" {
		man.Extra = map[string]string{"state": rep.State}
	}
	if _, err := dir.WriteManifest(man); err != nil {
		fail(artifacts.ManifestName, err)
		a.Complete = false
	} else {
		a.Manifest, _ = dir.Abs(artifacts.ManifestName)
		a.Replaced = dir.Replaced()
	}
	return a
}

// pullDeviceFiles pulls results[].logFile and screenshotFiles into
// device/, each checked against SoloPi's directories and by SHA-256.
func (rs *runState) pullDeviceFiles(ctx context.Context, dir *artifacts.Dir, a *RunArtifacts) {
	type item struct{ remote, label string }
	var items []item
	seen := map[string]bool{}
	for i, r := range rs.rep.Status.Results {
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
		if err := CheckEvidencePath(rs.d.Package(), it.remote); err != nil {
			a.Skipped = append(a.Skipped, artifacts.SkippedFile{Source: it.remote, Reason: err.Error()})
			continue
		}
		name := fmt.Sprintf("%s/%03d-%s", ArtifactDeviceDir, n+1, artifacts.SanitizeName(path.Base(it.remote)))
		w, err := dir.Create(name, it.remote)
		if err != nil {
			a.Errors = append(a.Errors, it.label+": "+errText(err))
			continue
		}
		if _, err := rs.d.Pull(ctx, it.remote, w); err != nil {
			w.Abort()
			a.Skipped = append(a.Skipped, artifacts.SkippedFile{Source: it.remote, Reason: errText(err)})
			continue
		}
		e, err := w.Commit()
		if err != nil {
			a.Errors = append(a.Errors, it.label+": "+errText(err))
			continue
		}
		a.DeviceFiles = append(a.DeviceFiles, e)
	}
}

// Package report renders self-contained HTML reports of evidence
// directories: a replay run (`run --artifacts`), a batch (`run-batch`,
// `run-repeat`), a verification run (`verify-run`), a pure-vision agent
// trajectory (`agent-run --trajectory`) and a performance recording
// (`perf-stop --output`, `perf-analyze`), a suite across phones, and the
// index of every batch under an artifacts root.
//
// It reads evidence files only, never a device: any directory written
// today or years ago renders the same way. A report is one HTML file with
// inline CSS and no script (the suite report has one, its name search,
// allowed by its hash and nothing else); images are linked by relative path to
// the evidence beside it, and a Content-Security-Policy forbids every
// request except those images. Text from the device or the model goes
// through html/template's escaping. Output is deterministic: the same
// directory gives the same bytes.
package report

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/fault"
)

// Kind is the kind of an evidence directory.
type Kind string

// Evidence kinds.
const (
	kindRun    Kind = "run"
	kindBatch  Kind = "batch"
	kindSuite  Kind = "suite"
	kindIndex  Kind = "index"
	kindVerify Kind = "verify-run"
	kindAgent  Kind = "agent-run"
	KindPerf   Kind = "perf"
)

// fileName is the report's name inside its evidence directory.
const fileName = "report.html"

// Options adjust what a report reads.
type Options struct {
	// Trajectory names the trajectory file (relative to the directory) of
	// an agent-run report; needed only when the directory holds several.
	Trajectory string
}

// Result is a written report.
type Result struct {
	Path string `json:"report"`
	Kind Kind   `json:"kind"`
}

// Detect tells the kind of an evidence directory from its files.
func Detect(dir string, o Options) (Kind, error) {
	e, err := openEvidence(dir)
	if err != nil {
		return "", err
	}
	defer e.close()
	return e.detect(o)
}

func (e *evidence) detect(o Options) (Kind, error) {
	switch {
	case o.Trajectory != "":
		return kindAgent, nil
	case isVerify(e):
		return kindVerify, nil
	case isRun(e):
		return kindRun, nil
	case isSuite(e):
		return kindSuite, nil
	case isBatch(e):
		return kindBatch, nil
	case isPerf(e):
		return KindPerf, nil
	case isIndex(e):
		return kindIndex, nil
	}
	if n := len(trajectories(e, ".")); n == 1 {
		return kindAgent, nil
	} else if n > 1 {
		return "", fault.Usage(fault.CodeUnknownEvidenceKind, "the directory holds several agent trajectories; name one").With("dir", e.dir)
	}
	return "", fault.Usage(fault.CodeUnknownEvidenceKind, "the directory is not an evidence directory solopi knows (run, batch, suite, verify-run, agent-run, perf, or a root of batch-<id> directories)").
		With("dir", e.dir)
}

func (e *evidence) render(k Kind, o Options) ([]byte, error) {
	var page *page
	var err error
	switch k {
	case kindRun:
		page, err = runPage(e)
	case kindBatch:
		page, err = batchPage(e)
	case kindSuite:
		page, err = suitePage(e)
	case kindIndex:
		page, err = indexPage(e)
	case kindVerify:
		page, err = verifyPage(e)
	case kindAgent:
		page, err = agentPage(e, o.Trajectory)
	case KindPerf:
		page, err = perfPage(e)
	}
	if err != nil {
		return nil, unreadable(e, err)
	}
	var buf bytes.Buffer
	if err := templates().ExecuteTemplate(&buf, "page", page); err != nil {
		return nil, fault.Wrap(fault.Internal, fault.CodeReportWriteFailed, "the report template failed", err)
	}
	return buf.Bytes(), nil
}

func unreadable(e *evidence, err error) error {
	var fe *fault.Error
	if errors.As(err, &fe) {
		return fe
	}
	return fault.Wrap(fault.Invalid, fault.CodeEvidenceUnreadable, "an evidence file cannot be read", err).With("dir", e.dir)
}

// Write renders the report of dir and publishes it as dir/report.html
// atomically. A batch also (re)writes the report of every sub-run it
// links to.
func Write(dir string, o Options) (Result, error) {
	e, err := openEvidence(dir)
	if err != nil {
		return Result{}, err
	}
	defer e.close()
	k, err := e.detect(o)
	if err != nil {
		return Result{}, err
	}
	if k == kindIndex {
		// Every batch's own report first, then the index of them.
		for _, b := range indexBatches(e) {
			if _, err := Write(filepath.Join(e.dir, b), Options{}); err != nil {
				return Result{}, err
			}
		}
	}
	if k == kindSuite {
		for _, rel := range suiteAttemptDirs(e) {
			if _, err := Write(filepath.Join(e.dir, filepath.FromSlash(rel)), Options{}); err != nil {
				return Result{}, err
			}
		}
	}
	if k == kindBatch {
		for _, c := range batchChildren(e) {
			if c.dir == "" {
				continue
			}
			if _, err := Write(filepath.Join(e.dir, filepath.FromSlash(c.dir)), Options{}); err != nil {
				return Result{}, err
			}
		}
	}
	b, err := e.render(k, o)
	if err != nil {
		return Result{}, err
	}
	// Readers see the old report or the new one; the rename replaces a
	// symlink named report.html instead of writing through it.
	path := filepath.Join(e.dir, fileName)
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		return Result{}, fault.Usage(fault.CodeReportWriteFailed, "the report path is a directory").With("path", path)
	}
	if _, err := (artifacts.Output{Mode: artifacts.Replace}).WriteFile(path, b); err != nil {
		return Result{}, err
	}
	return Result{Path: path, Kind: k}, nil
}

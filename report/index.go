package report

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/fault"
)

// The index of an artifacts root (ROOT/report.html): every batch-<id>
// directory under it, newest first, with its verdict counts and a link to
// its own report. run-batch rewrites it after every batch, so the page at
// ROOT/report.html stays where CI and people look for it.

const batchDirPrefix = "batch-"

type indexView struct {
	Batches []indexBatch
}

type indexBatch struct {
	Name, Link, Kind, Verdict string
	Started                   string
	started                   time.Time
	Cases, Passed, Flaky      int64
	Failed, Error, Skipped    int64
	Phones                    int
	DurationMs                int64
}

// indexBatches are the batch-<id> directories of a root that hold a
// batch's summary (suite.json or batch.json).
func indexBatches(e *evidence) []string {
	var out []string
	for _, de := range e.entries(".") {
		if de.IsDir() && strings.HasPrefix(de.Name(), batchDirPrefix) &&
			(e.isFile(de.Name()+"/"+suiteReport) || e.isFile(de.Name()+"/"+batchSummary)) {
			out = append(out, de.Name())
		}
	}
	return out
}

func isIndex(e *evidence) bool { return len(indexBatches(e)) > 0 }

func indexPage(e *evidence) (*page, error) {
	v := &indexView{}
	var cases, bad int64
	for _, name := range indexBatches(e) {
		b := indexBatch{Name: name, Link: href(name + "/" + fileName)}
		if e.isFile(name + "/" + suiteReport) {
			var rep obj
			if err := e.readJSON(name+"/"+suiteReport, &rep); err != nil {
				return nil, err
			}
			sub, err := e.sub(name)
			if err != nil {
				return nil, err
			}
			p, err := suitePage(sub)
			sub.close()
			if err != nil {
				return nil, err
			}
			c := p.Suite.Counts
			b.Kind, b.Verdict = "suite", p.Banner.Verdict
			b.Cases, b.Passed, b.Flaky, b.Failed, b.Error, b.Skipped = c.Cases, c.Passed, c.Flaky, c.Failed, c.Error, c.Skipped
			b.Phones = len(p.Suite.Phones)
			b.started, _ = time.Parse(time.RFC3339Nano, rep.Display("startedAt"))
			b.DurationMs, _ = rep.Integer("durationMs")
		} else {
			var sum obj
			if err := e.readJSON(name+"/"+batchSummary, &sum); err != nil {
				return nil, err
			}
			b.Kind, b.Phones = "batch", 1
			b.Cases, _ = sum.Integer("requestedRuns")
			completed, _ := sum.Integer("completedRuns")
			b.Failed, _ = sum.Integer("failedRuns")
			b.Skipped = b.Cases - completed
			b.Passed = completed - b.Failed
			b.Verdict = "passed"
			if ok, _ := sum.Flag("success"); !ok {
				b.Verdict = "failed"
			}
			b.DurationMs, _ = sum.Integer("durationMs")
			// batch.json says no start time: its file's time (when the
			// batch ended) less its duration.
			if fi, ok := e.stat(name + "/" + batchSummary); ok {
				b.started = fi.ModTime().Add(-time.Duration(b.DurationMs) * time.Millisecond)
			}
		}
		if !b.started.IsZero() {
			b.Started = b.started.UTC().Format("2006-01-02 15:04:05 UTC")
		}
		cases += b.Cases
		if verdictClass(b.Verdict) != "ok" {
			bad++
		}
		v.Batches = append(v.Batches, b)
	}
	sort.SliceStable(v.Batches, func(i, j int) bool {
		if !v.Batches[i].started.Equal(v.Batches[j].started) {
			return v.Batches[i].started.After(v.Batches[j].started)
		}
		return v.Batches[i].Name < v.Batches[j].Name
	})
	verdict := "passed"
	if len(v.Batches) > 0 && verdictClass(v.Batches[0].Verdict) != "ok" {
		verdict = v.Batches[0].Verdict
	}
	head := "the newest batch " + verdict
	return &page{Kind: kindIndex, Index: v, Title: "Batches in " + filepath.Base(e.dir),
		Banner: banner{Verdict: verdict, Headline: head},
		Facts: []fact{{Label: "batches", Value: itoa(len(v.Batches))}, {Label: "not passed", Value: itoa(int(bad))},
			{Label: "cases", Value: itoa(int(cases))}}}, nil
}

func itoa(n int) string { return formatNumber(float64(n)) }

// WriteIndex renders ROOT/report.html, the index of the batches under
// root, without rewriting the batches' own reports (Write of the root
// does both).
func WriteIndex(root string) (string, error) {
	e, err := openEvidence(root)
	if err != nil {
		return "", err
	}
	defer e.close()
	if !isIndex(e) {
		return "", fault.Usage(fault.CodeUnknownEvidenceKind, "the directory holds no batch-<id> directory").With("dir", e.dir)
	}
	b, err := e.render(kindIndex, Options{})
	if err != nil {
		return "", err
	}
	path := filepath.Join(e.dir, fileName)
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		return "", fault.Usage(fault.CodeReportWriteFailed, "the report path is a directory").With("path", path)
	}
	if _, err := (artifacts.Output{Mode: artifacts.Replace}).WriteFile(path, b); err != nil {
		return "", err
	}
	return path, nil
}

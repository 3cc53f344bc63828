package report

import (
	"fmt"
	"strconv"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/internal/lazyregexp"
)

// batchSummary is the batch root's summary file: the run-batch /
// run-repeat JSON object as the command printed it (written from phase 2
// on). Without it the sub-run directories alone are read, and sub-runs the
// batch never reached are not known.
const batchSummary = "batch.json"

// childDir is one sub-run directory of a batch root: NNN-<case>.
var childDir = lazyregexp.New(`^(\d{3,})-(.+)$`)

func isBatch(e *evidence) bool {
	if e.isFile(batchSummary) {
		return true
	}
	for _, de := range e.entries(".") {
		if de.IsDir() && childDir.MatchString(de.Name()) && isRunDir(e, de.Name()) {
			return true
		}
	}
	return false
}

func isRunDir(e *evidence, rel string) bool {
	return e.isFile(rel+"/"+runResultFile) || e.isFile(rel+"/"+artifacts.ManifestName)
}

type batchView struct {
	Rows                         []batchRow
	Passed, Failed, NotReached   int
	Requested, Completed         int
	Note                         string
	StoppedEarly, ContinueOnFail bool
}

type batchRow struct {
	Index                            int
	CaseName, State, RunID           string
	ErrorCode, Error                 string
	DurationMs                       int64
	Link, Thumb                      string
	ExitCode                         string
	FailingStep, FailingMessage, Dir string
	Media                            runMedia
}

// batchChild is what the summary and the directories say of one sub-run.
type batchChild struct {
	index int
	name  string
	dir   string // relative to the batch root, "" when absent
	entry obj    // the summary's results[] entry, nil without batch.json
}

// batchChildren merges the summary's entries with the directories.
func batchChildren(e *evidence) []batchChild {
	dirs := map[int]string{}
	names := map[int]string{}
	var order []int
	for _, de := range e.entries(".") {
		m := childDir.FindStringSubmatch(de.Name())
		if m == nil || !de.IsDir() || !isRunDir(e, de.Name()) {
			continue
		}
		i, err := strconv.Atoi(m[1])
		if err != nil || dirs[i] != "" {
			continue
		}
		dirs[i], names[i] = de.Name(), m[2]
		order = append(order, i)
	}
	var sum obj
	if e.isFile(batchSummary) && e.readJSON(batchSummary, &sum) == nil {
		var out []batchChild
		for _, r := range sum.Objects("results") {
			i64, _ := r.Integer("index")
			i := int(i64)
			c := batchChild{index: i, name: r.Display("caseName"), entry: r, dir: dirs[i]}
			if d := r.Object("run").Object("artifacts"); d != nil {
				if rel, ok := e.local(d.Display("dir") + "/" + runResultFile); ok {
					c.dir = rel[:len(rel)-len("/"+runResultFile)]
				}
			}
			out = append(out, c)
		}
		// Runs an early stop never reached are listed under skipped[]
		// (solopi-ai's results[] holds only the runs that executed).
		for _, r := range sum.Objects("skipped") {
			i64, _ := r.Integer("index")
			out = append(out, batchChild{index: int(i64), name: r.Display("caseName"), entry: obj{"state": "not_reached"}})
		}
		if len(out) > 0 {
			return out
		}
	}
	out := make([]batchChild, 0, len(order))
	for _, i := range order {
		out = append(out, batchChild{index: i, name: names[i], dir: dirs[i]})
	}
	return out
}

func batchPage(e *evidence) (*page, error) {
	var sum obj
	if e.isFile(batchSummary) {
		if err := e.readJSON(batchSummary, &sum); err != nil {
			return nil, err
		}
	}
	v := &batchView{}
	for _, c := range batchChildren(e) {
		row := batchRow{Index: c.index, CaseName: c.name, Dir: c.dir}
		if c.entry != nil {
			row.State, row.RunID, row.ErrorCode = c.entry.Display("state"), c.entry.Display("runId"), c.entry.Display("errorCode")
			row.ExitCode = c.entry.Display("exitCode")
			run := c.entry.Object("run")
			row.Error = run.Display("error")
			row.DurationMs, _ = run.Integer("durationMs")
		}
		if c.dir != "" {
			sub, err := e.sub(c.dir)
			if err == nil {
				var st obj
				if sub.readJSON(runResultFile, &st) == nil {
					row.State = firstNonEmpty(row.State, st.Display("state"))
					row.RunID = firstNonEmpty(row.RunID, st.Display("runId"))
					if row.DurationMs == 0 {
						row.DurationMs, _ = st.Integer("durationMs")
					}
					for _, r := range st.Objects("results") {
						if msg := r.Display("exceptionMessage"); msg != "" {
							row.FailingStep = firstNonEmpty(r.Display("exceptionStepId"), r.Display("exceptionStep"))
							row.FailingMessage = msg
							break
						}
					}
				}
				if sub.isFile(runScreen) {
					row.Thumb = href(c.dir + "/" + runScreen)
				}
				sub.close()
				row.Media = mediaOf(e, c.dir)
			}
			row.Link = href(c.dir + "/" + fileName)
		}
		if row.State == "" {
			row.State = "not_reached"
		}
		switch verdictClass(row.State) {
		case "ok":
			v.Passed++
		case "bad":
			v.Failed++
		}
		if row.State == "not_reached" {
			v.NotReached++
		}
		v.Rows = append(v.Rows, row)
	}
	v.Requested, v.Completed = len(v.Rows), len(v.Rows)-v.NotReached
	verdict := "passed"
	if sum != nil {
		if n, ok := sum.Integer("requestedRuns"); ok {
			v.Requested = int(n)
		}
		if n, ok := sum.Integer("completedRuns"); ok {
			v.Completed = int(n)
		}
		v.StoppedEarly, _ = sum.Flag("stoppedEarly")
		v.ContinueOnFail, _ = sum.Flag("continueOnFailure")
		if ok, _ := sum.Flag("success"); !ok {
			verdict = "failed"
		}
	} else {
		v.Note = "This batch directory has no " + batchSummary + ": only the sub-runs that wrote evidence are listed."
		if v.Failed > 0 || v.Passed != len(v.Rows) {
			verdict = "failed"
		}
	}
	if len(v.Rows) == 0 {
		verdict = "not_tested"
	}
	dur, _ := sum.Integer("durationMs")
	p := &page{Kind: kindBatch, Batch: v, Title: "Batch " + sum.Display("batchId"),
		Banner: banner{Verdict: verdict, Headline: fmt.Sprintf("%d passed, %d failed, %d not reached of %d", v.Passed, v.Failed, v.NotReached, v.Requested),
			Detail: sum.Display("error")},
		Facts: []fact{{Label: "batchId", Value: sum.Display("batchId"), Mono: true}, {Label: "duration", Value: humanMillis(dur)},
			{Label: "completed runs", Value: fmt.Sprintf("%d of %d", v.Completed, v.Requested)}}}
	if sum == nil {
		p.Title = "Batch " + e.dir
		p.Facts = p.Facts[2:]
	}
	return p, nil
}

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
		for _, r := range objects(sum, "results") {
			i64, _ := integer(r, "index")
			i := int(i64)
			c := batchChild{index: i, name: str(r, "caseName"), entry: r, dir: dirs[i]}
			if d := object(object(r, "run"), "artifacts"); d != nil {
				if rel, ok := e.local(str(d, "dir") + "/" + runResultFile); ok {
					c.dir = rel[:len(rel)-len("/"+runResultFile)]
				}
			}
			out = append(out, c)
		}
		// Runs an early stop never reached are listed under skipped[]
		// (solopi-ai's results[] holds only the runs that executed).
		for _, r := range objects(sum, "skipped") {
			i64, _ := integer(r, "index")
			out = append(out, batchChild{index: int(i64), name: str(r, "caseName"), entry: obj{"state": "not_reached"}})
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
			row.State, row.RunID, row.ErrorCode = str(c.entry, "state"), str(c.entry, "runId"), str(c.entry, "errorCode")
			row.ExitCode = str(c.entry, "exitCode")
			run := object(c.entry, "run")
			row.Error = str(run, "error")
			row.DurationMs, _ = integer(run, "durationMs")
		}
		if c.dir != "" {
			sub, err := e.sub(c.dir)
			if err == nil {
				var st obj
				if sub.readJSON(runResultFile, &st) == nil {
					row.State = firstNonEmpty(row.State, str(st, "state"))
					row.RunID = firstNonEmpty(row.RunID, str(st, "runId"))
					if row.DurationMs == 0 {
						row.DurationMs, _ = integer(st, "durationMs")
					}
					for _, r := range objects(st, "results") {
						if msg := str(r, "exceptionMessage"); msg != "" {
							row.FailingStep = firstNonEmpty(str(r, "exceptionStepId"), str(r, "exceptionStep"))
							row.FailingMessage = msg
							break
						}
					}
				}
				if sub.isFile(runScreen) {
					row.Thumb = href(c.dir + "/" + runScreen)
				}
				sub.close()
			}
			row.Link = href(c.dir + "/" + FileName)
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
		if n, ok := integer(sum, "requestedRuns"); ok {
			v.Requested = int(n)
		}
		if n, ok := integer(sum, "completedRuns"); ok {
			v.Completed = int(n)
		}
		v.StoppedEarly, _ = boolean(sum, "stoppedEarly")
		v.ContinueOnFail, _ = boolean(sum, "continueOnFailure")
		if ok, _ := boolean(sum, "success"); !ok {
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
	dur, _ := integer(sum, "durationMs")
	p := &page{Kind: KindBatch, Batch: v, Title: "Batch " + str(sum, "batchId"),
		Banner: banner{Verdict: verdict, Headline: fmt.Sprintf("%d passed, %d failed, %d not reached of %d", v.Passed, v.Failed, v.NotReached, v.Requested),
			Detail: str(sum, "error")},
		Facts: []fact{{Label: "batchId", Value: str(sum, "batchId"), Mono: true}, {Label: "duration", Value: humanMillis(dur)},
			{Label: "completed runs", Value: fmt.Sprintf("%d of %d", v.Completed, v.Requested)}}}
	if sum == nil {
		p.Title = "Batch " + e.dir
		p.Facts = p.Facts[2:]
	}
	return p, nil
}

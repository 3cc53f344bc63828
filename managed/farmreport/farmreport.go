// Package farmreport turns a farm task's matrix report (managed.Report)
// into the one report model of suites run across phones
// (suitereport.Report), so that a farm task gives the same per-phone JUnit
// (and, through the same model, the same HTML) as a batch this process
// ran: each shard is a case, each of its attempts an attempt on the phone
// that ran it, and product and infrastructure stay apart as they do in a
// batch (a Result Judge failure is failed; an attempt that broke for the
// phone's, adb's, the worker's or the lease's reasons is error; a pass
// after a failure is flaky).
package farmreport

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/suitereport"
)

// name is the JUnit root of a farm task's report.
const name = "solopi-managed"

// Attempt statuses of the farm (protocol.ManagedAttempt).
const (
	statusPassed    = "passed"
	statusFailed    = "failed"
	statusNotTested = "not_tested"
	statusRetryable = "retryable_failed"
	statusExpired   = "expired"
	statusCancelled = "cancelled"
)

// Suite is the task's report in the suite model, finished at the task's
// end (or, for a task still running, at its last attempt's end): the
// task id is the batch id, one case per shard named by its target (with
// the replica when the target has several), the phones in the order they
// first ran an attempt. A shard still waiting or running counts as
// skipped; one that ended without a finished attempt (abandoned,
// cancelled before it ran) as error or skipped with its reason. A
// cancelled task is an interrupted suite.
func Suite(r managed.Report) suitereport.Report {
	rep := suitereport.Report{BatchID: r.TaskID, Name: name, StartedAt: ms(r.CreatedAt),
		Interrupted: r.Status == statusCancelled}
	replicas := map[string]int{}
	for _, sh := range r.Shards {
		replicas[sh.TargetID]++
	}
	devices := map[string]int{}
	end := rep.StartedAt
	for _, sh := range r.Shards {
		c := suitereport.Case{Name: caseName(sh, replicas[sh.TargetID]), Fingerprint: r.PlanFingerprint}
		for _, a := range sh.Attempts {
			at, ok := attempt(a)
			if !ok {
				continue
			}
			c.Attempts = append(c.Attempts, at)
			i, seen := devices[a.Serial]
			if !seen {
				i = len(rep.Devices)
				devices[a.Serial] = i
				rep.Devices = append(rep.Devices, suitereport.Device{Serial: a.Serial, Usable: true})
			}
			rep.Devices[i].Timeline = append(rep.Devices[i].Timeline, suitereport.Slot{Case: c.Name, Attempt: at.Number,
				Verdict: at.Verdict, StartedAt: at.StartedAt, FinishedAt: at.FinishedAt, DurationMs: at.DurationMs})
			if at.FinishedAt.After(end) {
				end = at.FinishedAt
			}
		}
		if len(c.Attempts) == 0 {
			c.Reason = notRun(sh)
			if sh.Status == statusNotTested {
				c.Verdict = suitereport.Error
			}
		}
		rep.Cases = append(rep.Cases, c)
	}
	for i := range rep.Devices {
		slices.SortStableFunc(rep.Devices[i].Timeline, func(a, b suitereport.Slot) int { return a.StartedAt.Compare(b.StartedAt) })
	}
	if r.FinishedAt != nil {
		end = ms(*r.FinishedAt)
	}
	rep.Finish(end)
	return rep
}

// caseName names a shard: its target, and its replica when the target has
// several (stable across tasks of the same matrix, unlike shard ids).
func caseName(sh managed.ReportShard, replicas int) string {
	if replicas <= 1 {
		return sh.TargetID
	}
	return fmt.Sprintf("%s-r%d", sh.TargetID, sh.ReplicaIndex)
}

// attempt is one finished attempt as a suite attempt; an attempt still
// leased or running is not one yet.
func attempt(a managed.ReportAttempt) (suitereport.Attempt, bool) {
	if a.FinishedAt == nil {
		return suitereport.Attempt{}, false
	}
	category := deref(a.FailureCategory)
	at := suitereport.Attempt{Number: int(a.AttemptNumber), Device: a.Serial, ErrorCode: category,
		StartedAt: ms(a.CreatedAt), FinishedAt: ms(*a.FinishedAt)}
	if a.StartedAt != nil {
		at.StartedAt = ms(*a.StartedAt)
	}
	at.DurationMs = max(0, at.FinishedAt.Sub(at.StartedAt).Milliseconds())
	verdict := a.VerificationOutcomeFingerprint != nil
	switch {
	case a.Status == statusPassed:
		at.Verdict, at.ErrorCode = suitereport.Passed, ""
	case a.Status == statusFailed && verdict:
		at.Verdict, at.Error = suitereport.Failed, "the Result Judge's verdict is failed ("+category+")"
	case a.Status == statusCancelled:
		at.Verdict, at.Error = suitereport.Cancelled, "the attempt was cancelled ("+category+")"
	case a.Status == statusNotTested && verdict:
		at.Verdict, at.Error = suitereport.Error, "the Result Judge's verdict is not_tested ("+category+"): the plan could not run to a verdict"
	case a.Status == statusRetryable, a.Status == statusExpired, a.Status == statusNotTested, a.Status == statusFailed:
		at.Verdict, at.Error = suitereport.Error, infrastructure(a.Status, category)
	default:
		return suitereport.Attempt{}, false
	}
	if a.ReportPath != nil {
		at.EvidenceDir = filepath.Dir(*a.ReportPath)
		if at.Verdict != suitereport.Passed {
			at.Attachments = evidence(*a.ReportPath)
		}
	}
	return at, true
}

// infrastructure says why an attempt ended without a product verdict.
func infrastructure(status, category string) string {
	switch category {
	case managed.CategoryLeaseExpired:
		return "the worker's lease expired (the worker died, stalled or lost the database): not a verdict of the case"
	case managed.CategoryWorkerStopped:
		return "the worker stopped and handed the shard back: not a verdict of the case"
	case managed.CategoryTransport:
		return "the phone, adb or SoloPi failed before a verdict (transport_error): not a verdict of the case"
	case managed.CategoryWorker:
		return "the worker could not run the shard (worker_error): not a verdict of the case"
	}
	return fmt.Sprintf("the attempt ended %s under %s, a fault of the phone, adb, the worker or the farm: not a verdict of the case", status, category)
}

// evidence are the attempt's report files that exist on this machine.
func evidence(reportPath string) []string {
	var out []string
	for _, p := range []string{reportPath, filepath.Join(filepath.Dir(reportPath), "report.html")} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	return out
}

// notRun is why a shard has no finished attempt.
func notRun(sh managed.ReportShard) *suitereport.Problem {
	switch category := deref(sh.FailureCategory); {
	case managed.Terminal(sh.Status) && category != "":
		return &suitereport.Problem{Code: category, Message: "the shard ended " + sh.Status + " without a finished attempt (" + category + ")"}
	case managed.Terminal(sh.Status):
		return &suitereport.Problem{Code: "shard_" + sh.Status, Message: "the shard ended " + sh.Status + " without a finished attempt"}
	}
	return &suitereport.Problem{Code: "shard_not_finished", Message: "the shard is still " + sh.Status}
}

func ms(v int64) time.Time { return time.UnixMilli(v).UTC() }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

package suite

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/history"
	"github.com/solopi-dev/solopi/solopi/replay"
	"github.com/solopi-dev/solopi/suitereport"
)

// class is what an attempt's outcome means for the suite.
type class int

const (
	// classPassed and classFailed are product verdicts.
	classPassed class = iota
	classFailed
	// classInfra: the phone, the adb link or the host broke the attempt;
	// retried on the infrastructure budget, never a test failure.
	classInfra
	// classFatal: the case cannot run anywhere as it is (the local
	// policy refused it); not retried.
	classFatal
	// classCancelled: the suite was interrupted during the attempt.
	classCancelled
)

func (c class) verdict() suitereport.Verdict {
	switch c {
	case classPassed:
		return suitereport.Passed
	case classFailed:
		return suitereport.Failed
	case classCancelled:
		return suitereport.Cancelled
	}
	return suitereport.Error
}

// classify reads a run's failure (nil: passed) as product or
// infrastructure, as the replay's codes mean (docs/error-codes.md): only a
// replay whose own steps failed, or that did not finish within its run
// timeout, failed as a test. A lease conflict, another client's run, a lost
// run, an unreachable control service, adb, the app's preconditions and
// every protocol anomaly are the phone's.
func classify(ctx context.Context, err *fault.Error, rep *replay.RunReport) class {
	switch {
	case err == nil:
		return classPassed
	case ctx.Err() != nil:
		// Whatever the run reports, the interrupt ended it.
		return classCancelled
	}
	switch err.Code {
	case fault.CodeReplayFailed:
		if rep != nil && rep.Status != nil && rep.Status.FirstFailure() != nil {
			return classFailed
		}
		// Failed without a failed step: the device never ran the case
		// (its target app missing, a permission, the snapshot gone).
		return classInfra
	case fault.CodeRunTimeout, fault.CodePerfBudgetExceeded:
		// An exceeded performance budget is the app's, as a failed step is.
		return classFailed
	}
	if err.Kind == fault.Invalid {
		return classFatal
	}
	return classInfra
}

// work is one phone's worker: it takes the next job until none is left
// for it, and retires the phone when it breaks.
func (r *runner) work(ctx context.Context, q *queue, p *phone) {
	for {
		j := q.next(p)
		if j == nil {
			return
		}
		cl, a := r.attempt(ctx, p, j)
		q.setRunnable(p, j.item, p.cases[j.item].runs())
		r.record(p, j, a)
		var retired *suitereport.Problem
		switch cl {
		case classPassed:
			p.infraRun = 0
		case classFailed:
			p.infraRun = 0
			if a.ErrorCode == fault.CodeRunTimeout {
				retired = r.fitness(ctx, p, false)
			}
		case classInfra:
			retired = r.fitness(ctx, p, true)
		}
		if retired != nil {
			r.retire(p, retired)
			q.retire(p)
		}
		again, reason := r.decide(j, p, cl, a)
		q.finish(j, again, reason)
		if retired != nil {
			return
		}
	}
}

// decide counts the attempt against its budget: whether the job runs
// again, and why it ended without a verdict of its own.
func (r *runner) decide(j *job, p *phone, cl class, a suitereport.Attempt) (bool, *suitereport.Problem) {
	switch cl {
	case classFailed:
		j.failures++
		return j.failures <= r.o.Retries, nil
	case classInfra:
		j.infra++
		j.avoid = p
		if j.infra <= r.o.InfraRetries {
			return true, nil
		}
		return false, &suitereport.Problem{Code: a.ErrorCode, Message: "infrastructure retries spent; last: " + a.Error}
	case classFatal:
		return false, &suitereport.Problem{Code: a.ErrorCode, Message: a.Error}
	}
	return false, nil
}

// attempt runs job j once on p: the case made present in the right
// version, one replay bound to it, its evidence in its own directory.
func (r *runner) attempt(ctx context.Context, p *phone, j *job) (class, suitereport.Attempt) {
	j.attempts++
	it := r.o.Items[j.item]
	a := suitereport.Attempt{Number: j.attempts, Device: p.serial, StartedAt: r.clk.Now()}
	r.progress(Event{Serial: p.serial, Case: it.Name, Attempt: a.Number, Phase: "start"})
	cl := r.run(ctx, p, j, &a)
	a.FinishedAt = r.clk.Now()
	r.progress(Event{Serial: p.serial, Case: it.Name, Attempt: a.Number, Phase: "finish", Verdict: a.Verdict, Message: a.ErrorCode})
	return cl, a
}

// run is the attempt's work; it fills a.
func (r *runner) run(ctx context.Context, p *phone, j *job, a *suitereport.Attempt) class {
	it := r.o.Items[j.item]
	fp, err := r.ensure(ctx, p, j.item)
	if err != nil {
		e := fault.From(err)
		cl := classify(ctx, e, nil)
		if cl == classFatal {
			cl = classInfra // the device refused the import or the read: this phone's
		}
		a.Verdict, a.ErrorCode, a.Error = cl.verdict(), e.Code, e.Message
		return cl
	}
	ro := r.o.Run
	ro.CaseName, ro.CaseFingerprint, ro.NoWait, ro.Overwrite = it.Name, fp, false, false
	ro.ArtifactsDir = r.evidenceDir(j, p, a.Number)
	if it.Case != nil {
		enc := casefile.EncryptedParams(it.Case)
		ro.Encrypted = &enc
	}
	rep := replay.RunReplay(ctx, p.d, ro)
	if r.o.Observe != nil {
		r.o.Observe(j.index, a.Number, rep)
	}
	cl := classify(ctx, rep.Err, rep)
	if rep.ErrorCode == fault.CodeCaseChanged {
		p.forget(j.item)
	}
	a.Verdict = cl.verdict()
	a.RunID, a.RequestID = rep.RunID, rep.RequestID
	if !rep.Finished.IsZero() {
		a.DurationMs = max(rep.Finished.Sub(rep.Started).Milliseconds(), 0)
	}
	if rep.Err != nil {
		a.ErrorCode = rep.ErrorCode
		a.Error = rep.Payload.Message()
		if a.Error == "" {
			a.Error = rep.Err.Message
		}
		if f := rep.Status.FirstFailure(); f != nil && cl == classFailed {
			if msg := rep.Redaction.Redactor().Text(f.ExceptionMessage); msg != "" {
				a.Error = msg
			}
			a.ExceptionStep, a.ExceptionStepID = f.ExceptionStep, f.ExceptionStepID
		}
	}
	if rep.Artifacts != nil {
		a.EvidenceDir = rep.Artifacts.Dir
		if cl != classPassed {
			a.Attachments = attachments(rep.Artifacts)
		}
	}
	return cl
}

// evidenceDir is ROOT/batch-<id>/<case>[/<serial>]/attempt-<n> ("" without
// evidence).
func (r *runner) evidenceDir(j *job, p *phone, n int) string {
	if r.batch == "" {
		return ""
	}
	dir := filepath.Join(r.batch, r.dirs[j.item])
	if j.bound != nil {
		dir = filepath.Join(dir, artifacts.SanitizeName(p.serial))
	}
	return filepath.Join(dir, "attempt-"+strconv.Itoa(n))
}

// attachments are a failed attempt's screenshots and logs.
func attachments(ra *replay.RunArtifacts) []string {
	out := ra.Attachments()
	if ra.Logcat != "" {
		out = append(out, ra.Logcat)
	}
	for _, f := range ra.DeviceFiles {
		if strings.HasSuffix(strings.ToLower(f.Path), ".log") {
			out = append(out, filepath.Join(ra.Dir, filepath.FromSlash(f.Path)))
		}
	}
	return out
}

// record adds the attempt to its case, to the phone's timeline and to the
// history (a row that cannot be written is a warning, never a verdict).
func (r *runner) record(p *phone, j *job, a suitereport.Attempt) {
	content := r.fps[j.item]
	if content == "" {
		content = p.cases[j.item].content
	}
	r.mu.Lock()
	c := &r.report.Cases[j.index]
	c.Attempts = append(c.Attempts, a)
	if c.Fingerprint == "" {
		c.Fingerprint = content
	}
	name := c.Name
	dev := &r.report.Devices[p.index]
	dev.Timeline = append(dev.Timeline, suitereport.Slot{Case: name, Attempt: a.Number, Verdict: a.Verdict,
		StartedAt: a.StartedAt, FinishedAt: a.FinishedAt, DurationMs: a.FinishedAt.Sub(a.StartedAt).Milliseconds()})
	r.mu.Unlock()
	if r.o.History == nil {
		return
	}
	shard := ""
	if j.bound != nil {
		shard = j.bound.serial
	}
	rec := history.Record{BatchID: r.report.BatchID, CaseName: name, CaseFingerprint: content, Serial: p.serial, Model: p.model,
		Shard: shard, Attempt: a.Number, Verdict: a.Verdict, ErrorCode: a.ErrorCode, Started: a.StartedAt, Ended: a.FinishedAt,
		Duration: time.Duration(a.DurationMs) * time.Millisecond}
	// An interrupted attempt is still recorded: the interrupt is the
	// suite's, the row is the history's.
	hctx, cancel := context.WithTimeout(context.Background(), history.DefaultBusyTimeout+5*time.Second)
	defer cancel()
	if err := r.o.History.Append(hctx, rec); err != nil {
		r.warn("history: " + errText(err))
	}
}

// warn adds a warning once.
func (r *runner) warn(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range r.report.Warnings {
		if w == msg {
			return
		}
	}
	r.report.Warnings = append(r.report.Warnings, msg)
}

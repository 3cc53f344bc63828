package replay

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/device"
)

// BatchOptions configure RunBatch.
type BatchOptions struct {
	// Run is the template of every sub-run; its CaseName is replaced and
	// its ArtifactsDir, when set, is the batch's artifacts root.
	Run               RunOptions
	Cases             []string
	ContinueOnFailure bool
}

// batchChild is one requested sub-run; Report is nil when not reached.
type batchChild struct {
	Index    int
	CaseName string
	Report   *RunReport
}

// BatchReport is the aggregate of a batch.
type BatchReport struct {
	BatchID string
	// Err is nil when every sub-run passed; otherwise the kind of the first
	// sub-run that did not fail as a business failure (an infrastructure
	// problem), or Failed.
	Err *fault.Error
	// Payload is the printed object; nil when the batch could not start
	// (Err says why).
	Payload       *BatchResult
	Children      []batchChild
	ArtifactsRoot string
	Started       time.Time
	Finished      time.Time
}

// ValidateBatch checks what needs no device: case names, the run options,
// and the artifacts root.
func ValidateBatch(o BatchOptions) error {
	if len(o.Cases) == 0 {
		return fault.Usage(fault.CodeNoCases, "name at least one case (--case or --cases-file)")
	}
	for i, c := range o.Cases {
		if strings.TrimSpace(c) == "" {
			return fault.Usagef(fault.CodeInvalidOption, "case %d has an empty name", i+1)
		}
	}
	ro := o.Run
	ro.CaseName = o.Cases[0]
	if err := ro.ValidateSubRun(o.Run.ArtifactsDir != ""); err != nil {
		return err
	}
	if o.Run.ArtifactsDir != "" {
		// The root may exist (upstream allows it) but must be a real
		// directory; each batch gets its own new batch-<id> folder.
		if err := artifacts.Check(o.Run.ArtifactsDir, artifacts.EvidenceOverwrite); err != nil {
			return err
		}
	}
	return nil
}

// RunBatch runs the cases one at a time, each a full RunReplay with its
// own requestId and runId, and aggregates them. It stops at the first
// non-pass unless ContinueOnFailure. An interrupt or a sub-run timeout
// always stops the batch: RunReplay has already cancelled exactly that
// sub-run's runId before returning, and a device in an unknown state would
// make every later verdict unattributable; the rest are skipped.
func RunBatch(ctx context.Context, d *device.Device, o BatchOptions) *BatchReport {
	b := &BatchReport{BatchID: device.NewRequestID(), Started: d.Clock().Now()}
	for i, c := range o.Cases {
		b.Children = append(b.Children, batchChild{Index: i + 1, CaseName: c})
	}
	if err := ValidateBatch(o); err != nil {
		b.Err, b.Finished = fault.From(err), d.Clock().Now()
		return b
	}
	if o.Run.ArtifactsDir != "" {
		b.ArtifactsRoot = filepath.Join(o.Run.ArtifactsDir, "batch-"+b.BatchID)
		if abs, err := filepath.Abs(b.ArtifactsRoot); err == nil {
			b.ArtifactsRoot = abs
		}
		if err := artifacts.Check(b.ArtifactsRoot, artifacts.EvidenceExclusive); err != nil {
			b.Err, b.Finished = fault.From(err), d.Clock().Now()
			return b
		}
	}
	var stopCode string
	for i := range b.Children {
		if ctx.Err() != nil {
			stopCode = fault.CodeBatchInterrupted
			break
		}
		ch := &b.Children[i]
		ro := o.Run
		ro.CaseName = ch.CaseName
		ro.NoWait = false
		ro.Overwrite = false
		if b.ArtifactsRoot != "" {
			ro.ArtifactsDir = filepath.Join(b.ArtifactsRoot, fmt.Sprintf("%03d-%s", ch.Index, artifacts.SanitizeName(ch.CaseName)))
		}
		ro.Progress = subRunProgress(o.Run.Progress, ch.Index, len(b.Children), ch.CaseName)
		ro.Progress.Report(device.Event{Phase: "run", Message: fmt.Sprintf("[%d/%d] %s", ch.Index, len(b.Children), ch.CaseName)})
		ch.Report = RunReplay(ctx, d, ro)
		if ch.Report.Err == nil {
			continue
		}
		if ctx.Err() != nil || ch.Report.Err.Kind == fault.Interrupted && isInterruptCode(ch.Report.ErrorCode) {
			stopCode = fault.CodeBatchInterrupted
			break
		}
		if ch.Report.Err.Kind == fault.Timeout {
			stopCode = fault.CodeBatchRunTimeout
			break
		}
		if !o.ContinueOnFailure {
			stopCode = fault.CodeBatchFailed
			break
		}
	}
	b.Finished = d.Clock().Now()
	b.aggregate(o, stopCode)
	return b
}

// subRunProgress places every event of one sub-run in its batch.
func subRunProgress(p device.Progress, index, total int, caseName string) device.Progress {
	if p == nil {
		return nil
	}
	return func(e device.Event) {
		e.Index, e.Total, e.Case = index, total, caseName
		p(e)
	}
}

// isInterruptCode reports the errorCode of an interrupted command.
func isInterruptCode(code string) bool { return code == fault.CodeInterrupted }

// aggregate computes the exit code and the printed object. As in
// solopi-ai, results lists the sub-runs that ran and failedRuns counts
// their failures; the requested runs the batch never reached are listed
// under skipped.
func (b *BatchReport) aggregate(o BatchOptions, stopCode string) {
	completed, failed := 0, 0
	var firstInfra *fault.Error
	r := &BatchResult{BatchID: b.BatchID, RequestedRuns: len(b.Children), ContinueOnFailure: o.ContinueOnFailure,
		Results: make([]*batchRun, 0, len(b.Children)), Skipped: []batchSkip{}, ArtifactsRoot: b.ArtifactsRoot,
		DurationMs: b.Finished.Sub(b.Started).Milliseconds()}
	for _, ch := range b.Children {
		if ch.Report == nil {
			r.Skipped = append(r.Skipped, batchSkip{Index: ch.Index, CaseName: ch.CaseName})
			continue
		}
		rep := ch.Report
		completed++
		if rep.Err != nil {
			failed++
			if rep.Err.Kind != fault.Failed && firstInfra == nil {
				firstInfra = rep.Err
			}
		}
		row := &batchRun{Index: ch.Index, CaseName: ch.CaseName, ErrorCode: rep.ErrorCode, Run: rep.Payload}
		row.RequestID, row.RunID, row.State = rep.Identities()
		r.Results = append(r.Results, row)
	}
	r.CompletedRuns = completed
	r.StoppedEarly = completed < len(b.Children)
	r.Success = completed == len(b.Children) && failed == 0
	if !r.Success {
		r.FailedRuns = &failed
		r.ErrorCode = stopCode
		if r.ErrorCode == "" {
			r.ErrorCode = fault.CodeBatchFailed
		}
		switch r.ErrorCode {
		case fault.CodeBatchInterrupted:
			r.Error = "the batch was interrupted; the active sub-run was cancelled and the rest were not run"
		case fault.CodeBatchRunTimeout:
			r.Error = "a sub-run timed out; it was cancelled and the rest were not run"
		default:
			r.Error = fmt.Sprintf("%d of %d runs did not pass (%d requested, %d skipped)", failed, completed, len(b.Children), len(r.Skipped))
		}
		kind := fault.Failed
		if firstInfra != nil {
			kind = firstInfra.Kind
		}
		b.Err = fault.New(kind, r.ErrorCode, r.Error)
	}
	b.Payload = r
}

// JUnitSuite renders the batch as one testsuite: one testcase per
// requested sub-run, the ones the batch never reached as <skipped>.
func (b *BatchReport) JUnitSuite(name string, exit func(*fault.Error) int) artifacts.JUnitSuite {
	s := artifacts.JUnitSuite{Name: name, Timestamp: b.Started,
		Properties: []artifacts.JUnitProperty{{Name: "batchId", Value: b.BatchID}}}
	for _, ch := range b.Children {
		tcName := fmt.Sprintf("%03d-%s", ch.Index, ch.CaseName)
		if ch.Report == nil {
			s.Cases = append(s.Cases, artifacts.JUnitCase{Name: tcName, Classname: "solopi." + ch.CaseName,
				Skipped: &artifacts.JUnitProblem{Message: "not run: the batch stopped before this run"}})
			continue
		}
		s.Cases = append(s.Cases, RunJUnitCase(ch.Report, tcName, exit(ch.Report.Err)))
	}
	return s
}

// RunJUnitCase renders one run as a testcase: <failure> for a failed
// replay (with the exception step), <error> for every other non-pass
// (timeout, cancel, conflicts, device errors), screenshots as
// [[ATTACHMENT|path]] lines.
func RunJUnitCase(r *RunReport, name string, exitCode int) artifacts.JUnitCase {
	tc := artifacts.JUnitCase{Name: name, Classname: "solopi." + r.CaseName, Duration: r.Finished.Sub(r.Started)}
	add := func(k, v string) {
		if v != "" {
			tc.Properties = append(tc.Properties, artifacts.JUnitProperty{Name: k, Value: v})
		}
	}
	add("runId", r.RunID)
	add("requestId", r.RequestID)
	add("state", r.State)
	add("exitCode", fmt.Sprint(exitCode))
	msg := r.Payload.Message()
	red := r.Redaction.Redactor()
	switch {
	case r.Err == nil && r.Status != nil && r.Status.Active:
		// --no-wait: the run was claimed and is still going; JUnit has no
		// "running" result and it must not read as a pass.
		tc.Skipped = &artifacts.JUnitProblem{Message: "not waited for: the run is still " + r.State}
	case r.Err == nil:
	case r.ErrorCode == fault.CodeReplayFailed:
		p := &artifacts.JUnitProblem{Type: fault.CodeReplayFailed, Message: msg}
		var text strings.Builder
		if f := r.Status.FirstFailure(); f != nil {
			exc := red.Text(f.ExceptionMessage)
			if exc != "" {
				p.Message = exc
			}
			if f.ExceptionStep != nil {
				fmt.Fprintf(&text, "exceptionStep: %d\n", *f.ExceptionStep)
			}
			if f.ExceptionStepID != "" {
				fmt.Fprintf(&text, "exceptionStepId: %s\n", f.ExceptionStepID)
			}
			if exc != "" {
				fmt.Fprintf(&text, "exceptionMessage: %s\n", exc)
			}
		}
		if msg != "" {
			fmt.Fprintf(&text, "error: %s\n", msg)
		}
		p.Text = text.String()
		tc.Failure = p
	default:
		tc.Error = &artifacts.JUnitProblem{Type: r.ErrorCode, Message: msg, Text: fmt.Sprintf("exitCode: %d\n", exitCode)}
	}
	if r.Artifacts != nil {
		tc.Attachments = r.Artifacts.Attachments()
		if r.Artifacts.Logcat != "" {
			tc.SystemOut = "logcat: " + r.Artifacts.Logcat
		}
	}
	if len(r.Steps) > 0 {
		// The step timeline, one line per step (name, status, duration).
		if tc.SystemOut != "" {
			tc.SystemOut += "\n"
		}
		tc.SystemOut += strings.TrimSuffix(junitLines(r.Steps), "\n")
	}
	return tc
}

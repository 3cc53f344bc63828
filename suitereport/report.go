// Package suitereport is the one report model of a suite of cases run
// across phones, whether a batch of this process ran it (solopi/suite) or
// a farm task: a verdict per case, every attempt with its phone, verdict,
// error code, duration and evidence, the phones (left out or retired, and
// what each ran when), the counts, the JUnit, and the outcome as one
// typed failure. Product and infrastructure stay apart: a case that
// failed is `failed`, one whose attempts broke for reasons of the phone,
// the adb link or the host is `error`, and a case that failed and then
// passed is `flaky`, never `passed`.
package suitereport

import (
	"time"

	"github.com/solopi-dev/solopi/fault"
)

// Schema identifies the report's JSON form (schemas/suite-report.schema.json).
const Schema = "solopi.suite-report/v1"

// Verdict is a case's or an attempt's verdict.
type Verdict string

// Verdicts. A case is passed, failed, flaky, error or skipped; an attempt
// is passed, failed (a product failure), error (an infrastructure failure:
// the case could not run or be judged) or cancelled (interrupted).
const (
	Passed    Verdict = "passed"
	Failed    Verdict = "failed"
	Flaky     Verdict = "flaky"
	Error     Verdict = "error"
	Skipped   Verdict = "skipped"
	Cancelled Verdict = "cancelled"
)

// ValidAttempt reports a verdict an attempt may have.
func (v Verdict) ValidAttempt() bool {
	return v == Passed || v == Failed || v == Error || v == Cancelled
}

// CaseVerdict is the rule that turns a case's attempt verdicts, in order,
// into its verdict: a pass after a failure is flaky; a pass after only
// infrastructure errors is passed (the phone broke, not the case); with
// no pass, a failure makes it failed, else an error makes it error; no
// attempt that finished (none, or only cancelled ones) is skipped.
func CaseVerdict(attempts []Verdict) Verdict {
	var failed, errored bool
	for _, a := range attempts {
		switch a {
		case Passed:
			if failed {
				return Flaky
			}
			return Passed
		case Failed:
			failed = true
		case Error:
			errored = true
		}
	}
	switch {
	case failed:
		return Failed
	case errored:
		return Error
	}
	return Skipped
}

// Report is one suite run.
type Report struct {
	Schema  string `json:"schema"`
	BatchID string `json:"batchId"`
	// Name names the suite (the JUnit root).
	Name       string    `json:"name"`
	StartedAt  time.Time `json:"startedAt"`
	FinishedAt time.Time `json:"finishedAt"`
	DurationMs int64     `json:"durationMs"`
	Options    Options   `json:"options"`
	// Interrupted: the run was cancelled (Ctrl-C); the running attempts
	// were cancelled, the finished ones kept, the rest skipped.
	Interrupted bool     `json:"interrupted"`
	Devices     []Device `json:"devices"`
	Cases       []Case   `json:"cases"`
	Counts      Counts   `json:"counts"`
	// ArtifactsDir is the batch's evidence root (ROOT/batch-<id>).
	ArtifactsDir string `json:"artifactsDir,omitempty"`
	// Warnings are problems beside the verdicts (a history row that could
	// not be written); they never change one.
	Warnings []string `json:"warnings"`
}

// Options are the settings that shaped the run.
type Options struct {
	Retries      int  `json:"retries"`
	InfraRetries int  `json:"infraRetries"`
	ShardAll     bool `json:"shardAll"`
	FailOnFlaky  bool `json:"failOnFlaky"`
}

// Problem is an error code and its text.
type Problem struct {
	Code    string `json:"errorCode"`
	Message string `json:"error"`
}

func (p *Problem) String() string {
	if p == nil {
		return ""
	}
	return p.Code + ": " + p.Message
}

// Device is one phone of the suite.
type Device struct {
	Serial         string `json:"serial"`
	Model          string `json:"model,omitempty"`
	AndroidVersion string `json:"androidVersion,omitempty"`
	// Usable: the phone passed its checks and took part.
	Usable bool `json:"usable"`
	// LeftOut says why a phone that is not usable was left out.
	LeftOut *Problem `json:"leftOut,omitempty"`
	// Retired says why a phone stopped taking cases mid-suite (it dropped).
	Retired *Problem `json:"retired,omitempty"`
	// Timeline is what ran on the phone, in order.
	Timeline []Slot `json:"timeline"`
}

// Slot is one attempt on a phone's timeline.
type Slot struct {
	Case       string    `json:"caseName"`
	Attempt    int       `json:"attempt"`
	Verdict    Verdict   `json:"verdict"`
	StartedAt  time.Time `json:"startedAt"`
	FinishedAt time.Time `json:"finishedAt"`
	DurationMs int64     `json:"durationMs"`
}

// Case is one case of the suite (with ShardAll: one case on one phone).
type Case struct {
	Name string `json:"caseName"`
	// Fingerprint is the case's content fingerprint (the same on every
	// phone and for every import of the same case file).
	Fingerprint string `json:"caseFingerprint,omitempty"`
	// File is the local case file it came from ("" for a case named only).
	File string `json:"file,omitempty"`
	// Device is the phone a ShardAll case is bound to ("" when any phone
	// may run it).
	Device  string  `json:"device,omitempty"`
	Verdict Verdict `json:"verdict"`
	// Reason says why a case is error or skipped.
	Reason   *Problem  `json:"reason,omitempty"`
	Attempts []Attempt `json:"attempts"`
}

// Attempt is one run of a case on one phone.
type Attempt struct {
	Number  int     `json:"attempt"`
	Device  string  `json:"device"`
	Verdict Verdict `json:"verdict"`
	// ErrorCode and Error say why an attempt did not pass.
	ErrorCode string `json:"errorCode,omitempty"`
	Error     string `json:"error,omitempty"`
	// ExceptionStep and ExceptionStepID locate a failed step.
	ExceptionStep   *int64    `json:"exceptionStep,omitempty"`
	ExceptionStepID string    `json:"exceptionStepId,omitempty"`
	StartedAt       time.Time `json:"startedAt"`
	FinishedAt      time.Time `json:"finishedAt"`
	// DurationMs is the run's own duration on the phone's clock.
	DurationMs int64  `json:"durationMs"`
	RunID      string `json:"runId,omitempty"`
	RequestID  string `json:"requestId,omitempty"`
	// EvidenceDir is the attempt's own evidence directory
	// (…/<case>/attempt-<n>/).
	EvidenceDir string `json:"evidenceDir,omitempty"`
	// Attachments are the failure screenshot and the logs (absolute paths).
	Attachments []string `json:"attachments,omitempty"`
}

// Counts are the cases by verdict. A flaky case is counted as flaky only:
// passed never includes it.
type Counts struct {
	Cases    int `json:"cases"`
	Passed   int `json:"passed"`
	Failed   int `json:"failed"`
	Flaky    int `json:"flaky"`
	Error    int `json:"error"`
	Skipped  int `json:"skipped"`
	Attempts int `json:"attempts"`
}

// Finish derives every case's verdict from its attempts (CaseVerdict),
// the counts and the duration. A case without a finished attempt is
// skipped, or error when the runner set that (no phone could run it);
// either keeps its reason.
func (r *Report) Finish(finished time.Time) {
	r.Schema = Schema
	r.FinishedAt = finished
	r.DurationMs = finished.Sub(r.StartedAt).Milliseconds()
	r.Counts = Counts{}
	for i := range r.Cases {
		c := &r.Cases[i]
		vs := make([]Verdict, len(c.Attempts))
		for j, a := range c.Attempts {
			vs[j] = a.Verdict
		}
		// A case the runner judged error before any attempt finished (no
		// phone could run it) stays error.
		if v := CaseVerdict(vs); v != Skipped || c.Verdict != Error {
			c.Verdict = v
		}
		if c.Verdict != Error && c.Verdict != Skipped {
			c.Reason = nil
		}
		if c.Attempts == nil {
			c.Attempts = []Attempt{}
		}
		r.Counts.Cases++
		r.Counts.Attempts += len(c.Attempts)
		switch c.Verdict {
		case Passed:
			r.Counts.Passed++
		case Failed:
			r.Counts.Failed++
		case Flaky:
			r.Counts.Flaky++
		case Error:
			r.Counts.Error++
		default:
			r.Counts.Skipped++
		}
	}
	for i := range r.Devices {
		if r.Devices[i].Timeline == nil {
			r.Devices[i].Timeline = []Slot{}
		}
	}
	if r.Devices == nil {
		r.Devices = []Device{}
	}
	if r.Cases == nil {
		r.Cases = []Case{}
	}
	if r.Warnings == nil {
		r.Warnings = []string{}
	}
}

// Failure is the suite's outcome as one typed failure, nil when every case
// passed or was flaky (unless FailOnFlaky). An interrupt comes first
// (exit 130); then a failed case, or with FailOnFlaky a flaky one (Failed,
// exit 2): a failure is known whatever else happened; then a case that
// could not run or be judged after its infrastructure retries, or was not
// reached (Transport, exit 4).
func (r *Report) Failure() *fault.Error {
	c := r.Counts
	var e *fault.Error
	switch {
	case r.Interrupted:
		e = fault.Newf(fault.Interrupted, fault.CodeBatchInterrupted, "the suite was interrupted: the running cases were cancelled; %d of %d cases finished", c.Cases-c.Skipped, c.Cases)
	case c.Failed > 0:
		e = fault.Newf(fault.Failed, fault.CodeBatchFailed, "%d of %d cases failed", c.Failed, c.Cases)
	case r.Options.FailOnFlaky && c.Flaky > 0:
		e = fault.Newf(fault.Failed, fault.CodeBatchFlaky, "%d of %d cases were flaky (failed, then passed) and flaky cases fail this suite", c.Flaky, c.Cases)
	case c.Error > 0 || c.Skipped > 0:
		e = fault.Newf(fault.Transport, fault.CodeBatchInfrastructureFailed, "%d of %d cases could not run for infrastructure reasons", c.Error+c.Skipped, c.Cases)
	default:
		return nil
	}
	return e.With("counts", c)
}

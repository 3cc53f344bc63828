package replay

import (
	"maps"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
)

// RunResult is the object a run prints. The device's replay status object
// (while it still describes the run) and the failure's fields
// (fault.Error.Fields) are echoed as they are, in device; every key the
// host adds is a field. Everything in it is redacted with the case's
// secrets when it is built; the command's own fields (CaseFile, JUnit and
// the artifacts' report) quote no case text.
type RunResult struct {
	device  map[string]any
	message string // the printed error, redacted; empty when the run passed

	Artifacts *artifactsReport `json:"artifacts,omitempty"`
	AutoStart *autoStartReport `json:"autoStart,omitempty"`
	Cancel    *cancelReport    `json:"cancel,omitempty"`
	// CaseFile is what run --file did to put the case on the device (set
	// by the command).
	CaseFile               any                     `json:"caseFile,omitempty"`
	CaseFingerprint        string                  `json:"caseFingerprint,omitempty"`
	CaseID                 int64                   `json:"caseId,omitempty"`
	CaseName               string                  `json:"caseName"`
	ConfirmedHighRiskSteps []casefile.HighRiskStep `json:"confirmedHighRiskSteps"`
	// JUnit is the JUnit report's path, JUnitError why it could not be
	// written (set by the command).
	JUnit      string         `json:"junit,omitempty"`
	JUnitError string         `json:"junitError,omitempty"`
	LastStatus map[string]any `json:"lastStatus,omitempty"`
	Perf       *perfReport    `json:"perf,omitempty"`
	Redaction  *redaction     `json:"redaction,omitempty"`
	RequestID  string         `json:"requestId,omitempty"`
	RunID      string         `json:"runId,omitempty"`
	// Steps is a pointer so that a log with no step prints "steps":[] and
	// a run without a timeline prints no key, as before.
	Steps   *[]Step      `json:"steps,omitempty"`
	Success bool         `json:"success"`
	Video   *videoReport `json:"video,omitempty"`
}

// MarshalJSON lays the typed fields over the echoed device object, with
// the keys sorted as the merged map printed them.
func (r RunResult) MarshalJSON() ([]byte, error) {
	type fields RunResult // the typed keys, without this method
	return canonjson.Overlay{Base: r.device, Fields: fields(r)}.MarshalJSON()
}

// Message is the error the run prints (redacted), empty when it passed.
func (r *RunResult) Message() string { return r.message }

// Fail turns the result into a failure after the run: a passing run whose
// JUnit report could not be written. Its fields replace the device's, as
// the run's own failure would have.
func (r *RunResult) Fail(e *fault.Error) {
	r.device = maps.Clone(r.device)
	if r.device == nil {
		r.device = map[string]any{}
	}
	maps.Copy(r.device, e.Fields())
	r.Success, r.message = false, e.Message
}

// result builds the printed object: the status fields as the device sent
// them, success per our verdict, and what the command added, with the
// case's secrets redacted. A status that no longer describes the run (the
// run was lost, replaced or unreachable) is not spread at the top level,
// where its state would read as current: it is lastStatus, which a
// timeout carries too (solopi-ai's field).
func (rs *runState) result(e *fault.Error) *RunResult {
	rep, red := rs.rep, rs.redactor()
	device := map[string]any{}
	current := rep.Status != nil && (e == nil || rep.Status.Terminal || e.Kind == fault.Timeout || e.Kind == fault.Interrupted)
	if current {
		maps.Copy(device, rep.Status.Object)
	}
	r := &RunResult{Success: e == nil}
	if e != nil {
		maps.Copy(device, e.Fields())
		if rep.Status != nil && rep.Status.Error != "" && (e.Code == fault.CodeReplayFailed) {
			device["error"] = rep.Status.Error
		}
		if rep.Status != nil && (!current || e.Kind == fault.Timeout) {
			r.LastStatus, _ = red.Value(rep.Status.Object).(map[string]any)
		}
	}
	r.device, _ = red.Value(device).(map[string]any)
	r.message, _ = r.device["error"].(string)
	r.CaseName, r.RequestID, r.RunID = red.Text(rep.CaseName), red.Text(rep.RequestID), red.Text(rep.RunID)
	if rs.caseInfo != nil {
		r.CaseID, r.CaseFingerprint = rs.caseInfo.ID, red.Text(rs.caseInfo.Fingerprint)
	}
	r.ConfirmedHighRiskSteps = rs.highRisk
	if r.ConfirmedHighRiskSteps == nil {
		r.ConfirmedHighRiskSteps = []casefile.HighRiskStep{}
	}
	if rs.autoStart != nil {
		r.AutoStart = rs.autoStart.report()
	}
	if rs.cancelInfo != nil {
		r.Cancel = rs.cancelInfo.redacted(red)
	}
	if rep.Artifacts != nil {
		r.Artifacts = rep.Artifacts.report(red)
	}
	if rs.video != nil {
		r.Video = newVideoReport(rs.video, red)
	}
	if rs.perf != nil {
		r.Perf = rs.perf.report(red)
	}
	if rep.Steps != nil {
		r.Steps = &rep.Steps
	}
	r.Redaction = rep.Redaction
	return r
}

// redactTexts passes each string through the redactor.
func redactTexts(red *redact.Redactor, ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = red.Text(s)
	}
	return out
}

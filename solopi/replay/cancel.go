package replay

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/redact"
	"github.com/solopi-dev/solopi/solopi/device"
)

// cancelResult is the evidence of a targeted cancel.
type cancelResult struct {
	Attempted bool
	Sent      bool
	Success   bool
	Reason    string
	Status    *replayStatus
	Err       error
}

// report is the cancel evidence the run prints.
func (c cancelResult) report() *cancelReport {
	r := &cancelReport{Attempted: c.Attempted, Sent: &c.Sent, Success: &c.Success, Reason: c.Reason}
	if c.Status != nil {
		r.FinalState = c.Status.State
	}
	if c.Err != nil {
		r.Error = errText(c.Err)
	}
	return r
}

// cancelReport is the run's "cancel" object. Sent and Success are absent
// when no cancel was attempted (the start was never acknowledged).
type cancelReport struct {
	Attempted  bool   `json:"attempted"`
	Error      string `json:"error,omitempty"`
	FinalState string `json:"finalState,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Sent       *bool  `json:"sent,omitempty"`
	Success    *bool  `json:"success,omitempty"`
}

// redacted is the report with the case's secrets hidden: the error quotes
// the device.
func (c *cancelReport) redacted(red *redact.Redactor) *cancelReport {
	out := *c
	out.Error, out.FinalState, out.Reason = red.Text(c.Error), red.Text(c.FinalState), red.Text(c.Reason)
	return &out
}

// cancelOwnRun cancels runId if, and only if, the device's current run is
// exactly that runId (and requestId, when given) and still running; then it
// waits up to wait for a terminal state. A run that is already terminal,
// or a different run, is left alone.
func cancelOwnRun(ctx context.Context, d *device.Device, runID, requestID string, wait time.Duration) cancelResult {
	res := cancelResult{Attempted: true}
	st, err := FetchReplayStatus(ctx, d)
	if err != nil {
		res.Err, res.Reason = err, "status_unavailable"
		return res
	}
	res.Status = st
	if st.RunID != runID || (requestID != "" && st.RequestID != requestID) {
		res.Reason = "run_not_current"
		return res
	}
	if st.Terminal {
		res.Reason = "already_terminal"
		res.Success = st.State == string(protocol.ReplayCancelled)
		return res
	}
	if st.State == string(protocol.ReplayRunning) {
		if err := d.Mutate(ctx, protocol.ActionHarness, device.P(protocol.ParamType, protocol.HarnessCancel, protocol.ParamRunID, runID)); err != nil {
			res.Err, res.Reason = err, "mutation_failed"
			return res
		}
		res.Sent = true
	}
	err = device.PollUntil(ctx, device.PollOptions{Clock: d.Clock(), Timeout: wait, Interval: 250 * time.Millisecond, Initial: 50 * time.Millisecond}, func(ctx context.Context) (bool, error) {
		s, err := FetchReplayStatus(ctx, d)
		if err != nil {
			return false, err
		}
		if s.RunID != runID {
			res.Reason = "run_replaced"
			return true, nil
		}
		res.Status = s
		return s.Terminal, nil
	})
	switch {
	case errors.Is(err, device.ErrPollTimeout):
		res.Reason = "cancel_not_confirmed"
	case err != nil:
		res.Err, res.Reason = err, "status_unavailable"
	case res.Reason == "":
		res.Success = res.Status.State == string(protocol.ReplayCancelled)
		if !res.Success {
			res.Reason = "finished_before_cancel"
		}
	}
	return res
}

func errText(err error) string {
	var e *fault.Error
	if errors.As(err, &e) {
		return e.Code + ": " + e.Message
	}
	return err.Error()
}

// asError converts a run error to *fault.Error (nil stays nil).
func asError(err error) *fault.Error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) && !isOutcome(err) {
		return fault.Wrap(fault.Interrupted, fault.CodeInterrupted, "the command was interrupted", err)
	}
	return fault.From(err)
}

func isOutcome(err error) bool {
	var e *fault.Error
	return errors.As(err, &e)
}

// caseError maps a casefile policy or normalisation error to exit 3.
func caseError(err error) *fault.Error {
	if e := CaseFileError(err); e != nil {
		return e
	}
	return fault.Wrap(fault.Invalid, fault.CodeInvalidCase, err.Error(), err)
}

// CaseFileError maps the *casefile.Error in err's chain to exit 3 with its
// stable code, step position, field and details; nil when there is none.
func CaseFileError(err error) *fault.Error {
	var ce *casefile.Error
	if !errors.As(err, &ce) {
		return nil
	}
	e := fault.Wrap(fault.Invalid, ce.Code, ce.Message, err)
	if ce.StepIndex >= 0 {
		e.With("stepIndex", ce.StepIndex)
	}
	if ce.StepID != "" {
		e.With("stepId", ce.StepID)
	}
	if ce.Field != "" {
		e.With("field", ce.Field)
	}
	for k, v := range ce.Details {
		e.With(k, v)
	}
	return e
}

// CancelRun is the `cancel --run-id` flow: the device's current run must be
// active with exactly runID (else exit 2 with activeRun and no mutation);
// then cancel it and poll until terminal: cancelled 0, passed/failed 2,
// another runId 2, timeout 124. A stale runId never reaches the device.
// A run that is already cancelled is answered with its snapshot and
// idempotent:true, exit 0: a cleanup step that runs twice must not fail.
func CancelRun(ctx context.Context, d *device.Device, runID string, timeout, interval time.Duration) (*CancelResult, error) {
	if strings.TrimSpace(runID) == "" {
		return nil, fault.Usage(fault.CodeInvalidOption, "--run-id is required")
	}
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	if interval <= 0 {
		interval = 500 * time.Millisecond
	}
	st, err := FetchReplayStatus(ctx, d)
	if err != nil {
		return nil, err
	}
	if st.Active && st.RunID == "" {
		return nil, device.ContractError("the device reports an active run without a runId", st.Object)
	}
	if !st.Active && st.RunID == runID && st.State == string(protocol.ReplayCancelled) {
		return &CancelResult{device: st.Object, Success: true, Idempotent: true}, nil
	}
	if !st.Active {
		return nil, fault.New(fault.Failed, fault.CodeRunNotActive, "there is no active run to cancel").
			With("expectedRunId", runID).With("activeRun", st.Object)
	}
	if st.RunID != runID {
		return nil, fault.New(fault.Failed, fault.CodeRunIDMismatch, "the active run is not the given runId; nothing was cancelled").
			With("expectedRunId", runID).With("activeRun", st.Object)
	}
	sent := false
	if st.State == string(protocol.ReplayRunning) {
		if err := d.Mutate(ctx, protocol.ActionHarness, device.P(protocol.ParamType, protocol.HarnessCancel, protocol.ParamRunID, runID)); err != nil {
			return nil, err
		}
		sent = true
	}
	last := st
	err = device.PollUntil(ctx, device.PollOptions{Clock: d.Clock(), Timeout: timeout, Interval: interval}, func(ctx context.Context) (bool, error) {
		s, err := FetchReplayStatus(ctx, d)
		if err != nil {
			return false, err
		}
		if s.RunID != runID {
			return false, fault.New(fault.Failed, fault.CodeRunReplaced, "another run replaced the run being cancelled").
				With("runId", runID).With("activeRun", s.Object)
		}
		last = s
		return s.Terminal, nil
	})
	if errors.Is(err, device.ErrPollTimeout) {
		return nil, fault.New(fault.Timeout, fault.CodeCancelTimeout, "the run did not reach a terminal state in time after the cancel").
			With("runId", runID).With("cancelSent", sent).With("lastStatus", last.Object)
	}
	if err != nil {
		return nil, err
	}
	if last.State != string(protocol.ReplayCancelled) {
		e := fault.Newf(fault.Failed, fault.CodeRunFinishedBeforeCancel, "the run finished as %s before the cancel took effect", last.State)
		for k, v := range last.Object {
			e.With(k, v)
		}
		return nil, e.With("cancelSent", sent)
	}
	return &CancelResult{device: last.Object, CancelSent: sent, Success: true}, nil
}

// LatestResult is the `result [--run-id]` flow over harness?type=result.
// The object is printed whatever the verdict; failure is nil when the run
// passed (with results), of kind Failed for a non-terminal or non-passed
// run and Transport for passed without results. A mismatching runId or no
// run is an error.
func LatestResult(ctx context.Context, d *device.Device, runID string) (out *ResultSnapshot, failure *fault.Error, err error) {
	st, err := replayLatest(ctx, d)
	if err != nil {
		return nil, nil, err
	}
	if runID != "" && st.RunID != runID {
		return nil, nil, fault.New(fault.Failed, fault.CodeRunIDMismatch, "the latest run is not the given runId").
			With("expectedRunId", runID).With("latestRun", st.Object)
	}
	if st.RunID == "" || st.State == string(protocol.ReplayIdle) {
		// The idle snapshot's own fields (state, active, terminal,
		// results) stay at the top level, where solopi-ai prints them.
		e := fault.New(fault.Failed, fault.CodeNoRun, "SoloPi has no replay run to report").With("latestRun", st.Object)
		for k, v := range st.Object {
			if k != "success" && k != "error" && k != "errorCode" {
				e.With(k, v)
			}
		}
		return nil, nil, e
	}
	out = &ResultSnapshot{device: st.Object}
	switch {
	case !st.Terminal:
		out.ErrorCode, out.Error = fault.CodeRunNotTerminal, "the run is still "+st.State
		return out, out.failure(fault.Failed), nil
	case st.State == string(protocol.ReplayPassed) && len(st.Results) == 0:
		out.ErrorCode, out.Error = fault.CodeEmptyResults, "the run reports passed without any replay result; treated as a protocol anomaly"
		return out, out.failure(fault.Transport), nil
	case st.State == string(protocol.ReplayPassed):
		out.Success = true
		return out, nil, nil
	case st.State == string(protocol.ReplayFailed):
		// The device's own error, when it gave one, is the message.
		out.ErrorCode = fault.CodeReplayFailed
		if st.Error == "" {
			out.Error = "the replay failed"
		}
		return out, out.failure(fault.Failed), nil
	}
	out.ErrorCode, out.Error = fault.CodeReplayCancelled, "the replay was cancelled"
	return out, out.failure(fault.Failed), nil
}

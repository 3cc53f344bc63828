package replay

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/readiness"
)

// Error codes of the replay commands (run, status, result, cancel).
const (
	CodeCaseUnbound         = "case_snapshot_unbound"
	CodePluginsUnavailable  = "plugins_unavailable"
	CodeDeviceNotReady      = "device_not_ready"
	CodeReplayActive        = "replay_active"
	CodeOwnershipConflict   = "ownership_conflict"
	CodeRunIdentityMismatch = "run_identity_mismatch"
	CodeAckTimeout          = "ack_timeout"
	CodeRunTimeout          = "run_timeout"
	CodeRunReplaced         = "run_replaced"
	CodeReplayFailed        = "replay_failed"
	CodeReplayCancelled     = "replay_cancelled"
	CodeEmptyResults        = "empty_results"
	CodeRunIDMismatch       = "run_id_mismatch"
	CodeNoRun               = "no_run"
	CodeRunNotTerminal      = "run_not_terminal"
	CodeRunNotActive        = "run_not_active"
	CodeCancelTooLate       = "run_finished_before_cancel"
	CodeCancelTimeout       = "cancel_timeout"
	CodeAutoStartNotSet     = "auto_start_not_confirmed"
	CodeInvalidRunOption    = "invalid_option"
	CodeInvalidStatus       = "invalid_replay_status"
)

// KeyReplayAutoStart is the SoloPi setting that lets a replay begin
// without a human tapping start (wire contract §5.2).
const KeyReplayAutoStart = "KEY_REPLAY_AUTO_START"

// fingerprintRe is the caseFingerprint form (64 lowercase hex).
var fingerprintRe = regexp.MustCompile(`^[0-9a-f]{64}$`)

// ReplayResult is one element of a snapshot's results[].
type ReplayResult struct {
	CaseName         string            `json:"caseName,omitempty"`
	Status           string            `json:"status"`
	ExceptionMessage string            `json:"exceptionMessage,omitempty"`
	ExceptionStep    *int64            `json:"exceptionStep,omitempty"`
	ExceptionStepID  string            `json:"exceptionStepId,omitempty"`
	LogFile          string            `json:"logFile,omitempty"`
	ScreenshotFiles  map[string]string `json:"screenshotFiles,omitempty"`
}

// ReplayStatus is one harness?type=status (or result) snapshot, checked
// against the contract: a known state whose active/terminal flags agree.
type ReplayStatus struct {
	RunID     string
	RequestID string
	CaseName  string
	State     string
	Active    bool
	Terminal  bool
	Error     string
	StartedAt int64
	// FinishedAt is 0 while the run is active.
	FinishedAt int64
	Results    []ReplayResult
	// Object is the device answer exactly as received (integers exact).
	Object map[string]any
}

// ParseReplayStatus checks and reads a snapshot object.
func ParseReplayStatus(m map[string]any) (*ReplayStatus, error) {
	if ok, _ := device.BoolField(m, "success"); !ok {
		return nil, device.ContractError("the replay status answer has no success:true", m)
	}
	st := &ReplayStatus{
		RunID: device.Str(m, "runId"), RequestID: device.Str(m, "requestId"), CaseName: device.Str(m, "caseName"),
		State: device.Str(m, "state"), Error: device.Str(m, "error"), Object: m,
	}
	st.StartedAt, _ = device.IntField(m, "startedAt")
	st.FinishedAt, _ = device.IntField(m, "finishedAt")
	mach := protocol.Replay()
	s := protocol.State(st.State)
	if !mach.Has(s) {
		return nil, device.Recode(device.ContractError(fmt.Sprintf("the replay status has an unknown state %q", st.State), m), CodeInvalidStatus)
	}
	active, aok := device.BoolField(m, "active")
	terminal, tok := device.BoolField(m, "terminal")
	if !aok || !tok || active != mach.IsLive(s) || terminal != mach.IsTerminal(s) {
		return nil, device.Recode(device.ContractError("the replay status flags active/terminal disagree with its state", m), CodeInvalidStatus)
	}
	st.Active, st.Terminal = active, terminal
	if s != protocol.ReplayIdle && st.RunID == "" {
		return nil, device.Recode(device.ContractError("the replay status has a state but no runId", m), CodeInvalidStatus)
	}
	raw, has := m["results"]
	if has && raw != nil {
		list, ok := raw.([]any)
		if !ok {
			return nil, device.Recode(device.ContractError("the replay status results is not a list", m), CodeInvalidStatus)
		}
		for i, x := range list {
			o, ok := x.(map[string]any)
			if !ok {
				return nil, device.Recode(device.ContractError(fmt.Sprintf("results[%d] is not an object", i), m), CodeInvalidStatus)
			}
			r := ReplayResult{CaseName: device.Str(o, "caseName"), Status: device.Str(o, "status"), ExceptionMessage: device.Str(o, "exceptionMessage"),
				ExceptionStepID: device.Str(o, "exceptionStepId"), LogFile: device.Str(o, "logFile")}
			if r.Status != "passed" && r.Status != "failed" {
				return nil, device.Recode(device.ContractError(fmt.Sprintf("results[%d].status %q is neither passed nor failed", i, r.Status), m), CodeInvalidStatus)
			}
			if n, ok := device.IntField(o, "exceptionStep"); ok {
				r.ExceptionStep = &n
			}
			if sf, ok := o["screenshotFiles"].(map[string]any); ok {
				r.ScreenshotFiles = map[string]string{}
				for k, v := range sf {
					if s, ok := v.(string); ok {
						r.ScreenshotFiles[k] = s
					}
				}
			}
			st.Results = append(st.Results, r)
		}
	}
	return st, nil
}

// ReplayStatus queries harness?type=status.
func FetchReplayStatus(ctx context.Context, d *device.Device) (*ReplayStatus, error) {
	return replaySnapshot(ctx, d, protocol.HarnessStatus)
}

// ReplayLatest queries harness?type=result (the same snapshot).
func ReplayLatest(ctx context.Context, d *device.Device) (*ReplayStatus, error) {
	return replaySnapshot(ctx, d, protocol.HarnessResult)
}

func replaySnapshot(ctx context.Context, d *device.Device, typ string) (*ReplayStatus, error) {
	m, err := d.QueryObject(ctx, protocol.ActionHarness, device.P(protocol.ParamType, typ))
	if err != nil {
		return nil, err
	}
	return ParseReplayStatus(m)
}

// FirstFailure returns the first failed result, if any.
func (s *ReplayStatus) FirstFailure() *ReplayResult {
	if s == nil {
		return nil
	}
	for i := range s.Results {
		if s.Results[i].Status == "failed" {
			return &s.Results[i]
		}
	}
	return nil
}

// RunOptions configure RunReplay (the `run` command).
type RunOptions struct {
	CaseName      string
	TargetPackage string
	// RestartApp is nil to keep the device's KEY_RESTART_APP_ON_PLAY.
	RestartApp *bool
	AckTimeout time.Duration // default 15 s
	RunTimeout time.Duration // default 600 s
	// PollInterval is the longest pause between status polls (default
	// 1 s). A started run is polled every replayPoll (50 ms) when that is
	// shorter, so its terminal state is reported within tens of
	// milliseconds of the device publishing it.
	PollInterval    time.Duration
	NoWait          bool
	NoAutoStart     bool
	ConfirmHighRisk bool
	// ArtifactsDir, when set, receives the evidence (checked before any
	// device contact).
	ArtifactsDir string
	Overwrite    bool
	// CancelWait bounds the wait for `cancelled` after a timeout or an
	// interrupt (default 5 s).
	CancelWait time.Duration
	// LogcatLines bounds logcat.txt (default 5000 lines, 8 MiB).
	LogcatLines int
	Progress    device.Progress
}

func (o *RunOptions) defaults() {
	if o.AckTimeout <= 0 {
		o.AckTimeout = 15 * time.Second
	}
	if o.RunTimeout <= 0 {
		o.RunTimeout = 600 * time.Second
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.CancelWait <= 0 {
		o.CancelWait = 5 * time.Second
	}
	if o.LogcatLines <= 0 {
		o.LogcatLines = 5000
	}
}

// Validate checks the options that need no device.
func (o *RunOptions) Validate() error {
	if strings.TrimSpace(o.CaseName) == "" {
		return fault.Usage(CodeInvalidRunOption, "--case must name a SoloPi case")
	}
	if o.TargetPackage != "" && !protocol.ValidPackageName(o.TargetPackage) {
		return fault.Usage(CodeInvalidRunOption, "--target-package must look like com.example.app")
	}
	if o.ArtifactsDir != "" {
		if err := artifacts.Check(o.ArtifactsDir, o.Overwrite); err != nil {
			return err
		}
	}
	return nil
}

// RunReport is the outcome of one replay run: the printed object, the
// failure it reports (nil when the run passed, or is active with --no-wait)
// and the identities it is bound to. RunReplay always returns one, so that
// run-batch can aggregate every child whatever happened to it.
type RunReport struct {
	Err       *fault.Error
	Payload   map[string]any
	CaseName  string
	RequestID string
	RunID     string
	State     string
	ErrorCode string
	Status    *ReplayStatus
	Started   time.Time
	Finished  time.Time
	Artifacts *RunArtifacts
}

// replayPoll is the fixed pause between status polls of a started run. A
// status query is a small local HTTP request on the device, and polling
// at this rate keeps the delay between the device's terminal state and the
// printed result near half of it.
const replayPoll = 50 * time.Millisecond

// statusPoll is the poll of our run's status: a fixed short interval,
// never longer than --poll-interval.
func (rs *runState) statusPoll(budget time.Duration) device.PollOptions {
	iv := min(replayPoll, rs.o.PollInterval)
	return device.PollOptions{Clock: rs.d.Clock(), Timeout: budget, Interval: iv, Initial: iv}
}

// runState carries one run through its phases.
type runState struct {
	d          *device.Device
	o          RunOptions
	rep        *RunReport
	caseInfo   *DeviceCase
	highRisk   []casefile.HighRiskStep
	autoStart  *autoStartChange
	cancelInfo map[string]any
}

// RunReplay runs one case the safe way: preflight the exact case, make the
// device ready (auto-start restored afterwards), start with a fresh
// requestId, claim only our run, wait for its terminal state, and on
// timeout or interrupt cancel exactly our runId before collecting evidence.
func RunReplay(ctx context.Context, d *device.Device, o RunOptions) *RunReport {
	o.defaults()
	rs := &runState{d: d, o: o, rep: &RunReport{CaseName: o.CaseName, Started: d.Clock().Now()}}
	err := rs.run(ctx)
	rs.finish(ctx, err)
	return rs.rep
}

func (rs *runState) run(ctx context.Context) error {
	d, o := rs.d, rs.o
	if err := o.Validate(); err != nil {
		return err
	}
	// 1. The exact case, bound to its id and fingerprint.
	o.Progress.Report(device.Event{Phase: "preflight", Message: fmt.Sprintf("preflight: reading case %q", o.CaseName), Case: o.CaseName})
	ci, err := GetCase(ctx, d, o.CaseName)
	if err != nil {
		return err
	}
	rs.caseInfo = ci
	// 2. Local authoring policy on the device copy.
	_, hr, err := casefile.Normalize(ci.Case, casefile.NormalizeOptions{ConfirmHighRisk: o.ConfirmHighRisk})
	if err != nil {
		return caseError(err)
	}
	rs.highRisk = hr
	// 3. Plugins the steps need must be loaded.
	if err := checkPlugins(ctx, d, ci.Case); err != nil {
		return err
	}
	// 4. Auto-start, put back as it was when the command ends.
	if !o.NoAutoStart {
		ch, err := ensureAutoStart(ctx, d, o.AckTimeout)
		rs.autoStart = ch
		if err != nil {
			return err
		}
	}
	// 5. Health: permissions and auto-start.
	if err := checkReplayHealth(ctx, d); err != nil {
		return err
	}
	// 6. Nothing may be running.
	before, err := FetchReplayStatus(ctx, d)
	if err != nil {
		return err
	}
	if before.Active {
		return fault.New(fault.Failed, CodeReplayActive, "a replay is already running on the device").
			With("activeRun", before.Object)
	}
	// 7. Start.
	reqID := device.NewReplayRequestID()
	rs.rep.RequestID = reqID
	p := device.P(protocol.ParamReplayMode, protocol.ReplayModeNormal,
		protocol.ParamCaseName, o.CaseName,
		protocol.ParamRequestID, reqID,
		protocol.ParamCaseID, strconv.FormatInt(ci.ID, 10),
		protocol.ParamCaseFingerprint, ci.Fingerprint)
	if o.TargetPackage != "" {
		p = p.Add(protocol.ParamTargetApp, o.TargetPackage)
	}
	if o.RestartApp != nil {
		p = p.Add(protocol.ParamRestartApp, strconv.FormatBool(*o.RestartApp))
	}
	o.Progress.Report(device.Event{Phase: "start", Message: "starting replay " + reqID, Case: o.CaseName})
	if err := d.Mutate(ctx, protocol.ActionReplay, p); err != nil {
		return err
	}
	// 8. Acknowledgement: claim only a status carrying our requestId.
	st, err := rs.awaitClaim(ctx, before.RunID)
	if err != nil {
		return err
	}
	rs.rep.RunID = st.RunID
	rs.rep.Status = st
	rs.rep.State = st.State
	o.Progress.Report(device.Event{Phase: "claimed", Message: fmt.Sprintf("claimed run %s (%s)", st.RunID, st.State), Case: o.CaseName, RunID: st.RunID, State: st.State})
	if o.NoWait && !st.Terminal {
		return nil
	}
	// 9. Terminal state of exactly our run.
	if !st.Terminal {
		st, err = rs.awaitTerminal(ctx)
		if err != nil {
			return err
		}
	}
	rs.rep.Status = st
	rs.rep.State = st.State
	return nil
}

// awaitClaim polls until the status carries our requestId.
func (rs *runState) awaitClaim(ctx context.Context, previousRunID string) (*ReplayStatus, error) {
	reqID := rs.rep.RequestID
	var claimed, last, other *ReplayStatus
	err := device.PollUntil(ctx, rs.statusPoll(rs.o.AckTimeout), func(ctx context.Context) (bool, error) {
		st, err := FetchReplayStatus(ctx, rs.d)
		if err != nil {
			return false, err
		}
		last = st
		if st.RequestID == reqID {
			if st.CaseName != rs.o.CaseName {
				return false, fault.New(fault.Transport, CodeRunIdentityMismatch, "the device published our requestId with another case name").
					With("requestId", reqID).With("lastStatus", st.Object)
			}
			claimed = st
			return true, nil
		}
		if st.RunID != "" && st.RunID != previousRunID {
			other = st
			if st.Active {
				// Only one replay can be active: ours was refused
				// (invisibly) or never will start. Never adopt it, even
				// with the same case name.
				return false, ownershipConflict(st)
			}
		}
		return false, nil
	})
	if errors.Is(err, device.ErrPollTimeout) {
		if other != nil {
			return nil, ownershipConflict(other)
		}
		e := device.Recode(device.PollTimeout("SoloPi did not acknowledge the replay request in time"), CodeAckTimeout).
			With("requestId", reqID).With("caseName", rs.o.CaseName)
		if last != nil {
			e.With("lastStatus", last.Object)
		}
		return nil, e
	}
	return claimed, err
}

func ownershipConflict(st *ReplayStatus) *fault.Error {
	return fault.New(fault.Failed, CodeOwnershipConflict, "another replay took the device; it is not ours and was not adopted").
		With("activeRun", st.Object)
}

// awaitTerminal polls our runId until it is terminal.
func (rs *runState) awaitTerminal(ctx context.Context) (*ReplayStatus, error) {
	var final *ReplayStatus
	failures := 0
	err := device.PollUntil(ctx, rs.statusPoll(rs.o.RunTimeout), func(ctx context.Context) (bool, error) {
		st, err := FetchReplayStatus(ctx, rs.d)
		if err != nil {
			// A long replay outlives short connection hiccups: a few
			// consecutive unreachable polls are retried, not fatal.
			var oe *fault.Error
			if errors.As(err, &oe) && oe.Code == device.CodeControlUnreachable && failures < maxStatusFailures {
				failures++
				return false, nil
			}
			return false, err
		}
		failures = 0
		if st.RunID != rs.rep.RunID {
			return false, fault.New(fault.Failed, CodeRunReplaced, "the run was replaced by another replay before a terminal state was seen").
				With("runId", rs.rep.RunID).With("activeRun", st.Object)
		}
		if st.RequestID != rs.rep.RequestID {
			return false, fault.New(fault.Transport, CodeRunIdentityMismatch, "our runId is now published with another requestId").
				With("runId", rs.rep.RunID).With("lastStatus", st.Object)
		}
		rs.rep.Status = st
		rs.rep.State = st.State
		if st.Terminal {
			final = st
			return true, nil
		}
		return false, nil
	})
	if errors.Is(err, device.ErrPollTimeout) {
		return nil, device.Recode(device.PollTimeout("the replay did not finish within --run-timeout; its run was cancelled"), CodeRunTimeout)
	}
	return final, err
}

// finish turns the run's end (err or a status) into the report: cancel on
// timeout or interrupt, verdict, artifacts, auto-start restore.
func (rs *runState) finish(ctx context.Context, err error) {
	rep := rs.rep
	e := asError(err)
	// Once the start was sent, we never walk away from a run we may own
	// while it is still going (timeout, interrupt, lost connection):
	// CancelOwnRun touches the device's run only if it carries exactly our
	// runId and requestId, so a replaced or foreign run is never hit.
	if e != nil && rep.RequestID != "" && (rep.Status == nil || !rep.Status.Terminal) &&
		e.Code != CodeRunReplaced && e.Code != CodeOwnershipConflict {
		rs.cancelInfo = rs.cancelOwn(ctx)
	}
	// Verdict of a run that got a status of its own.
	if e == nil && rep.Status != nil {
		e = rs.verdict()
	}
	// Evidence: on terminal states, timeout and interrupt, for our run only.
	collect := rep.RunID != "" && (e == nil || e.Code == CodeReplayFailed || e.Code == CodeReplayCancelled ||
		e.Code == CodeEmptyResults || e.Kind == fault.Timeout || e.Kind == fault.Interrupted)
	if rs.o.ArtifactsDir != "" && collect && !(rs.o.NoWait && rep.Status != nil && !rep.Status.Terminal) {
		rep.Artifacts = rs.collect(ctx)
	}
	if rs.autoStart != nil {
		rs.autoStart.restore(ctx, rs.d, rs.o.NoWait && e == nil && rep.Status != nil && rep.Status.Active)
	}
	rep.Finished = rs.d.Clock().Now()
	rep.Payload = rs.payload(e)
	rep.Err = e
	if e != nil {
		rep.ErrorCode = e.Code
	}
}

// verdict maps our final (or, with --no-wait, claimed) status.
func (rs *runState) verdict() *fault.Error {
	st := rs.rep.Status
	switch protocol.State(st.State) {
	case protocol.ReplayPassed:
		if len(st.Results) == 0 {
			// The device derives passed from results; an empty list means
			// nothing was verified. Upstream does not check this.
			return fault.New(fault.Transport, CodeEmptyResults, "the run reports passed without any replay result; treated as a protocol anomaly")
		}
		if f := st.FirstFailure(); f != nil {
			return fault.New(fault.Transport, device.CodeContractViolate, "the run reports passed but one of its results failed")
		}
		return nil
	case protocol.ReplayFailed:
		msg := st.Error
		if msg == "" {
			msg = "the replay failed"
		}
		return fault.New(fault.Failed, CodeReplayFailed, msg)
	case protocol.ReplayCancelled:
		return fault.New(fault.Interrupted, CodeReplayCancelled, "the replay was cancelled")
	}
	if rs.o.NoWait && st.Active {
		return nil
	}
	return fault.New(fault.Transport, CodeRunNotTerminal, "the run is not in a terminal state")
}

// payload builds the printed object: the status fields as the device sent
// them, success per our verdict, and what the command added.
func (rs *runState) payload(e *fault.Error) map[string]any {
	rep := rs.rep
	out := map[string]any{}
	if rep.Status != nil {
		maps.Copy(out, rep.Status.Object)
	}
	if e != nil {
		maps.Copy(out, e.Fields())
		if rep.Status != nil && rep.Status.Error != "" && (e.Code == CodeReplayFailed) {
			out["error"] = rep.Status.Error
		}
	} else {
		out["success"] = true
	}
	out["caseName"] = rep.CaseName
	if rep.RequestID != "" {
		out["requestId"] = rep.RequestID
	}
	if rep.RunID != "" {
		out["runId"] = rep.RunID
	}
	if rs.caseInfo != nil {
		out["caseId"] = rs.caseInfo.ID
		out["caseFingerprint"] = rs.caseInfo.Fingerprint
	}
	hr := rs.highRisk
	if hr == nil {
		hr = []casefile.HighRiskStep{}
	}
	out["confirmedHighRiskSteps"] = hr
	if rs.autoStart != nil {
		out["autoStart"] = rs.autoStart.report()
	}
	if rs.cancelInfo != nil {
		out["cancel"] = rs.cancelInfo
	}
	if rep.Artifacts != nil {
		out["artifacts"] = rep.Artifacts.Report()
	}
	return out
}

// cancelOwn cancels exactly our run, with a fresh short context because
// ctx may be the cancelled one. It never touches another runId.
func (rs *runState) cancelOwn(ctx context.Context) map[string]any {
	cctx, cancel := device.Cleanup(ctx, rs.o.CancelWait+5*time.Second)
	defer cancel()
	runID := rs.rep.RunID
	if runID == "" {
		// The start was sent but not yet acknowledged: the status tells
		// whether it became our run after all.
		st, err := FetchReplayStatus(cctx, rs.d)
		if err != nil {
			return map[string]any{"attempted": false, "reason": "status_unavailable", "error": errText(err)}
		}
		if st.RequestID != rs.rep.RequestID {
			return map[string]any{"attempted": false, "reason": "run_not_started"}
		}
		runID = st.RunID
		rs.rep.RunID = runID
		rs.rep.Status = st
		rs.rep.State = st.State
	}
	res := CancelOwnRun(cctx, rs.d, runID, rs.rep.RequestID, rs.o.CancelWait)
	if res.Status != nil {
		rs.rep.Status = res.Status
		rs.rep.State = res.Status.State
	}
	return res.Report()
}

// CancelResult is the evidence of a targeted cancel.
type CancelResult struct {
	Attempted bool
	Sent      bool
	Success   bool
	Reason    string
	Status    *ReplayStatus
	Err       error
}

// Report renders the cancel evidence.
func (c CancelResult) Report() map[string]any {
	m := map[string]any{"attempted": c.Attempted, "sent": c.Sent, "success": c.Success}
	if c.Reason != "" {
		m["reason"] = c.Reason
	}
	if c.Status != nil {
		m["finalState"] = c.Status.State
	}
	if c.Err != nil {
		m["error"] = errText(c.Err)
	}
	return m
}

// CancelOwnRun cancels runId if, and only if, the device's current run is
// exactly that runId (and requestId, when given) and still running; then it
// waits up to wait for a terminal state. A run that is already terminal,
// or a different run, is left alone.
func CancelOwnRun(ctx context.Context, d *device.Device, runID, requestID string, wait time.Duration) CancelResult {
	res := CancelResult{Attempted: true}
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
		return fault.Wrap(fault.Interrupted, device.CodeInterrupted, "the command was interrupted", err)
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
	return fault.Wrap(fault.Invalid, casefile.CodeInvalidCase, err.Error(), err)
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

// checkPlugins refuses a case whose plugin-backed steps cannot run.
func checkPlugins(ctx context.Context, d *device.Device, c *casefile.Case) error {
	need := casefile.RequiredPlugins(c)
	if len(need) == 0 {
		return nil
	}
	m, err := d.QueryObject(ctx, protocol.ActionPlugin, device.P(protocol.ParamAction, "list"))
	if err != nil {
		return err
	}
	if ok, _ := device.BoolField(m, "success"); !ok {
		return device.DeviceRefusal(m, "the device refused the plugin list")
	}
	list, ok := m["plugins"].([]any)
	if !ok {
		return device.ContractError("plugin list has no plugins array", m)
	}
	byName := map[string]map[string]any{}
	for _, x := range list {
		if p, ok := x.(map[string]any); ok {
			byName[device.Str(p, "name")] = p
		}
	}
	names := make([]string, 0, len(need))
	for n := range need {
		names = append(names, n)
	}
	sort.Strings(names)
	var missing []map[string]any
	for _, n := range names {
		p, installed := byName[n]
		loaded := false
		if installed {
			loaded, _ = device.BoolField(p, "runtimeLoaded")
		}
		if !loaded {
			idx := need[n]
			if idx == nil {
				idx = []int{}
			}
			missing = append(missing, map[string]any{"name": n, "stepIndexes": idx, "installed": installed, "runtimeLoaded": loaded})
		}
	}
	if len(missing) > 0 {
		return fault.New(fault.Failed, CodePluginsUnavailable, "the case needs SoloPi plugins that are not loaded").
			With("unavailablePlugins", missing).
			WithUserAction("Install the listed plugins (solopi plugin-install) and restart SoloPi, then run the case again.")
	}
	return nil
}

// checkReplayHealth requires the five permissions, an initialised app
// and auto-start (the doctor's rules; `ready` itself is not required, as
// upstream). The refusal lists what is missing and what to do about it.
func checkReplayHealth(ctx context.Context, d *device.Device) error {
	b, err := d.QueryRaw(ctx, protocol.ActionHarness, device.P(protocol.ParamType, protocol.HarnessHealth))
	if err != nil {
		return err
	}
	m, err := device.DecodeObject(b)
	if err != nil {
		return fault.Wrap(fault.Transport, device.CodeInvalidResponse, "the health answer is not a JSON object", err)
	}
	if ok, _ := device.BoolField(m, "success"); !ok {
		return device.Rekind(device.DeviceRefusal(m, "the device refused the health query"), fault.Transport)
	}
	v := readiness.EvaluateHealth(gjson.ParseBytes(b))
	failed := slices.DeleteFunc(slices.Clone(v.FailedChecks), func(c string) bool { return c == readiness.FailedReady })
	if len(v.MissingPermissions) == 0 && len(failed) == 0 {
		return nil
	}
	var actions []string
	for _, c := range v.Checks {
		if !c.OK && c.Name != readiness.CheckReady && c.UserActionRequired != "" {
			actions = append(actions, c.UserActionRequired)
		}
	}
	return fault.New(fault.Failed, CodeDeviceNotReady, "SoloPi is not ready to replay: one-time device setup is missing").
		With("missingPermissions", v.MissingPermissions).With("failedChecks", failed).With("health", m).
		WithUserAction(strings.Join(actions, " "))
}

// autoStartChange remembers what we did to KEY_REPLAY_AUTO_START.
type autoStartChange struct {
	previous   *bool
	changed    bool
	restored   bool
	deferred   string
	restoreErr error
}

func (a *autoStartChange) report() map[string]any {
	m := map[string]any{"key": KeyReplayAutoStart, "changed": a.changed, "restored": a.restored}
	if a.previous != nil {
		m["previous"] = *a.previous
	}
	if a.deferred != "" {
		m["restoreDeferred"] = a.deferred
	}
	if a.restoreErr != nil {
		m["restoreError"] = errText(a.restoreErr)
	}
	return m
}

// readAutoStart reads KEY_REPLAY_AUTO_START through config?action=get.
func readAutoStart(ctx context.Context, d *device.Device) (bool, error) {
	m, err := d.QueryObject(ctx, protocol.ActionConfig, device.P(protocol.ParamAction, "get", protocol.ParamKey, KeyReplayAutoStart))
	if err != nil {
		return false, err
	}
	if ok, _ := device.BoolField(m, "success"); !ok {
		return false, device.Rekind(device.DeviceRefusal(m, "the device refused to read the auto-start setting"), fault.Transport)
	}
	cfg, _ := m["config"].(map[string]any)
	v, ok := device.BoolField(cfg, "value")
	if cfg == nil || device.Str(cfg, "key") != KeyReplayAutoStart || !ok {
		return false, device.ContractError("config get did not return a boolean KEY_REPLAY_AUTO_START", m)
	}
	return v, nil
}

// writeAutoStart sets the key through the protected activity and waits
// until the device reads back the same value.
func writeAutoStart(ctx context.Context, d *device.Device, v bool, timeout time.Duration) error {
	if err := d.Mutate(ctx, protocol.ActionConfig, device.P(protocol.ParamAction, "set", protocol.ParamKey, KeyReplayAutoStart, protocol.ParamValue, strconv.FormatBool(v))); err != nil {
		return err
	}
	err := device.PollUntil(ctx, device.PollOptions{Clock: d.Clock(), Timeout: timeout, Interval: 200 * time.Millisecond, Initial: 50 * time.Millisecond}, func(ctx context.Context) (bool, error) {
		got, err := readAutoStart(ctx, d)
		return err == nil && got == v, err
	})
	if errors.Is(err, device.ErrPollTimeout) {
		return device.Recode(device.PollTimeout("SoloPi did not confirm the auto-start setting in time"), CodeAutoStartNotSet).With("expectedValue", v)
	}
	return err
}

// ensureAutoStart turns auto-start on when it is off and remembers to put
// it back: the reference host leaves it on forever.
func ensureAutoStart(ctx context.Context, d *device.Device, timeout time.Duration) (*autoStartChange, error) {
	cur, err := readAutoStart(ctx, d)
	if err != nil {
		return nil, err
	}
	ch := &autoStartChange{previous: &cur}
	if cur {
		return ch, nil
	}
	// Mark the change before sending: an interrupt mid-way must still
	// restore the setting.
	ch.changed = true
	return ch, writeAutoStart(ctx, d, true, timeout)
}

// restore puts the previous value back with a fresh context. With a run
// left active on purpose (--no-wait) it is not restored, because the
// replay manager reads the setting when it begins executing steps; turning
// it off now would leave that run waiting for a human forever.
func (a *autoStartChange) restore(ctx context.Context, d *device.Device, runLeftActive bool) {
	if !a.changed || a.previous == nil || *a.previous {
		return
	}
	if runLeftActive {
		a.deferred = "the run was left active (--no-wait); restoring auto-start now would stall it"
		return
	}
	cctx, cancel := device.Cleanup(ctx, 15*time.Second)
	defer cancel()
	if err := writeAutoStart(cctx, d, *a.previous, 10*time.Second); err != nil {
		a.restoreErr = err
		return
	}
	a.restored = true
}

// evidenceRoots are the device directories replay evidence may come from:
// SoloPi's data directory in its usual spellings and the app's external
// directory (the data-directory fallback lives there).
func evidenceRoots(pkg string) []string {
	return []string{
		"/sdcard/solopi/",
		"/storage/emulated/0/solopi/",
		"/storage/self/primary/solopi/",
		"/sdcard/Android/data/" + pkg + "/",
		"/storage/emulated/0/Android/data/" + pkg + "/",
	}
}

// CheckEvidencePath accepts a device path only when it is absolute, clean
// (no "." or ".." segments), free of control characters and under one of
// SoloPi's evidence directories.
func CheckEvidencePath(pkg, p string) error {
	if p == "" || !strings.HasPrefix(p, "/") {
		return errors.New("not an absolute path")
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return errors.New("control character in path")
		}
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == ".." || seg == "." || seg == "" {
			return errors.New("path has empty, '.' or '..' segments")
		}
	}
	if path.Clean(p) != p {
		return errors.New("path is not clean")
	}
	for _, root := range evidenceRoots(pkg) {
		if strings.HasPrefix(p, root) && len(p) > len(root) {
			return nil
		}
	}
	return errors.New("path is outside SoloPi's directories")
}

// Evidence file names inside a run's artifacts directory.
const (
	ArtifactResult     = "result.json"
	ArtifactScreenshot = "screen.png"
	ArtifactLogcat     = "logcat.txt"
	ArtifactDeviceDir  = "device"
	logcatMaxBytes     = 8 << 20
	// maxStatusFailures is how many consecutive unreachable status polls a
	// run wait tolerates.
	maxStatusFailures = 3
	// evidenceBudget bounds evidence collection, which also runs after an
	// interrupt when the user is waiting for the command to end.
	evidenceBudget = 30 * time.Second
)

// RunArtifacts is the evidence collected for one run.
type RunArtifacts struct {
	Dir         string
	Result      string
	Screenshot  string
	Logcat      string
	Manifest    string
	DeviceFiles []artifacts.FileEntry
	Skipped     []artifacts.SkippedFile
	Errors      []string
	Complete    bool
}

// Report renders the evidence for the command output (absolute paths).
func (a *RunArtifacts) Report() map[string]any {
	m := map[string]any{"dir": a.Dir, "complete": a.Complete}
	for k, v := range map[string]string{"result": a.Result, "screenshot": a.Screenshot, "logcat": a.Logcat, "manifest": a.Manifest} {
		if v != "" {
			m[k] = v
		}
	}
	df := a.DeviceFiles
	if df == nil {
		df = []artifacts.FileEntry{}
	}
	m["deviceFiles"] = df
	if len(a.Skipped) > 0 {
		m["skipped"] = a.Skipped
	}
	if len(a.Errors) > 0 {
		m["errors"] = a.Errors
	}
	return m
}

// Attachments lists the absolute paths of the run's images, for JUnit.
func (a *RunArtifacts) Attachments() []string {
	if a == nil {
		return nil
	}
	var out []string
	if a.Screenshot != "" {
		out = append(out, a.Screenshot)
	}
	for _, f := range a.DeviceFiles {
		if strings.HasSuffix(strings.ToLower(f.Path), ".png") || strings.HasSuffix(strings.ToLower(f.Path), ".jpg") {
			out = append(out, filepath.Join(a.Dir, filepath.FromSlash(f.Path)))
		}
	}
	return out
}

// collect writes the evidence of our run. It runs with a fresh bounded
// context because it also runs after a timeout or an interrupt. Failures
// are recorded in the manifest and the output, never turned into another
// verdict: the run's exit code says what happened to the run.
func (rs *runState) collect(ctx context.Context) *RunArtifacts {
	cctx, cancel := device.Cleanup(ctx, evidenceBudget)
	defer cancel()
	a := &RunArtifacts{}
	dir, err := artifacts.Open(rs.o.ArtifactsDir, rs.o.Overwrite, ArtifactResult, ArtifactScreenshot, ArtifactLogcat, artifacts.ManifestName, ArtifactDeviceDir)
	if err != nil {
		a.Errors = append(a.Errors, errText(err))
		return a
	}
	a.Dir = dir.Root()
	rep := rs.rep
	fail := func(what string, err error) { a.Errors = append(a.Errors, what+": "+errText(err)) }
	if rep.Status != nil {
		if _, err := dir.WriteJSON(ArtifactResult, "harness?type=status", rep.Status.Object); err != nil {
			fail(ArtifactResult, err)
		} else {
			a.Result, _ = dir.Abs(ArtifactResult)
		}
	} else {
		fail(ArtifactResult, errors.New("no status of this run was observed"))
	}
	// Device-side files only while the device still publishes our run:
	// a later run may reuse the same paths.
	current, err := FetchReplayStatus(cctx, rs.d)
	switch {
	case err != nil:
		fail("status", err)
	case current.RunID != rep.RunID:
		a.Errors = append(a.Errors, "device files: the device now publishes another run ("+current.RunID+"); its files were not collected")
	case rep.Status != nil:
		rs.pullDeviceFiles(cctx, dir, a)
	}
	if png, err := rs.d.Screencap(cctx); err != nil {
		fail(ArtifactScreenshot, err)
	} else if _, err := dir.WriteFile(ArtifactScreenshot, "screencap -p", png); err != nil {
		fail(ArtifactScreenshot, err)
	} else {
		a.Screenshot, _ = dir.Abs(ArtifactScreenshot)
	}
	if log, err := rs.d.Logcat(cctx, rs.o.LogcatLines, logcatMaxBytes); err != nil {
		fail(ArtifactLogcat, err)
	} else if _, err := dir.WriteFile(ArtifactLogcat, "logcat -d -v threadtime", log); err != nil {
		fail(ArtifactLogcat, err)
	} else {
		a.Logcat, _ = dir.Abs(ArtifactLogcat)
	}
	a.Complete = len(a.Errors) == 0 && len(a.Skipped) == 0
	man := artifacts.Manifest{Kind: "run", RunID: rep.RunID, RequestID: rep.RequestID, CaseName: rep.CaseName,
		CreatedAt: rs.d.Clock().Now().UTC().Format(time.RFC3339Nano), Complete: a.Complete, Skipped: a.Skipped, Errors: a.Errors}
	if rep.State != "" {
		man.Extra = map[string]string{"state": rep.State}
	}
	if _, err := dir.WriteManifest(man); err != nil {
		fail(artifacts.ManifestName, err)
		a.Complete = false
	} else {
		a.Manifest, _ = dir.Abs(artifacts.ManifestName)
	}
	return a
}

// pullDeviceFiles pulls results[].logFile and screenshotFiles into
// device/, each checked against SoloPi's directories and by SHA-256.
func (rs *runState) pullDeviceFiles(ctx context.Context, dir *artifacts.Dir, a *RunArtifacts) {
	type item struct{ remote, label string }
	var items []item
	seen := map[string]bool{}
	for i, r := range rs.rep.Status.Results {
		if r.LogFile != "" && !seen[r.LogFile] {
			seen[r.LogFile] = true
			items = append(items, item{r.LogFile, fmt.Sprintf("results[%d].logFile", i)})
		}
		keys := make([]string, 0, len(r.ScreenshotFiles))
		for k := range r.ScreenshotFiles {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := r.ScreenshotFiles[k]
			if p != "" && !seen[p] {
				seen[p] = true
				items = append(items, item{p, fmt.Sprintf("results[%d].screenshotFiles[%s]", i, k)})
			}
		}
	}
	for n, it := range items {
		if err := CheckEvidencePath(rs.d.Package(), it.remote); err != nil {
			a.Skipped = append(a.Skipped, artifacts.SkippedFile{Source: it.remote, Reason: err.Error()})
			continue
		}
		name := fmt.Sprintf("%s/%03d-%s", ArtifactDeviceDir, n+1, artifacts.SanitizeName(path.Base(it.remote)))
		w, err := dir.Create(name, it.remote)
		if err != nil {
			a.Errors = append(a.Errors, it.label+": "+errText(err))
			continue
		}
		if _, err := rs.d.Pull(ctx, it.remote, w); err != nil {
			w.Abort()
			a.Skipped = append(a.Skipped, artifacts.SkippedFile{Source: it.remote, Reason: errText(err)})
			continue
		}
		e, err := w.Commit()
		if err != nil {
			a.Errors = append(a.Errors, it.label+": "+errText(err))
			continue
		}
		a.DeviceFiles = append(a.DeviceFiles, e)
	}
}

// CancelRun is the `cancel --run-id` flow: the device's current run must be
// active with exactly runID (else exit 2 with activeRun and no mutation);
// then cancel it and poll until terminal: cancelled 0, passed/failed 2,
// another runId 2, timeout 124. A stale runId never reaches the device.
func CancelRun(ctx context.Context, d *device.Device, runID string, timeout, interval time.Duration) (map[string]any, error) {
	if strings.TrimSpace(runID) == "" {
		return nil, fault.Usage(CodeInvalidRunOption, "--run-id is required")
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
	if !st.Active {
		return nil, fault.New(fault.Failed, CodeRunNotActive, "there is no active run to cancel").
			With("expectedRunId", runID).With("activeRun", st.Object)
	}
	if st.RunID != runID {
		return nil, fault.New(fault.Failed, CodeRunIDMismatch, "the active run is not the given runId; nothing was cancelled").
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
			return false, fault.New(fault.Failed, CodeRunReplaced, "another run replaced the run being cancelled").
				With("runId", runID).With("activeRun", s.Object)
		}
		last = s
		return s.Terminal, nil
	})
	if errors.Is(err, device.ErrPollTimeout) {
		return nil, fault.New(fault.Timeout, CodeCancelTimeout, "the run did not reach a terminal state in time after the cancel").
			With("runId", runID).With("cancelSent", sent).With("lastStatus", last.Object)
	}
	if err != nil {
		return nil, err
	}
	out := maps.Clone(last.Object)
	out["cancelSent"] = sent
	if last.State != string(protocol.ReplayCancelled) {
		e := fault.Newf(fault.Failed, CodeCancelTooLate, "the run finished as %s before the cancel took effect", last.State)
		for k, v := range out {
			e.With(k, v)
		}
		return nil, e
	}
	out["success"] = true
	return out, nil
}

// LatestResult is the `result [--run-id]` flow over harness?type=result.
// The object is printed whatever the verdict; failure is nil when the run
// passed (with results), of kind Failed for a non-terminal or non-passed
// run and Transport for passed without results. A mismatching runId or no
// run is an error.
func LatestResult(ctx context.Context, d *device.Device, runID string) (out map[string]any, failure *fault.Error, err error) {
	st, err := ReplayLatest(ctx, d)
	if err != nil {
		return nil, nil, err
	}
	if runID != "" && st.RunID != runID {
		return nil, nil, fault.New(fault.Failed, CodeRunIDMismatch, "the latest run is not the given runId").
			With("expectedRunId", runID).With("latestRun", st.Object)
	}
	if st.RunID == "" || st.State == string(protocol.ReplayIdle) {
		return nil, nil, fault.New(fault.Failed, CodeNoRun, "SoloPi has no replay run to report").With("latestRun", st.Object)
	}
	out = maps.Clone(st.Object)
	switch {
	case !st.Terminal:
		out["success"] = false
		out["errorCode"] = CodeRunNotTerminal
		out["error"] = "the run is still " + st.State
		return out, verdictOf(out, fault.Failed), nil
	case st.State == string(protocol.ReplayPassed) && len(st.Results) == 0:
		out["success"] = false
		out["errorCode"] = CodeEmptyResults
		out["error"] = "the run reports passed without any replay result; treated as a protocol anomaly"
		return out, verdictOf(out, fault.Transport), nil
	case st.State == string(protocol.ReplayPassed):
		out["success"] = true
		return out, nil, nil
	case st.State == string(protocol.ReplayFailed):
		out["success"] = false
		out["errorCode"] = CodeReplayFailed
		if st.Error == "" {
			out["error"] = "the replay failed"
		}
		return out, verdictOf(out, fault.Failed), nil
	}
	out["success"] = false
	out["errorCode"] = CodeReplayCancelled
	out["error"] = "the replay was cancelled"
	return out, verdictOf(out, fault.Failed), nil
}

// verdictOf is the failure a printed result object reports.
func verdictOf(out map[string]any, k fault.Kind) *fault.Error {
	code, _ := out["errorCode"].(string)
	msg, _ := out["error"].(string)
	return fault.New(k, code, msg)
}

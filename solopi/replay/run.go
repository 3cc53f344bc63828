package replay

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/redact"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/video"
)

// RunReport is the outcome of one replay run: the printed object, the
// failure it reports (nil when the run passed, or is active with --no-wait)
// and the identities it is bound to. RunReplay always returns one, so that
// run-batch can aggregate every child whatever happened to it.
type RunReport struct {
	Err       *fault.Error
	Payload   *RunResult
	CaseName  string
	RequestID string
	RunID     string
	State     string
	ErrorCode string
	Status    *replayStatus
	Started   time.Time
	Finished  time.Time
	Artifacts *RunArtifacts
	// Steps is the step timeline read from the device's log (timeline.go);
	// nil without evidence or when the log gave none.
	Steps []Step
	// Redaction is how the run's secrets were found; nil before the case
	// was read. Everything the run reports is already redacted with it.
	Redaction *redaction
}

// replayPoll is the longest pause between status polls of a started run.
// A status query is a small local HTTP request on the device; polling at
// this rate keeps the delay between the device's terminal state and the
// printed result near half of it. The first pauses are shorter (from
// replayFirstPoll, doubling), so a run that ends or is claimed quickly is
// seen quickly too.
const (
	replayPoll      = 50 * time.Millisecond
	replayFirstPoll = 10 * time.Millisecond
)

// statusPoll is the poll of our run's status: pauses from replayFirstPoll
// up to replayPoll, never longer than --poll-interval.
func (rs *runState) statusPoll(budget time.Duration) device.PollOptions {
	iv := min(replayPoll, rs.o.PollInterval)
	return device.PollOptions{Clock: rs.d.Clock(), Timeout: budget, Interval: iv, Initial: min(replayFirstPoll, iv)}
}

// runState carries one run through its phases.
type runState struct {
	d          *device.Device
	o          RunOptions
	rep        *RunReport
	caseInfo   *deviceCase
	highRisk   []casefile.HighRiskStep
	autoStart  *autoStartChange
	cancelInfo *cancelReport
	rec        *video.Recorder // the running screen recording (video.go)
	video      *video.Result   // what became of it
	perf       *perfRun        // the performance session (perf.go)
	// videoStarted and startSent are when the recording began and the
	// start was sent (host clock): the video seek of the step timeline.
	videoStarted, startSent time.Time
}

// redactor hides the case's secrets in everything the run reports.
func (rs *runState) redactor() *redact.Redactor { return rs.rep.Redaction.Redactor() }

// RunReplay runs one case the safe way: preflight the exact case, make the
// device ready (auto-start left on, as solopi-ai does), start with a fresh
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
	rs.rep.Redaction = caseRedaction(o.Secrets, o.Encrypted, ci)
	if err := o.checkBound(ci); err != nil {
		return err
	}
	// 2. Local authoring policy on the device copy.
	_, hr, err := casefile.Normalize(ci.Case, casefile.NormalizeOptions{ConfirmHighRisk: o.ConfirmHighRisk, Operation: "run"})
	if err != nil {
		return caseError(err)
	}
	rs.highRisk = hr
	// 3. Plugins the steps need must be loaded.
	if err := checkPlugins(ctx, d, ci.Case); err != nil {
		return err
	}
	// 4. Auto-start. It stays on afterwards: turning it off again made
	// doctor fail after every run, and a run that lost a race turned it
	// off under the winner, which then waited for a human.
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
		// "run" is solopi-ai's name for the same snapshot.
		return fault.New(fault.Failed, fault.CodeReplayActive, "a replay is already running on the device").
			With("activeRun", before.Object).With("run", before.Object)
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
	if err := rs.startPerf(ctx); err != nil {
		return err
	}
	rs.startVideo(ctx)
	o.Progress.Report(device.Event{Phase: "start", Message: "starting replay " + reqID, Case: o.CaseName})
	rs.startSent = d.Clock().Now()
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
func (rs *runState) awaitClaim(ctx context.Context, previousRunID string) (*replayStatus, error) {
	reqID := rs.rep.RequestID
	var claimed, last, other *replayStatus
	var out outage
	err := device.PollUntil(ctx, rs.statusPoll(rs.o.AckTimeout), func(ctx context.Context) (bool, error) {
		st, err := FetchReplayStatus(ctx, rs.d)
		if err != nil {
			return false, rs.tolerate(err, &out)
		}
		out.since = time.Time{}
		last = st
		if out.seen && st.RunID == "" {
			// SoloPi restarted after our start was sent: whether or not
			// the run began, it is gone.
			return false, runLost(st).With("requestId", reqID)
		}
		if st.RequestID == reqID {
			if st.CaseName != rs.o.CaseName {
				return false, fault.New(fault.Transport, fault.CodeRunIdentityMismatch, "the device published our requestId with another case name").
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
		e := device.Recode(device.PollTimeout("SoloPi did not acknowledge the replay request in time"), fault.CodeAckTimeout).
			With("requestId", reqID).With("caseName", rs.o.CaseName)
		if last != nil {
			e.With("lastStatus", last.Object)
		}
		return nil, e
	}
	return claimed, err
}

func ownershipConflict(st *replayStatus) *fault.Error {
	return fault.New(fault.Failed, fault.CodeOwnershipConflict, "another replay took the device; it is not ours and was not adopted").
		With("activeRun", st.Object)
}

// awaitTerminal polls our runId until it is terminal.
func (rs *runState) awaitTerminal(ctx context.Context) (*replayStatus, error) {
	var final *replayStatus
	var out outage
	err := device.PollUntil(ctx, rs.statusPoll(rs.o.RunTimeout), func(ctx context.Context) (bool, error) {
		st, err := FetchReplayStatus(ctx, rs.d)
		if err != nil {
			return false, rs.tolerate(err, &out)
		}
		out.since = time.Time{}
		if st.RunID == "" {
			// Idle with no run: SoloPi restarted and forgot it. Nothing
			// replaced it; it is gone without a verdict.
			return false, runLost(st).With("runId", rs.rep.RunID)
		}
		if st.RunID != rs.rep.RunID {
			return false, fault.New(fault.Failed, fault.CodeRunReplaced, "the run was replaced by another replay before a terminal state was seen").
				With("runId", rs.rep.RunID).With("activeRun", st.Object)
		}
		if st.RequestID != rs.rep.RequestID {
			return false, fault.New(fault.Transport, fault.CodeRunIdentityMismatch, "our runId is now published with another requestId").
				With("runId", rs.rep.RunID).With("lastStatus", st.Object)
		}
		if st.State != rs.rep.State {
			// A state change without a line of its own: a live progress
			// display updates on it.
			rs.o.Progress.Report(device.Event{Phase: "run", Case: rs.o.CaseName, RunID: st.RunID, State: st.State})
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
		return nil, device.Recode(device.PollTimeout("the replay did not finish within --run-timeout; its run was cancelled"), fault.CodeRunTimeout)
	}
	return final, err
}

// outage is a stretch of status polls that did not reach SoloPi's
// control service.
type outage struct {
	since time.Time // start of the current outage; zero while reachable
	seen  bool      // the wait went through an outage
}

// tolerate returns nil (poll again) for a poll that did not reach the
// control service (nothing answered, or the service is still starting)
// while the outage is shorter than --unreachable-timeout: a long replay
// outlives an app restart (the HTTP server is back 5 s after init) and
// connection hiccups. Any other error, or a longer outage, is returned.
func (rs *runState) tolerate(err error, o *outage) error {
	if code := fault.CodeOf(err); code != fault.CodeControlServiceUnreachable && code != fault.CodeControlServiceNotReady {
		return err
	}
	now := rs.d.Clock().Now()
	if o.since.IsZero() {
		o.since = now
	}
	o.seen = true
	if now.Sub(o.since) < rs.o.UnreachableTimeout {
		return nil
	}
	return err
}

// runLost is the error of a run SoloPi no longer knows (st is idle).
func runLost(st *replayStatus) *fault.Error {
	return fault.New(fault.Transport, fault.CodeRunLost, "our run vanished from the device (was SoloPi restarted?); it is lost, not finished").
		With("deviceStatus", st.Object)
}

// finish turns the run's end (err or a status) into the report: cancel on
// timeout or interrupt, verdict, artifacts.
func (rs *runState) finish(ctx context.Context, err error) {
	rep := rs.rep
	e := asError(err)
	// Once the start was sent, we never walk away from a run we may own
	// while it is still going (timeout, interrupt, lost connection):
	// CancelOwnRun touches the device's run only if it carries exactly our
	// runId and requestId, so a replaced or foreign run is never hit.
	if e != nil && rep.RequestID != "" && (rep.Status == nil || !rep.Status.Terminal) &&
		e.Code != fault.CodeRunReplaced && e.Code != fault.CodeOwnershipConflict && e.Code != fault.CodeRunLost {
		rs.cancelInfo = rs.cancelOwn(ctx)
	}
	// Verdict of a run that got a status of its own.
	if e == nil && rep.Status != nil {
		e = rs.verdict()
	}
	// Evidence of every run of ours, whatever ended it (a verdict, a
	// timeout, an interrupt, a lost connection or app): the runs that break
	// are the ones whose evidence is needed most. Not when the device now
	// belongs to another client's run, and not for a run left going on
	// purpose (--no-wait).
	theirs := e != nil && (e.Code == fault.CodeRunReplaced || e.Code == fault.CodeOwnershipConflict)
	// The performance session ends with the run, whatever ended it.
	rs.stopPerf(ctx)
	if rs.o.ArtifactsDir != "" && rep.RunID != "" && !theirs && !(rs.o.NoWait && e == nil && rep.Status != nil && !rep.Status.Terminal) {
		rep.Artifacts, e = rs.collect(ctx, e)
	} else {
		e = rs.perfVerdict(e)
	}
	// A recording the evidence did not take (no evidence for this run) is
	// stopped and discarded; its device files are deleted.
	rs.stopVideo(ctx, nil, e == nil)
	rep.Finished = rs.d.Clock().Now()
	rep.Payload = rs.result(e)
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
			return fault.New(fault.Transport, fault.CodeEmptyResults, "the run reports passed without any replay result; treated as a protocol anomaly")
		}
		if f := st.FirstFailure(); f != nil {
			return fault.New(fault.Transport, fault.CodeProtocolContractViolation, "the run reports passed but one of its results failed")
		}
		return nil
	case protocol.ReplayFailed:
		if st.StartedAt == 0 && st.Error == protocol.MsgReplayLeaseBusy {
			// The device never started it: an Agent session, another
			// replay or plugin maintenance held the control lease. The
			// case did not fail; it did not run.
			return fault.New(fault.Failed, fault.CodeLeaseConflict, "the device is controlled by an Agent session, another replay or plugin maintenance; the case did not run").
				With("deviceError", st.Error).
				WithUserAction("End the Agent session (agent-end or agent-cancel) or wait for the other replay or plugin maintenance, then run the case again.")
		}
		msg := st.Error
		if msg == "" {
			msg = "the replay failed"
		}
		return fault.New(fault.Failed, fault.CodeReplayFailed, msg)
	case protocol.ReplayCancelled:
		return fault.New(fault.Interrupted, fault.CodeReplayCancelled, "the replay was cancelled")
	}
	if rs.o.NoWait && st.Active {
		return nil
	}
	return fault.New(fault.Transport, fault.CodeRunNotTerminal, "the run is not in a terminal state")
}

// cancelOwn cancels exactly our run, with a fresh short context because
// ctx may be the cancelled one. It never touches another runId.
func (rs *runState) cancelOwn(ctx context.Context) *cancelReport {
	cctx, cancel := device.Cleanup(ctx, rs.o.CancelWait+5*time.Second)
	defer cancel()
	runID := rs.rep.RunID
	if runID == "" {
		// The start was sent but not yet acknowledged: the status tells
		// whether it became our run after all.
		st, err := FetchReplayStatus(cctx, rs.d)
		if err != nil {
			return &cancelReport{Reason: "status_unavailable", Error: errText(err)}
		}
		if st.RequestID != rs.rep.RequestID {
			return &cancelReport{Reason: "run_not_started"}
		}
		runID = st.RunID
		rs.rep.RunID = runID
		rs.rep.Status = st
		rs.rep.State = st.State
	}
	res := cancelOwnRun(cctx, rs.d, runID, rs.rep.RequestID, rs.o.CancelWait)
	if res.Status != nil {
		rs.rep.Status = res.Status
		rs.rep.State = res.Status.State
	}
	return res.report()
}

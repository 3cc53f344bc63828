package solopi

// Interactive case recording (wire contract §11): record-start, -status,
// -stop. Only `recording` means the tester may start touching the phone;
// only `stopped` means the recording was persisted (with a caseId).

import (
	"context"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
)

// recordSpec describes the session type; a fresh value per call keeps
// the protocol tables unshared.
func recordSpec() *sessionSpec {
	return &sessionSpec{
		Name:     "recording",
		Kind:     "recording",
		Action:   protocol.ActionRecord,
		Status:   P(protocol.ParamRecordMode, "status"),
		Machine:  protocol.Record(),
		Validate: validateRecording,
		Latest:   "latestRecording",
		StopParams: func(id string) Params {
			return P(protocol.ParamRecordMode, "stop", protocol.ParamSessionID, id)
		},
		Stoppable: []protocol.State{protocol.SessionStarting, protocol.SessionRecording},
	}
}

// validateRecording is the strict validator of §11.3.
func validateRecording(o wireObject) error {
	var v violations
	m := protocol.Record()
	s := v.machineFlags(o, m, map[string]protocol.State{"recording": protocol.SessionRecording})
	cancelled, ok := o.flagOrFalse("cancelledBeforeStart")
	v.check(ok, "cancelledBeforeStart is not a boolean")
	if s == protocol.SessionIdle {
		v.absentAll(o, "idle", "sessionId", "caseName", "caseId", "targetPackage", "startedAt", "finishedAt", "durationMs", "error")
		v.check(!cancelled, "idle but cancelledBeforeStart is true")
	} else if s != "" {
		id, _ := o.text("sessionId")
		v.check(id != "", "a %s recording has no sessionId", s)
		v.check(o.has("caseName"), "a %s recording has no caseName", s)
		v.check(o.has("targetPackage"), "a %s recording has no targetPackage", s)
	}
	for _, k := range []string{"startedAt", "finishedAt", "durationMs", "caseId"} {
		if o.has(k) {
			_, ok := o.integer(k)
			v.check(ok, "%s is not an integer", k)
		}
	}
	v.iff(o.has("startedAt"), o.has("durationMs"), "startedAt and durationMs must be present together")
	v.iff(m.IsTerminal(s), o.has("finishedAt"), "finishedAt must be present exactly in terminal states")
	v.iff(s == protocol.SessionFailed, o.has("error"), "error must be present exactly in failed")
	if cancelled {
		v.check(s == protocol.SessionStopped, "cancelledBeforeStart in state %s", s)
		v.check(!o.has("startedAt") && !o.has("caseId"), "a recording cancelled before start has startedAt or caseId")
	}
	if s == protocol.SessionStopped && !cancelled {
		id, ok := o.integer("caseId")
		v.check(ok && id > 0, "a stopped recording has no positive caseId")
		v.check(o.has("startedAt"), "a stopped recording has no startedAt")
	}
	if s == protocol.SessionRecording || s == protocol.SessionStopping {
		v.check(o.has("startedAt"), "a %s recording has no startedAt", s)
	}
	return v.err("recording status", o)
}

// RecordStartOptions configure StartRecording.
type RecordStartOptions struct {
	CaseName      string
	TargetPackage string
	Description   string
	SessionTimings
}

// StartRecording starts an interactive recording under a fresh sessionId
// and waits for `recording` (exit 0) or `failed` (exit 2). A timeout or an
// interrupt stops exactly this session before returning 124 / 130.
func StartRecording(ctx context.Context, d *Device, o RecordStartOptions) (*SessionResult, error) {
	o.CaseName = strings.TrimSpace(o.CaseName)
	if o.CaseName == "" {
		return nil, fault.Usage(CodeInvalidOption, "--name must not be blank")
	}
	if strings.TrimSpace(o.TargetPackage) == "" {
		return nil, fault.Usage(CodeInvalidOption, "--target-package must not be blank")
	}
	t := o.SessionTimings.or(30*time.Second, 500*time.Millisecond)
	id := NewRequestID()
	p := P(protocol.ParamRecordMode, "normal", protocol.ParamTargetApp, o.TargetPackage,
		protocol.ParamCaseName, o.CaseName, protocol.ParamSessionID, id)
	if o.Description != "" {
		p = p.Add(protocol.ParamCaseDesc, o.Description)
	}
	return recordSpec().start(ctx, d, startPlan{
		SessionID: id, Params: p,
		Done:    []protocol.State{protocol.SessionRecording, protocol.SessionFailed, protocol.SessionStopped},
		Success: []protocol.State{protocol.SessionRecording},
		Timeout: t.Timeout, Interval: t.Interval, CleanupWait: 10 * time.Second, Phase: "record-start",
		// The device refuses an unknown target app invisibly (§11.1), which
		// the host would only see as a 30 s timeout: check its app list.
		Preflight: func(ctx context.Context) error { return requireTargetApp(ctx, d, o.TargetPackage) },
		Check: func(w wireObject) error {
			// The device must echo what we asked for; a different case
			// under our sessionId cannot be attributed to this command.
			if n, _ := w.text("caseName"); n != o.CaseName {
				return contractError("the recording does not echo the requested caseName", map[string]any(w))
			}
			return nil
		},
	})
}

// RecordingStatus reads the recording snapshot; with sessionID set, another
// session is exit 2 with latestRecording.
func RecordingStatus(ctx context.Context, d *Device, sessionID string) (*SessionResult, error) {
	return recordSpec().statusResult(ctx, d, sessionID)
}

// StopRecording stops our recording (starting or recording) and waits for a
// terminal state: `stopped` is exit 0 (with cancelledBeforeStart when it
// was stopped before it began), `failed` exit 2.
func StopRecording(ctx context.Context, d *Device, sessionID string, t SessionTimings) (*SessionResult, error) {
	if err := RequireSessionID(sessionID); err != nil {
		return nil, err
	}
	t = t.or(60*time.Second, 500*time.Millisecond)
	return recordSpec().stop(ctx, d, stopPlan{SessionID: sessionID, Timeout: t.Timeout, Interval: t.Interval,
		Phase: "record-stop", Success: []protocol.State{protocol.SessionStopped}, Detail: "recording", FailureCode: CodeSessionFailed})
}

// requireTargetApp checks pkg against SoloPi's app list (harness?type=apps),
// the same list the device gates record and performance targets with.
func requireTargetApp(ctx context.Context, d *Device, pkg string) error {
	apps, err := d.Query(ctx, protocol.ActionHarness, P(protocol.ParamType, protocol.HarnessApps))
	if err != nil {
		return err
	}
	for _, a := range apps.Get("apps").Array() {
		if a.Get("packageName").String() == pkg {
			return nil
		}
	}
	return fault.Newf(fault.Failed, protocol.ErrTargetAppNotFound,
		"SoloPi's app list has no %s, so the device would refuse the recording", pkg).
		WithUserAction("Install the app, or turn on KEY_DISPLAY_SYSTEM_APP for a system app, and check `solopi apps`.")
}

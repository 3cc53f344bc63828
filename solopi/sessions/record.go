package sessions

// Interactive case recording (docs/device-protocol.md): record-start, -status,
// -stop. Only `recording` means the tester may start touching the phone;
// only `stopped` means the recording was persisted (with a caseId).

import (
	"context"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
)

// recordSpec describes the session type; a fresh value per call keeps
// the protocol tables unshared.
func recordSpec() *sessionSpec {
	return &sessionSpec{
		Name:     "recording",
		Kind:     "recording",
		Action:   protocol.ActionRecord,
		Status:   device.P(protocol.ParamRecordMode, "status"),
		Machine:  protocol.Record(),
		Validate: validateRecording,
		Latest:   "latestRecording",
		Key:      "recording",
		StopParams: func(id string) device.Params {
			return device.P(protocol.ParamRecordMode, "stop", protocol.ParamSessionID, id)
		},
		Stoppable: []protocol.State{protocol.SessionStarting, protocol.SessionRecording},
	}
}

// validateRecording is the strict validator.
func validateRecording(o device.WireObject) error {
	var v device.Violations
	m := protocol.Record()
	s := v.MachineFlags(o, m, map[string]protocol.State{"recording": protocol.SessionRecording})
	cancelled, ok := o.FlagOrFalse("cancelledBeforeStart")
	v.Check(ok, "cancelledBeforeStart is not a boolean")
	if s == protocol.SessionIdle {
		v.AbsentAll(o, "idle", "sessionId", "caseName", "caseId", "targetPackage", "startedAt", "finishedAt", "durationMs", "error")
		v.Check(!cancelled, "idle but cancelledBeforeStart is true")
	} else if s != "" {
		id, _ := o.Text("sessionId")
		v.Check(id != "", "a %s recording has no sessionId", s)
		v.Check(o.Has("caseName"), "a %s recording has no caseName", s)
		v.Check(o.Has("targetPackage"), "a %s recording has no targetPackage", s)
	}
	for _, k := range []string{"startedAt", "finishedAt", "durationMs", "caseId"} {
		if o.Has(k) {
			_, ok := o.Integer(k)
			v.Check(ok, "%s is not an integer", k)
		}
	}
	v.Iff(o.Has("startedAt"), o.Has("durationMs"), "startedAt and durationMs must be present together")
	v.Iff(m.IsTerminal(s), o.Has("finishedAt"), "finishedAt must be present exactly in terminal states")
	v.Iff(s == protocol.SessionFailed, o.Has("error"), "error must be present exactly in failed")
	if cancelled {
		v.Check(s == protocol.SessionStopped, "cancelledBeforeStart in state %s", s)
		v.Check(!o.Has("startedAt") && !o.Has("caseId"), "a recording cancelled before start has startedAt or caseId")
	}
	if s == protocol.SessionStopped && !cancelled {
		id, ok := o.Integer("caseId")
		v.Check(ok && id > 0, "a stopped recording has no positive caseId")
		v.Check(o.Has("startedAt"), "a stopped recording has no startedAt")
	}
	if s == protocol.SessionRecording || s == protocol.SessionStopping {
		v.Check(o.Has("startedAt"), "a %s recording has no startedAt", s)
	}
	return v.Err("recording status", o)
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
func StartRecording(ctx context.Context, d *device.Device, o RecordStartOptions) (*StartResult, error) {
	o.CaseName = strings.TrimSpace(o.CaseName)
	if o.CaseName == "" {
		return nil, fault.Usage(fault.CodeInvalidOption, "--name must not be blank")
	}
	if strings.TrimSpace(o.TargetPackage) == "" {
		return nil, fault.Usage(fault.CodeInvalidOption, "--target-package must not be blank")
	}
	t := o.SessionTimings.or(30*time.Second, 500*time.Millisecond)
	id := device.NewRequestID()
	p := device.P(protocol.ParamRecordMode, "normal", protocol.ParamTargetApp, o.TargetPackage,
		protocol.ParamCaseName, o.CaseName, protocol.ParamSessionID, id)
	if o.Description != "" {
		p = p.Add(protocol.ParamCaseDesc, o.Description)
	}
	return recordSpec().start(ctx, d, startPlan{
		SessionID: id, Params: p,
		Done:    []protocol.State{protocol.SessionRecording, protocol.SessionFailed, protocol.SessionStopped},
		Success: []protocol.State{protocol.SessionRecording},
		Timeout: t.Timeout, Interval: t.Interval, CleanupWait: 10 * time.Second, Phase: "record-start",
		// The device refuses an unknown target app invisibly, which
		// the host would only see as a 30 s timeout: check its app list.
		Preflight: func(ctx context.Context) error { return requireTargetApp(ctx, d, o.TargetPackage) },
		Check: func(w device.WireObject) error {
			// The device must echo what we asked for; a different case
			// under our sessionId cannot be attributed to this command.
			if n, _ := w.Text("caseName"); n != o.CaseName {
				return device.ContractError("the recording does not echo the requested caseName", map[string]any(w))
			}
			return nil
		},
	})
}

// RecordingStatus reads the recording snapshot; with sessionID set, another
// session is exit 2 with latestRecording.
func RecordingStatus(ctx context.Context, d *device.Device, sessionID string) (map[string]any, error) {
	return recordSpec().statusResult(ctx, d, sessionID)
}

// StopRecording stops our recording (starting or recording) and waits for a
// terminal state: `stopped` is exit 0 (with cancelledBeforeStart when it
// was stopped before it began), `failed` exit 2.
func StopRecording(ctx context.Context, d *device.Device, sessionID string, t SessionTimings) (*StopResult, error) {
	if err := RequireSessionID(sessionID); err != nil {
		return nil, err
	}
	t = t.or(60*time.Second, 500*time.Millisecond)
	return recordSpec().stop(ctx, d, stopPlan{SessionID: sessionID, Timeout: t.Timeout, Interval: t.Interval,
		Phase: "record-stop", Success: []protocol.State{protocol.SessionStopped}, FailureCode: fault.CodeSessionFailed})
}

// requireTargetApp checks pkg against SoloPi's app list (harness?type=apps),
// the same list the device gates record and performance targets with.
func requireTargetApp(ctx context.Context, d *device.Device, pkg string) error {
	apps, err := d.Query(ctx, protocol.ActionHarness, device.P(protocol.ParamType, protocol.HarnessApps))
	if err != nil {
		return err
	}
	list, _ := apps["apps"].([]any)
	for _, a := range list {
		if app, ok := a.(map[string]any); ok && device.WireObject(app).Str("packageName") == pkg {
			return nil
		}
	}
	return fault.Newf(fault.Failed, protocol.ErrTargetAppNotFound,
		"SoloPi's app list has no %s, so the device would refuse the recording", pkg).
		WithUserAction("Install the app, or turn on KEY_DISPLAY_SYSTEM_APP for a system app, and check `solopi apps`.")
}

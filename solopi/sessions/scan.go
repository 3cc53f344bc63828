package sessions

// Camera scanning (docs/device-protocol.md): scan-start, -status, -cancel.
// Pending camera permission and scanning both wait for a person; only
// `completed` carries content. The device never executes scanned content
// in protocol mode (contentExecuted is always false) and neither does
// the host: content is only reported.

import (
	"context"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
)

// Scan requiredUserAction texts.
const (
	scanActionGrantCamera = "Grant camera permission on the device"
	scanActionAim         = "Aim the camera at a supported code"
)

// scanCodeType maps a ZXing format name to SoloPi's codeType.
func scanCodeType(format string) (string, bool) {
	switch format {
	case "EAN_13":
		return "EAN-13", true
	case "EAN_8":
		return "EAN-8", true
	case "CODE_128":
		return "CODE 128", true
	case "CODE_39":
		return "CODE 39", true
	case "QR_CODE":
		return "QR CODE", true
	case "PDF_417":
		return "PDF 417", true
	case "DATA_MATRIX":
		return "Datamatrix", true
	}
	return "", false
}

// scanSpec describes the session type; a fresh value per call keeps
// the protocol tables unshared.
func scanSpec() *sessionSpec {
	return &sessionSpec{
		Name:     "scan",
		Kind:     "scan",
		Action:   protocol.ActionScan,
		Status:   device.P(protocol.ParamAction, "status"),
		Machine:  protocol.Scan(),
		Validate: validateScan,
		Latest:   "latestScan",
		Key:      "scan",
		StopParams: func(id string) device.Params {
			return device.P(protocol.ParamAction, "cancel", protocol.ParamSessionID, id)
		},
		Stoppable: []protocol.State{protocol.SessionStarting, protocol.ScanPendingPermission, protocol.ScanScanning},
	}
}

// validateScan is the strict validator.
func validateScan(o device.WireObject) error {
	var v device.Violations
	m := protocol.Scan()
	s := v.MachineFlags(o, m, map[string]protocol.State{"scanning": protocol.ScanScanning})
	ua, ok := o.Flag("userActionRequired")
	v.Check(ok && ua == (s == protocol.ScanPendingPermission || s == protocol.ScanScanning), "userActionRequired=%v does not match state %s", o["userActionRequired"], s)
	ra, _ := o.Text("requiredUserAction")
	switch s {
	case protocol.ScanPendingPermission:
		v.Check(ra == scanActionGrantCamera, "requiredUserAction must be %q while pending", scanActionGrantCamera)
	case protocol.ScanScanning:
		v.Check(ra == scanActionAim, "requiredUserAction must be %q while scanning", scanActionAim)
	default:
		v.Check(!o.Has("requiredUserAction"), "requiredUserAction present in state %s", s)
	}
	ce, ok := o.Flag("contentExecuted")
	v.Check(ok && !ce, "contentExecuted must be false")
	active, _ := o.Flag("active")
	manual, ok1 := o.FlagOrFalse("manualScanActive")
	attached, ok2 := o.FlagOrFalse("protocolActivityAttached")
	v.Check(ok1 && ok2, "manualScanActive and protocolActivityAttached must be booleans")
	v.Check(!(active && manual), "active and manualScanActive are both true")
	v.Check(!(manual && attached), "manualScanActive and protocolActivityAttached are both true")
	for _, k := range []string{"requestedAt", "startedAt", "finishedAt", "durationMs"} {
		if o.Has(k) {
			_, ok := o.Integer(k)
			v.Check(ok, "%s is not an integer", k)
		}
	}
	if s == protocol.SessionIdle {
		v.AbsentAll(o, "idle", "sessionId", "content", "format", "codeType", "requestedAt", "startedAt", "finishedAt", "durationMs", "error")
		return v.Err("scan status", o)
	}
	if s == "" {
		return v.Err("scan status", o)
	}
	id, _ := o.Text("sessionId")
	v.Check(protocol.ValidID(id, 128), "sessionId %q is not a valid scan id", id)
	req, _ := o.Integer("requestedAt")
	v.Check(req > 0, "requestedAt must be positive")
	st, hasSt := o.Integer("startedAt")
	fin, hasFin := o.Integer("finishedAt")
	if hasSt {
		v.Check(st >= req, "startedAt is before requestedAt")
	}
	dur, hasDur := o.Integer("durationMs")
	v.Iff(hasDur, hasSt && hasFin, "durationMs must be present exactly when startedAt and finishedAt are")
	if hasDur && hasSt && hasFin {
		v.Check(dur == max(0, fin-st), "durationMs %d != finishedAt - startedAt", dur)
	}
	v.Iff(m.IsTerminal(s), hasFin, "finishedAt must be present exactly in terminal states")
	if s == protocol.ScanScanning || s == protocol.ScanCompleted {
		v.Check(hasSt, "a %s scan has no startedAt", s)
	}
	if s == protocol.SessionStarting || s == protocol.ScanPendingPermission {
		v.Check(!hasSt, "a %s scan has startedAt", s)
	}
	if s == protocol.ScanCompleted {
		content, _ := o.Text("content")
		format, _ := o.Text("format")
		code, _ := o.Text("codeType")
		want, known := scanCodeType(format)
		v.Check(content != "", "a completed scan has no content")
		v.Check(known && code == want, "codeType %q does not match format %q", code, format)
	} else {
		v.AbsentAll(o, "a "+string(s)+" scan", "content", "format", "codeType")
	}
	v.Iff(s == protocol.SessionFailed, o.Has("error"), "error must be present exactly in failed")
	return v.Err("scan status", o)
}

// StartScan opens a protocol scan session and waits until it is pending
// camera permission, scanning, or over. A timeout or an interrupt cancels
// exactly this session.
func StartScan(ctx context.Context, d *device.Device, t SessionTimings) (*ScanStartResult, error) {
	t = t.or(30*time.Second, 500*time.Millisecond)
	id := device.NewRequestID()
	res, err := scanSpec().start(ctx, d, startPlan{
		SessionID: id,
		Params:    device.P(protocol.ParamAction, "start", protocol.ParamSessionID, id),
		Done: []protocol.State{protocol.ScanPendingPermission, protocol.ScanScanning, protocol.ScanCompleted,
			protocol.ScanCancelled, protocol.SessionFailed},
		// Upstream-compatible: the start step succeeded once the camera page
		// waits for the tester; the state (and userActionRequired) says that
		// nothing was scanned yet.
		Success: []protocol.State{protocol.ScanPendingPermission, protocol.ScanScanning, protocol.ScanCompleted},
		Timeout: t.Timeout, Interval: t.Interval, CleanupWait: 10 * time.Second, Phase: "scan-start",
		RefuseActive: func(o device.WireObject) error {
			manual, _ := o.Flag("manualScanActive")
			attached, _ := o.Flag("protocolActivityAttached")
			if manual || attached {
				return fault.New(fault.Failed, fault.CodeSessionActive, "the camera is in use by a scan page; nothing was started").
					With("latestScan", map[string]any(o))
			}
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	return &ScanStartResult{Snapshot: res.Snapshot, Success: res.Success,
		ScanCompleted: device.StateOf(res.Snapshot) == protocol.ScanCompleted}, nil
}

// ScanStatus reads the scan snapshot: exit 2 on a mismatch or in failed.
func ScanStatus(ctx context.Context, d *device.Device, sessionID string) (map[string]any, error) {
	if err := CheckSessionID(sessionID); err != nil {
		return nil, err
	}
	o, err := scanSpec().status(ctx, d, sessionID)
	if err != nil {
		return nil, err
	}
	if device.StateOf(o) == protocol.SessionFailed {
		return nil, snapshotError(fault.CodeSessionFailed, "the scan session failed", o)
	}
	return o.Clone(), nil
}

// CancelScan cancels our scan and waits for `cancelled` (exit 0); a scan
// that completed or failed first is exit 2.
func CancelScan(ctx context.Context, d *device.Device, sessionID string, t SessionTimings) (*StopResult, error) {
	if err := RequireSessionID(sessionID); err != nil {
		return nil, err
	}
	t = t.or(15*time.Second, 500*time.Millisecond)
	return scanSpec().stop(ctx, d, stopPlan{SessionID: sessionID, Timeout: t.Timeout, Interval: t.Interval,
		Phase: "scan-cancel", Success: []protocol.State{protocol.ScanCancelled}, FailureCode: fault.CodeSessionNotStopped})
}

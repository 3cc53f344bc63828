package solopi

// Camera scanning (wire contract §13): scan-start, -status, -cancel.
// Pending camera permission and scanning both wait for a person; only
// `completed` carries content. The device never executes scanned content
// in protocol mode (contentExecuted is always false) and neither does
// the host: content is only reported.

import (
	"context"
	"regexp"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/protocol"
)

// Scan requiredUserAction texts (§13.2).
const (
	ScanActionGrantCamera = "Grant camera permission on the device"
	ScanActionAim         = "Aim the camera at a supported code"
)

// ScanCodeType maps a ZXing format name to SoloPi's codeType (§13.2).
func ScanCodeType(format string) (string, bool) {
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

var scanSessionIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// scanSpec describes the session type; a fresh value per call keeps
// the protocol tables unshared.
func scanSpec() *sessionSpec {
	return &sessionSpec{
		Name:     "scan",
		Kind:     "scan",
		Action:   protocol.ActionScan,
		Status:   P(protocol.ParamAction, "status"),
		Machine:  protocol.Scan(),
		Validate: validateScan,
		Latest:   "latestScan",
		StopParams: func(id string) Params {
			return P(protocol.ParamAction, "cancel", protocol.ParamSessionID, id)
		},
		Stoppable: []protocol.State{protocol.SessionStarting, protocol.ScanPendingPermission, protocol.ScanScanning},
	}
}

// validateScan is the strict validator of §13.3.
func validateScan(o wireObject) error {
	var v violations
	m := protocol.Scan()
	s := v.machineFlags(o, m, map[string]protocol.State{"scanning": protocol.ScanScanning})
	ua, ok := o.flag("userActionRequired")
	v.check(ok && ua == (s == protocol.ScanPendingPermission || s == protocol.ScanScanning), "userActionRequired=%v does not match state %s", o["userActionRequired"], s)
	ra, _ := o.text("requiredUserAction")
	switch s {
	case protocol.ScanPendingPermission:
		v.check(ra == ScanActionGrantCamera, "requiredUserAction must be %q while pending", ScanActionGrantCamera)
	case protocol.ScanScanning:
		v.check(ra == ScanActionAim, "requiredUserAction must be %q while scanning", ScanActionAim)
	default:
		v.check(!o.has("requiredUserAction"), "requiredUserAction present in state %s", s)
	}
	ce, ok := o.flag("contentExecuted")
	v.check(ok && !ce, "contentExecuted must be false")
	active, _ := o.flag("active")
	manual, ok1 := o.flagOrFalse("manualScanActive")
	attached, ok2 := o.flagOrFalse("protocolActivityAttached")
	v.check(ok1 && ok2, "manualScanActive and protocolActivityAttached must be booleans")
	v.check(!(active && manual), "active and manualScanActive are both true")
	v.check(!(manual && attached), "manualScanActive and protocolActivityAttached are both true")
	for _, k := range []string{"requestedAt", "startedAt", "finishedAt", "durationMs"} {
		if o.has(k) {
			_, ok := o.integer(k)
			v.check(ok, "%s is not an integer", k)
		}
	}
	if s == protocol.SessionIdle {
		v.absentAll(o, "idle", "sessionId", "content", "format", "codeType", "requestedAt", "startedAt", "finishedAt", "durationMs", "error")
		return v.err("scan status", o)
	}
	if s == "" {
		return v.err("scan status", o)
	}
	id, _ := o.text("sessionId")
	v.check(scanSessionIDPattern.MatchString(id), "sessionId %q is not a valid scan id", id)
	req, _ := o.integer("requestedAt")
	v.check(req > 0, "requestedAt must be positive")
	st, hasSt := o.integer("startedAt")
	fin, hasFin := o.integer("finishedAt")
	if hasSt {
		v.check(st >= req, "startedAt is before requestedAt")
	}
	dur, hasDur := o.integer("durationMs")
	v.iff(hasDur, hasSt && hasFin, "durationMs must be present exactly when startedAt and finishedAt are")
	if hasDur && hasSt && hasFin {
		v.check(dur == max(0, fin-st), "durationMs %d != finishedAt - startedAt", dur)
	}
	v.iff(m.IsTerminal(s), hasFin, "finishedAt must be present exactly in terminal states")
	if s == protocol.ScanScanning || s == protocol.ScanCompleted {
		v.check(hasSt, "a %s scan has no startedAt", s)
	}
	if s == protocol.SessionStarting || s == protocol.ScanPendingPermission {
		v.check(!hasSt, "a %s scan has startedAt", s)
	}
	if s == protocol.ScanCompleted {
		content, _ := o.text("content")
		format, _ := o.text("format")
		code, _ := o.text("codeType")
		want, known := ScanCodeType(format)
		v.check(content != "", "a completed scan has no content")
		v.check(known && code == want, "codeType %q does not match format %q", code, format)
	} else {
		v.absentAll(o, "a "+string(s)+" scan", "content", "format", "codeType")
	}
	v.iff(s == protocol.SessionFailed, o.has("error"), "error must be present exactly in failed")
	return v.err("scan status", o)
}

// StartScan opens a protocol scan session and waits until it is pending
// camera permission, scanning, or over. A timeout or an interrupt cancels
// exactly this session.
func StartScan(ctx context.Context, d *Device, t SessionTimings) (*SessionResult, error) {
	t = t.or(30*time.Second, 500*time.Millisecond)
	id := NewRequestID()
	res, err := scanSpec().start(ctx, d, startPlan{
		SessionID: id,
		Params:    P(protocol.ParamAction, "start", protocol.ParamSessionID, id),
		Done: []protocol.State{protocol.ScanPendingPermission, protocol.ScanScanning, protocol.ScanCompleted,
			protocol.ScanCancelled, protocol.SessionFailed},
		// Upstream-compatible: the start step succeeded once the camera page
		// waits for the tester; the state (and userActionRequired) says that
		// nothing was scanned yet.
		Success: []protocol.State{protocol.ScanPendingPermission, protocol.ScanScanning, protocol.ScanCompleted},
		Timeout: t.Timeout, Interval: t.Interval, CleanupWait: 10 * time.Second, Phase: "scan-start",
		RefuseActive: func(o wireObject) error {
			manual, _ := o.flag("manualScanActive")
			attached, _ := o.flag("protocolActivityAttached")
			if manual || attached {
				return fault.New(fault.Failed, CodeSessionActive, "the camera is in use by a scan page; nothing was started").
					With("latestScan", map[string]any(o))
			}
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	res.Object["scanCompleted"] = wireObject(res.Object).state() == protocol.ScanCompleted
	return res, nil
}

// ScanStatus reads the scan snapshot: exit 2 on a mismatch or in failed.
func ScanStatus(ctx context.Context, d *Device, sessionID string) (*SessionResult, error) {
	if err := CheckSessionID(sessionID); err != nil {
		return nil, err
	}
	o, err := scanSpec().status(ctx, d, sessionID)
	if err != nil {
		return nil, err
	}
	if o.state() == protocol.SessionFailed {
		return nil, snapshotError(outcome.ExitFailure, CodeSessionFailed, "the scan session failed", o)
	}
	return &SessionResult{Object: o.clone()}, nil
}

// CancelScan cancels our scan and waits for `cancelled` (exit 0); a scan
// that completed or failed first is exit 2.
func CancelScan(ctx context.Context, d *Device, sessionID string, t SessionTimings) (*SessionResult, error) {
	if err := RequireSessionID(sessionID); err != nil {
		return nil, err
	}
	t = t.or(15*time.Second, 500*time.Millisecond)
	return scanSpec().stop(ctx, d, stopPlan{SessionID: sessionID, Timeout: t.Timeout, Interval: t.Interval,
		Phase: "scan-cancel", Success: []protocol.State{protocol.ScanCancelled}, Detail: "scan", FailureCode: CodeSessionNotStop})
}

package soloapp

// scan: the protocol camera scanning session
// (docs/device-protocol.md#session-types). The camera's reading is supplied
// by DeliverScanResult; scanned content is never executed in protocol mode
// (contentExecuted is always false).

import (
	"context"
	"time"

	"github.com/solopi-dev/solopi/protocol"
)

var scanMachine = protocol.Scan()

// scanAttachDelay is how long QRScanActivity takes to open and attach.
const scanAttachDelay = 100 * time.Millisecond

type scanSession struct {
	id                                 string
	state                              protocol.State
	attached                           bool
	content, format                    string
	requestedAt, startedAt, finishedAt int64
	err                                string
}

// codeTypeOf maps a ZXing BarcodeFormat name to SoloPi's ScanCodeType.
func codeTypeOf(format string) (string, bool) {
	t, found := map[string]string{
		"EAN_13": "EAN-13", "EAN_8": "EAN-8", "CODE_128": "CODE 128", "CODE_39": "CODE 39",
		"QR_CODE": "QR CODE", "PDF_417": "PDF 417", "DATA_MATRIX": "Datamatrix",
	}[format]
	return t, found
}

func (a *App) stepScanLocked(s *scanSession, ev protocol.Event, errMsg string) bool {
	next, err := scanMachine.Step(s.state, ev)
	if err != nil {
		return false
	}
	s.state = next
	if next == protocol.ScanScanning && s.startedAt == 0 {
		s.startedAt = a.nowMs()
	}
	if scanMachine.IsTerminal(next) {
		s.finishedAt = a.nowMs()
		s.attached = false // the page is finished
		if next == protocol.SessionFailed {
			s.err = errMsg
		}
	}
	return true
}

// cameraReadyLocked opens the camera once the permission is there.
func (a *App) cameraReadyLocked(s *scanSession, ev protocol.Event) {
	if msg := a.ext.cameraInitError; msg != "" {
		a.stepScanLocked(s, protocol.EvError, "Unable to initialize camera scanner: "+msg)
		return
	}
	a.stepScanLocked(s, ev, "")
}

func (a *App) completeScanLocked(s *scanSession, content, format string) {
	if a.stepScanLocked(s, protocol.EvCodeRead, "") {
		s.content, s.format = content, format
	}
}

func (a *App) scanSnapshotLocked(p *process) obj {
	s := st(p).sx.scan
	o := ok("kind", "scan")
	if s == nil {
		return append(o, newObj("state", string(protocol.SessionIdle), "active", false, "terminal", false,
			"scanning", false, "userActionRequired", false, "manualScanActive", a.ext.manualScan,
			"protocolActivityAttached", false, "contentExecuted", false)...)
	}
	o.set("sessionId", s.id)
	o.set("state", string(s.state))
	o.set("active", scanMachine.IsLive(s.state))
	o.set("terminal", scanMachine.IsTerminal(s.state))
	o.set("scanning", s.state == protocol.ScanScanning)
	switch s.state {
	case protocol.ScanPendingPermission:
		o.set("userActionRequired", true)
		o.set("requiredUserAction", "Grant camera permission on the device")
	case protocol.ScanScanning:
		o.set("userActionRequired", true)
		o.set("requiredUserAction", "Aim the camera at a supported code")
	default:
		o.set("userActionRequired", false)
	}
	o.set("manualScanActive", a.ext.manualScan)
	o.set("protocolActivityAttached", s.attached)
	if s.state == protocol.ScanCompleted {
		ct, _ := codeTypeOf(s.format)
		o.set("content", s.content)
		o.set("format", s.format)
		o.set("codeType", ct)
	}
	o.set("contentExecuted", false)
	o.set("requestedAt", s.requestedAt)
	if s.startedAt != 0 {
		o.set("startedAt", s.startedAt)
	}
	if s.finishedAt != 0 {
		o.set("finishedAt", s.finishedAt)
	}
	if s.startedAt != 0 && s.finishedAt != 0 {
		o.set("durationMs", max(0, s.finishedAt-s.startedAt))
	}
	if s.err != "" {
		o.set("error", s.err)
	}
	return o
}

func (a *App) scanResolver(ctx context.Context, p *process, via transport, q params) obj {
	act := q["action"]
	switch act {
	case "status":
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.scanSnapshotLocked(p)
	case "start", "cancel":
	default:
		return e1(protocol.ErrUnsupportedAction, "Unsupported scan action: "+javaString(q, "action"))
	}
	if via != viaAdb {
		return e1(protocol.ErrMutationTransportRequired, "Scan changes require the ADB scheme transport")
	}
	sid := q["sessionId"]
	if !protocol.ValidID(sid, 128) {
		return e1(protocol.ErrInvalidSessionID, "A valid sessionId is required")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	withScan := func(code, msg string) obj { return append(e1(code, msg), kv{"scan", a.scanSnapshotLocked(p)}) }
	cur := st(p).sx.scan
	if act == "cancel" {
		switch {
		case cur == nil:
			return withScan(protocol.ErrScanNotActive, "No scan session is active")
		case cur.id != sid:
			return withScan(protocol.ErrSessionMismatch, "The scan sessionId does not match the active or latest session")
		case scanMachine.IsLive(cur.state):
			a.stepScanLocked(cur, protocol.EvCancel, "")
		}
		return a.scanSnapshotLocked(p)
	}
	switch {
	case cur != nil && scanMachine.IsLive(cur.state):
		return withScan(protocol.ErrScanConflict, "A scan session is already active")
	case a.ext.manualScan:
		return withScan(protocol.ErrManualScanActive, "A manual scan page is already active")
	case a.ext.scanActivityBusy || (cur != nil && cur.attached):
		return withScan(protocol.ErrScanActivityBusy, "The previous scan page is still closing")
	}
	s := &scanSession{id: sid, state: scanMachine.Initial, requestedAt: a.nowMs()}
	a.stepScanLocked(s, protocol.EvStart, "")
	st(p).sx.scan = s
	go func() {
		if !a.sleepDevice(p, scanAttachDelay) {
			return
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if st(p).sx.scan != s || !a.currentLocked(p) || s.state != protocol.SessionStarting {
			return
		}
		s.attached = true
		if a.ext.cameraGranted {
			a.cameraReadyLocked(s, protocol.EvCameraReady)
		} else {
			a.stepScanLocked(s, protocol.EvPermissionMissing, "")
		}
	}()
	return a.scanSnapshotLocked(p)
}

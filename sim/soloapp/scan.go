package soloapp

// scan: the protocol camera scanning session
// (docs/device-protocol.md#session-types). The camera's reading is supplied
// by DeliverScanResult; scanned content is never executed in protocol mode
// (contentExecuted is always false).

import (
	"context"
	"time"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
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
		s.startedAt = a.NowMs()
	}
	if scanMachine.IsTerminal(next) {
		s.finishedAt = a.NowMs()
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

func (a *App) scanSnapshotLocked(p *core.Process) core.Obj {
	s := st(p).sx.scan
	o := core.OK("kind", "scan")
	if s == nil {
		return append(o, core.NewObj("state", string(protocol.SessionIdle), "active", false, "terminal", false,
			"scanning", false, "userActionRequired", false, "manualScanActive", a.ext.manualScan,
			"protocolActivityAttached", false, "contentExecuted", false)...)
	}
	o.Set("sessionId", s.id)
	o.Set("state", string(s.state))
	o.Set("active", scanMachine.IsLive(s.state))
	o.Set("terminal", scanMachine.IsTerminal(s.state))
	o.Set("scanning", s.state == protocol.ScanScanning)
	switch s.state {
	case protocol.ScanPendingPermission:
		o.Set("userActionRequired", true)
		o.Set("requiredUserAction", "Grant camera permission on the device")
	case protocol.ScanScanning:
		o.Set("userActionRequired", true)
		o.Set("requiredUserAction", "Aim the camera at a supported code")
	default:
		o.Set("userActionRequired", false)
	}
	o.Set("manualScanActive", a.ext.manualScan)
	o.Set("protocolActivityAttached", s.attached)
	if s.state == protocol.ScanCompleted {
		ct, _ := codeTypeOf(s.format)
		o.Set("content", s.content)
		o.Set("format", s.format)
		o.Set("codeType", ct)
	}
	o.Set("contentExecuted", false)
	o.Set("requestedAt", s.requestedAt)
	if s.startedAt != 0 {
		o.Set("startedAt", s.startedAt)
	}
	if s.finishedAt != 0 {
		o.Set("finishedAt", s.finishedAt)
	}
	if s.startedAt != 0 && s.finishedAt != 0 {
		o.Set("durationMs", max(0, s.finishedAt-s.startedAt))
	}
	if s.err != "" {
		o.Set("error", s.err)
	}
	return o
}

func (a *App) scanResolver(ctx context.Context, p *core.Process, via core.Transport, q core.Params) core.Obj {
	act := q["action"]
	switch act {
	case "status":
		a.Mu.Lock()
		defer a.Mu.Unlock()
		return a.scanSnapshotLocked(p)
	case "start", "cancel":
	default:
		return core.E1(protocol.ErrUnsupportedAction, "Unsupported scan action: "+core.JavaString(q, "action"))
	}
	if via != core.ViaAdb {
		return core.E1(protocol.ErrMutationTransportRequired, "Scan changes require the ADB scheme transport")
	}
	sid := q["sessionId"]
	if !protocol.ValidID(sid, 128) {
		return core.E1(protocol.ErrInvalidSessionID, "A valid sessionId is required")
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	withScan := func(code, msg string) core.Obj {
		return append(core.E1(code, msg), core.KV{K: "scan", V: a.scanSnapshotLocked(p)})
	}
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
	s := &scanSession{id: sid, state: scanMachine.Initial, requestedAt: a.NowMs()}
	a.stepScanLocked(s, protocol.EvStart, "")
	st(p).sx.scan = s
	attach := core.OrDefault(a.ext.scanAttach, scanAttachDelay)
	go func() {
		if !a.SleepDevice(p, attach) {
			return
		}
		a.Mu.Lock()
		defer a.Mu.Unlock()
		if st(p).sx.scan != s || !a.CurrentLocked(p) || s.state != protocol.SessionStarting {
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

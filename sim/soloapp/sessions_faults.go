package soloapp

// Control and fault knobs of the record, scan and stress resolvers. Like faults.go they
// belong to the installation and survive Restart; the simulator's control
// endpoint exposes them.

import (
	"errors"
	"fmt"
	"time"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// ext is the installation-level state of the record, scan and stress
// resolvers.
type ext struct {
	cameraGranted    bool
	cameraInitError  string
	manualScan       bool
	scanActivityBusy bool
	// scanAttach overrides how long the scan page takes to open (0: the
	// usual scanAttachDelay).
	scanAttach time.Duration

	cpuCount          int
	stressUnavailable bool
	externalStress    bool

	recordManagerUnavailable bool
}

func (e *ext) init() {
	e.cpuCount = 8
	e.cameraGranted = true
}

// DeliverScanResult is the camera reading a code for the scanning session:
// it completes with content, the ZXing format name and SoloPi's codeType.
// Duplicate reads within 2 s are ignored by the device (it is already
// completed then), so a second call fails with ErrNoPendingSession.
func (a *App) DeliverScanResult(content, format string) error {
	if _, found := codeTypeOf(format); !found {
		return fmt.Errorf("soloapp: unsupported barcode format %q", format)
	}
	if content == "" {
		return errors.New("soloapp: empty scan content")
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	s := st(a.P).sx.scan
	if s == nil || s.state != protocol.ScanScanning {
		return fmt.Errorf("scan result: %w", core.ErrNoPendingSession)
	}
	a.completeScanLocked(s, content, format)
	return nil
}

// SetCameraPermission sets the system camera grant. Granting while a scan
// waits in pending-camera-permission moves it to scanning.
func (a *App) SetCameraPermission(granted bool) {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	a.ext.cameraGranted = granted
	if s := st(a.P).sx.scan; granted && s != nil && s.state == protocol.ScanPendingPermission {
		a.cameraReadyLocked(s, protocol.EvPermissionGranted)
	}
}

// RespondCameraPermission answers the camera permission dialog of a
// pending scan: grant → scanning (and the grant persists), deny → failed
// "Camera permission was denied".
func (a *App) RespondCameraPermission(grant bool) error {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	s := st(a.P).sx.scan
	if s == nil || s.state != protocol.ScanPendingPermission {
		return fmt.Errorf("camera permission: %w", core.ErrNoPendingSession)
	}
	if grant {
		a.ext.cameraGranted = true
		a.cameraReadyLocked(s, protocol.EvPermissionGranted)
		return nil
	}
	a.stepScanLocked(s, protocol.EvError, "Camera permission was denied")
	return nil
}

// SetCameraInitError makes the scanner's camera initialization fail with
// msg ("" restores a working camera).
func (a *App) SetCameraInitError(msg string) {
	a.Locked(func() { a.ext.cameraInitError = msg })
}

// SetManualScanActive simulates the manual scan page (home page QR entry)
// being open; it owns the camera exclusively.
func (a *App) SetManualScanActive(active bool) error {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if s := st(a.P).sx.scan; active && s != nil && (scanMachine.IsLive(s.state) || s.attached) {
		return errors.New("soloapp: the manual scan page refuses to open while a protocol scan owns the camera")
	}
	a.ext.manualScan = active
	return nil
}

// SetScanAttachDelay makes the scan page take d of device time to open and
// attach (a slow camera); 0 restores the usual delay.
func (a *App) SetScanAttachDelay(d time.Duration) {
	a.Locked(func() { a.ext.scanAttach = d })
}

// SetScanActivityBusy simulates the previous scan page still closing.
func (a *App) SetScanActivityBusy(busy bool) {
	a.Locked(func() { a.ext.scanActivityBusy = busy })
}

// CloseScanPage is the user leaving the protocol scan page: an active
// session becomes cancelled.
func (a *App) CloseScanPage() error {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	s := st(a.P).sx.scan
	if s == nil || !scanMachine.IsLive(s.state) {
		return fmt.Errorf("close scan page: %w", core.ErrNoPendingSession)
	}
	a.stepScanLocked(s, protocol.EvCancel, "")
	return nil
}

// SetAvailableProcessors sets Runtime.availableProcessors() (default 8),
// the stress cpuCount bound.
func (a *App) SetAvailableProcessors(n int) {
	a.Locked(func() { a.ext.cpuCount = max(1, n) })
}

// SetStressServiceAvailable controls whether the stress service is bound.
func (a *App) SetStressServiceAvailable(available bool) {
	a.Locked(func() { a.ext.stressUnavailable = !available })
}

// SetExternalStress simulates CPU or memory stress started from the UI.
func (a *App) SetExternalStress(active bool) {
	a.Locked(func() { a.ext.externalStress = active })
}

// SetRecordingManagerAvailable controls whether CaseRecordManager exists
// (recording_manager_unavailable when false).
func (a *App) SetRecordingManagerAvailable(available bool) {
	a.Locked(func() { a.ext.recordManagerUnavailable = !available })
}

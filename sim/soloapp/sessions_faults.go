package soloapp

// Control and fault knobs of the session resolvers. Like faults.go they
// belong to the installation and survive Restart; the simulator's control
// endpoint exposes them.

import (
	"errors"
	"fmt"
	"time"

	"github.com/solopi-dev/solopi/protocol"
)

// ext is the installation-level state of the session resolvers.
type ext struct {
	// plugins is the plugin registry (survives restarts).
	plugins map[string]*pluginEntry

	cameraGranted     bool
	cameraInitError   string
	manualScan        bool
	scanActivityBusy  bool
	screenAutoConfirm bool
	externalRecorder  bool

	perfCleanupIncomplete int
	perfProviderNotReady  bool
	manualPerfWindow      bool

	cpuCount          int
	stressUnavailable bool
	externalStress    bool

	recordManagerUnavailable bool
	pluginActivityBug        bool

	// Simulated durations (0 = the built-in default).
	videoAnalysisTime time.Duration
	pluginWorkTime    time.Duration
	encoderStartTime  time.Duration

	// internal is the app's private storage (files/…): plugin staging
	// files and the managed patch store, invisible to the adb shell.
	internal map[string][]byte
}

func (e *ext) init() {
	e.cpuCount = 8
	e.cameraGranted = true
	e.internal = map[string][]byte{}
	e.plugins = map[string]*pluginEntry{}
	e.plugins[corePluginName] = &pluginEntry{name: corePluginName, version: 1.0, core: true, builtIn: true,
		runtimeLoaded: true, hasCode: true}
	e.plugins[analyzerPluginName] = defaultAnalyzerPlugin()
}

// ErrNoPendingSession is returned by a control knob that answers a dialog
// when no session is waiting for it.
var ErrNoPendingSession = errors.New("soloapp: no session is waiting for this answer")

// ConfirmScreenRecord answers the MediaProjection system dialog of the
// pending screen recording: grant starts the encoder, refusal fails the
// session.
func (a *App) ConfirmScreenRecord(grant bool) error {
	a.mu.Lock()
	p := a.p
	s := p.sx.screen
	if s == nil || s.state != protocol.ScreenPending {
		a.mu.Unlock()
		return fmt.Errorf("screen-record confirmation: %w", ErrNoPendingSession)
	}
	a.mu.Unlock()
	a.answerScreenDialog(p, s, grant)
	return nil
}

// SetScreenRecordAutoConfirm makes every future MediaProjection dialog be
// granted by the (simulated) user 300 ms of device time after it opens.
func (a *App) SetScreenRecordAutoConfirm(on bool) {
	a.locked(func() { a.ext.screenAutoConfirm = on })
}

// SetExternalScreenRecorder simulates another SoloPi recorder (for example
// a case's startRecordScreen action) holding the ScreenRecorderLease.
func (a *App) SetExternalScreenRecorder(active bool) {
	a.locked(func() { a.ext.externalRecorder = active })
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
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.p.sx.scan
	if s == nil || s.state != protocol.ScanScanning {
		return fmt.Errorf("scan result: %w", ErrNoPendingSession)
	}
	a.completeScanLocked(s, content, format)
	return nil
}

// SetCameraPermission sets the system camera grant. Granting while a scan
// waits in pending-camera-permission moves it to scanning.
func (a *App) SetCameraPermission(granted bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ext.cameraGranted = granted
	if s := a.p.sx.scan; granted && s != nil && s.state == protocol.ScanPendingPermission {
		a.cameraReadyLocked(s, protocol.EvPermissionGranted)
	}
}

// RespondCameraPermission answers the camera permission dialog of a
// pending scan: grant → scanning (and the grant persists), deny → failed
// "Camera permission was denied".
func (a *App) RespondCameraPermission(grant bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.p.sx.scan
	if s == nil || s.state != protocol.ScanPendingPermission {
		return fmt.Errorf("camera permission: %w", ErrNoPendingSession)
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
	a.locked(func() { a.ext.cameraInitError = msg })
}

// SetManualScanActive simulates the manual scan page (home page QR entry)
// being open; it owns the camera exclusively.
func (a *App) SetManualScanActive(active bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.p.sx.scan; active && s != nil && (scanMachine.IsLive(s.state) || s.attached) {
		return errors.New("soloapp: the manual scan page refuses to open while a protocol scan owns the camera")
	}
	a.ext.manualScan = active
	return nil
}

// SetScanActivityBusy simulates the previous scan page still closing.
func (a *App) SetScanActivityBusy(busy bool) {
	a.locked(func() { a.ext.scanActivityBusy = busy })
}

// CloseScanPage is the user leaving the protocol scan page: an active
// session becomes cancelled.
func (a *App) CloseScanPage() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.p.sx.scan
	if s == nil || !scanMachine.IsLive(s.state) {
		return fmt.Errorf("close scan page: %w", ErrNoPendingSession)
	}
	a.stepScanLocked(s, protocol.EvCancel, "")
	return nil
}

// SetPerfCleanupIncomplete makes the next n performance (recording or
// display) stops leave their cleanup incomplete: the session stays
// stopping with stopRetryable:true.
func (a *App) SetPerfCleanupIncomplete(n int) {
	a.locked(func() { a.ext.perfCleanupIncomplete = max(0, n) })
}

// SetPerfProviderReady controls whether the DisplayProvider service is
// bound ("Performance display service is not ready" when false).
func (a *App) SetPerfProviderReady(ready bool) {
	a.locked(func() { a.ext.perfProviderNotReady = !ready })
}

// SetManualPerformanceWindow simulates the manual performance floating
// window running the CPU item, which blocks both protocol leases.
func (a *App) SetManualPerformanceWindow(running bool) {
	a.locked(func() { a.ext.manualPerfWindow = running })
}

// SetAvailableProcessors sets Runtime.availableProcessors() (default 8),
// the stress cpuCount bound.
func (a *App) SetAvailableProcessors(n int) {
	a.locked(func() { a.ext.cpuCount = max(1, n) })
}

// SetStressServiceAvailable controls whether the stress service is bound.
func (a *App) SetStressServiceAvailable(available bool) {
	a.locked(func() { a.ext.stressUnavailable = !available })
}

// SetExternalStress simulates CPU or memory stress started from the UI.
func (a *App) SetExternalStress(active bool) {
	a.locked(func() { a.ext.externalStress = active })
}

// SetRecordingManagerAvailable controls whether CaseRecordManager exists
// (recording_manager_unavailable when false).
func (a *App) SetRecordingManagerAvailable(available bool) {
	a.locked(func() { a.ext.recordManagerUnavailable = !available })
}

// SetPluginActivityBug reproduces the real v1.0.2 app's plugin activity check
// bug (docs/device-protocol.md#known-device-quirks): plugin import and remove
// ask the display resolver for mode=status, get "not handled" and always fail
// with activity_status_unavailable. Off by default: the simulator behaves as
// the protocol intends.
func (a *App) SetPluginActivityBug(on bool) {
	a.locked(func() { a.ext.pluginActivityBug = on })
}

// InstallPlugin puts a plugin straight into the registry (as if installed
// from the app's settings); it is runtime-loaded only after a restart.
func (a *App) InstallPlugin(name string, version float64) error {
	if !protocol.ValidID(name, 64) || name == corePluginName {
		return fmt.Errorf("soloapp: invalid plugin name %q", name)
	}
	if version <= 0 {
		return fmt.Errorf("soloapp: invalid plugin version %v", version)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	e := &pluginEntry{name: name, version: version, hasCode: true, dependencies: []string{}}
	if name == analyzerPluginName {
		e = defaultAnalyzerPlugin()
		e.version = version
		e.runtimeLoaded = false
	}
	a.ext.plugins[name] = e
	return nil
}

// UninstallPlugin removes a plugin from the registry (the analyzer
// hulu_screenRecord included, which makes video analysis answer
// plugin_missing). The built-in hulu_hotPatch cannot be removed.
func (a *App) UninstallPlugin(name string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.ext.plugins[name]
	if e == nil {
		return fmt.Errorf("soloapp: plugin %q is not installed", name)
	}
	if e.core {
		return fmt.Errorf("soloapp: plugin %q is a core plugin", name)
	}
	delete(a.ext.plugins, name)
	return nil
}

// SetVideoAnalysisDuration sets how long (device time) a simulated video
// analysis runs before its receipt completes (default 1.5 s).
func (a *App) SetVideoAnalysisDuration(d time.Duration) {
	a.locked(func() { a.ext.videoAnalysisTime = d })
}

// SetPluginMutationDelay sets how long (device time) a plugin import or
// remove stays in_progress before its background work finishes (default
// 300 ms).
func (a *App) SetPluginMutationDelay(d time.Duration) {
	a.locked(func() { a.ext.pluginWorkTime = d })
}

// SetScreenEncoderDelay sets how long (device time) the recorder service
// takes from the granted dialog to a running encoder (default 200 ms), the
// window in which a stop is a cancellation before start.
func (a *App) SetScreenEncoderDelay(d time.Duration) {
	a.locked(func() { a.ext.encoderStartTime = d })
}

// orDefault returns d unless it is zero.
func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

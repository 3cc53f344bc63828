package core

import (
	"fmt"
	"slices"
	"time"
)

// AdbConnectOutcome is what a simulated internal ADB connection attempt does.
type AdbConnectOutcome int

// Internal ADB connection outcomes (fault knob of adb-connect).
const (
	// AdbConnectSucceed connects after the configured delay and grants the
	// adb permission.
	AdbConnectSucceed AdbConnectOutcome = iota
	// AdbConnectFail fails after the delay with adb_connection_failed.
	AdbConnectFail
	// AdbConnectHang never finishes (the RSA prompt is never confirmed).
	AdbConnectHang
	// AdbConnectScheduleFail makes scheduling throw
	// (adb_connection_schedule_failed).
	AdbConnectScheduleFail
)

// faults are the simulator's fault-injection knobs. They belong to the
// installation, not the process, so they survive Restart.
type faults struct {
	ConfigIgnored    map[string]bool
	SettleDelay      time.Duration
	FailSettle       bool
	AdbOutcome       AdbConnectOutcome
	AdbDelay         time.Duration
	TouchUnavailable bool
	OpUnavailable    bool
	// PermDialog is how long the replay's permission dialog takes to
	// answer (default 10 ms, the callback delay after the dialog closes).
	PermDialog time.Duration
}

// Locked runs fn under the app lock: the knobs below are plain field
// writes that the resolvers read under the same lock.
func (a *App) Locked(fn func()) {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	fn()
}

func (f *faults) Init() { f.ConfigIgnored = map[string]bool{} }

// SetPermission grants or revokes one of the five health permissions (adb,
// float, background, powerSave, accessibility). background is a placeholder
// on the device and is always reported true whatever is set here.
func (a *App) SetPermission(name string, granted bool) error {
	if !slices.Contains(PermissionNames, name) {
		return fmt.Errorf("soloapp: unknown permission %q", name)
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	a.Perms[name] = granted
	return nil
}

// SetAppInitialized forces app init finished (true; the HTTP server then
// starts 5 s later) or not finished (false) for the current process.
func (a *App) SetAppInitialized(v bool) {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	a.initDoneLocked() // latch an init that already happened
	if v && !a.InitializedLocked() {
		a.P.InitAt = a.Clk.Now()
	}
	a.P.initForced = &v
	a.initDoneLocked()
}

// SetConfigWriteIgnored makes config?action=set for key answer as usual but
// keep the old value, so a host's read-back detects an unconfirmed change.
func (a *App) SetConfigWriteIgnored(key string, ignore bool) {
	a.Locked(func() { a.Faults.ConfigIgnored[key] = ignore })
}

// SetSettleDelay delays every Agent settle by d of device time before its
// first poll (a slow UI).
func (a *App) SetSettleDelay(d time.Duration) {
	a.Locked(func() { a.Faults.SettleDelay = d })
}

// FailSettle makes every Agent settle fail ("The device action or settle
// failed"), which fails the step and the session.
func (a *App) FailSettle(fail bool) {
	a.Locked(func() { a.Faults.FailSettle = fail })
}

// SetAdbConnectOutcome sets what the next internal ADB connection attempts
// do and how long they take (0 keeps Config.AdbConnectDelay).
func (a *App) SetAdbConnectOutcome(o AdbConnectOutcome, delay time.Duration) {
	a.Locked(func() {
		a.Faults.AdbOutcome = o
		a.Faults.AdbDelay = delay
	})
}

// SetTouchServiceAvailable controls whether the Agent touch service starts
// (false: agent start fails the new session with touch_service_unavailable).
func (a *App) SetTouchServiceAvailable(v bool) {
	a.Locked(func() { a.Faults.TouchUnavailable = !v })
}

// SetOperationServiceAvailable controls whether SoloPi's OperationService
// is bound (false: observe answers operation_service_unavailable and act
// steps fail with "Operation service is unavailable").
func (a *App) SetOperationServiceAvailable(v bool) {
	a.Locked(func() { a.Faults.OpUnavailable = !v })
}

// SetPermissionDialogDelay sets how long the replay's permission request (the
// permission step of a replay start, docs/device-protocol.md#replay) takes to
// answer; a long delay opens the window in which a cancel arrives before the
// replay manager starts.
func (a *App) SetPermissionDialogDelay(d time.Duration) {
	a.Locked(func() { a.Faults.PermDialog = d })
}

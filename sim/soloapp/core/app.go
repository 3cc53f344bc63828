package core

import (
	"context"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/protocol"
)

// Permission names of harness?type=health (docs/device-protocol.md#harness).
const (
	PermADB           = "adb"
	PermFloat         = "float"
	PermBackground    = "background"
	PermPowerSave     = "powerSave"
	PermAccessibility = "accessibility"
)

// PermissionNames is the health object's key order.
var PermissionNames = []string{PermADB, PermFloat, PermBackground, PermPowerSave, PermAccessibility}

// DeviceInfo is harness?type=info's device object
// (docs/device-protocol.md#harness).
type DeviceInfo struct {
	Manufacturer, Brand, Model, Product string
	AndroidVersion                      string
	SDK                                 int
	SupportedAbis                       []string
}

// Config configures one simulated SoloPi installation. The zero value is
// usable: every empty field takes the real app's default.
type Config struct {
	// Package is the app package (default com.alipay.hulu).
	Package string
	// DevicePort is the initial KEY_CONTROL_PORT (default 23342).
	DevicePort int
	// SolopiDir is the SoloPi data root (default /storage/emulated/0/solopi).
	SolopiDir string
	// ExternalFilesDir is getExternalFilesDir(null) (default
	// /storage/emulated/0/Android/data/<pkg>/files).
	ExternalFilesDir string
	VersionName      string // default 1.0.2
	VersionCode      int64  // default 37
	Device           DeviceInfo
	// DeniedPermissions names the permissions (adb, float, background,
	// powerSave, accessibility) that are NOT granted at first start; all
	// others are.
	DeniedPermissions []string
	// Settings are initial SharedPreferences values, key → wire text, as if
	// set through config?action=set (any of the 25 keys, writable or not).
	Settings map[string]string
	// InitDelay is the device time from process start to "app init
	// finished" (default 0). The HTTP server starts 5 s after that.
	InitDelay time.Duration
	// AdbConnectDelay is how long a simulated internal ADB connection
	// attempt takes (default 1.5 s device time).
	AdbConnectDelay time.Duration
}

func (c *Config) Fill() {
	if c.Package == "" {
		c.Package = protocol.DefaultPackage
	}
	if c.DevicePort == 0 {
		c.DevicePort = protocol.DefaultDevicePort
	}
	if c.SolopiDir == "" {
		c.SolopiDir = "/storage/emulated/0/solopi"
	}
	if c.ExternalFilesDir == "" {
		c.ExternalFilesDir = "/storage/emulated/0/Android/data/" + c.Package + "/files"
	}
	if c.VersionName == "" {
		c.VersionName = "1.0.2"
	}
	if c.VersionCode == 0 {
		c.VersionCode = 37
	}
	d := &c.Device
	if d.Manufacturer == "" {
		d.Manufacturer = "Google"
	}
	if d.Brand == "" {
		d.Brand = "google"
	}
	if d.Model == "" {
		d.Model = "Pixel 6"
	}
	if d.Product == "" {
		d.Product = "oriole"
	}
	if d.AndroidVersion == "" {
		d.AndroidVersion = "13"
	}
	if d.SDK == 0 {
		d.SDK = 33
	}
	if len(d.SupportedAbis) == 0 {
		d.SupportedAbis = []string{"arm64-v8a", "armeabi-v7a", "armeabi"}
	}
	if c.AdbConnectDelay == 0 {
		c.AdbConnectDelay = 1500 * time.Millisecond
	}
}

// Transport is how a request reached the resolvers.
type Transport int

const (
	ViaHTTP   Transport = iota // NanoHTTPD, application context
	ViaAdb                     // AdbSchemeActivity (protected)
	ViaPublic                  // SchemeActivity (deep link)
)

func (t Transport) String() string {
	switch t {
	case ViaAdb:
		return "adb-scheme"
	case ViaPublic:
		return "public-scheme"
	}
	return "http"
}

// appCore is the state every resolver shares: configuration, phone, clock,
// the app lock, SharedPreferences, system permissions, fault knobs and the
// current process.
type App struct {
	Cfg   Config
	Phone Phone
	Clk   clock.Clock

	Mu sync.Mutex
	// Persistent state (SharedPreferences, system permissions).
	Settings map[string]any
	Perms    map[string]bool
	Faults   faults
	// P is the current process; replaced by Restart.
	P *Process
	// RuntimeSessions counts the RuntimeSessionGuard sessions of a process
	// (the app wires it to every feature's sessions).
	RuntimeSessions func(p *Process) int
}

// Process is everything that dies with the app process. The features keep
// their own per-process state in slots (see Slot).
type Process struct {
	Ctx    context.Context
	Cancel context.CancelFunc
	// initForced overrides the init timer (SetAppInitialized).
	initForced *bool
	InitAt     time.Time
	initDone   time.Time

	Lease lease
	slots []any
}

// slotMakers create the per-process state of every registered Slot.
var slotMakers []func() any

// slot is one feature's per-process state: a new process gets a fresh T, so
// Restart drops it with the process (docs/device-protocol.md#app-restart).
type slot[T any] struct{ i int }

// NewSlot registers a per-process state made by mk; call it at package
// initialization only.
func NewSlot[T any](mk func() *T) slot[T] {
	slotMakers = append(slotMakers, func() any { return mk() })
	return slot[T]{i: len(slotMakers) - 1}
}

// Of is p's state of the slot.
func (s slot[T]) Of(p *Process) *T { return p.slots[s.i].(*T) }

func (a *App) NewProcess() *Process {
	ctx, cancel := context.WithCancel(context.Background())
	p := &Process{Ctx: ctx, Cancel: cancel, InitAt: a.Clk.Now().Add(a.Cfg.InitDelay), slots: make([]any, len(slotMakers))}
	for i, mk := range slotMakers {
		p.slots[i] = mk()
	}
	return p
}

// Package is the app's package name.
func (a *App) Package() string { return a.Cfg.Package }

// SolopiDir is the SoloPi data root on the device.
func (a *App) SolopiDir() string {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	return a.SolopiDirLocked()
}

// SolopiDirLocked is KEY_BASE_DIR when set (it overrides the root;
// docs/device-protocol.md#device-files), else the configured root.
func (a *App) SolopiDirLocked() string {
	if d := a.StringSetting("KEY_BASE_DIR"); d != "" {
		return NormPath(d)
	}
	return a.Cfg.SolopiDir
}

// InitializedLocked reports whether app init has finished.
func (a *App) InitializedLocked() bool {
	if a.P.initForced != nil {
		return *a.P.initForced
	}
	return !a.Clk.Now().Before(a.P.InitAt)
}

// Initialized reports whether app init has finished.
func (a *App) Initialized() bool {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	return a.InitializedLocked()
}

// HTTPReady reports whether the NanoHTTPD server is listening (5 s of device
// time after init). A front end that can refuse connections should do so
// while this is false; ServeHTTP itself answers the No Valid Listener body.
func (a *App) HTTPReady() bool {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	return a.HttpReadyLocked()
}

func (a *App) HttpReadyLocked() bool {
	done, ok := a.initDoneLocked()
	return ok && !a.Clk.Now().Before(done.Add(protocol.HTTPServerStartDelayMs*time.Millisecond))
}

// initDoneLocked latches the moment app init first finished in this
// process: the HTTP server starts 5 s after it and then keeps running.
func (a *App) initDoneLocked() (time.Time, bool) {
	p := a.P
	if !p.initDone.IsZero() {
		return p.initDone, true
	}
	if !a.InitializedLocked() {
		return time.Time{}, false
	}
	p.initDone = p.InitAt
	return p.initDone, true
}

// NowMs is the device's System.currentTimeMillis().
func (a *App) NowMs() int64 { return a.Clk.Now().UnixMilli() }

func (a *App) Logi(tag, msg string) { a.Phone.Log('I', tag, msg) }

// DevicePort is the current KEY_CONTROL_PORT, where the HTTP front listens.
func (a *App) DevicePort() int {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	return int(a.IntSetting(KeyControlPort))
}

// AppList is SoloPi's cached installed-application list (SoloPi itself and,
// unless KEY_DISPLAY_SYSTEM_APP, system apps excluded), which also gates
// targetApp for record and performance (docs/device-protocol.md#harness).
func (a *App) AppList() []AppInfo {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	return a.AppListLocked()
}

// Permission reports one of the five health permissions as health shows it.
func (a *App) Permission(name string) bool {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	return a.PermissionLocked(name)
}

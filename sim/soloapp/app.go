// Package soloapp is the device side of SoloPi v1.0.2 (the app
// com.alipay.hulu) for the simulator: all 13 scheme actions (harness, replay,
// config, status, agent and the session resolvers performance, record,
// screen-record, scan, video-analysis, stress, history and plugin, see
// sessions.go), reachable through the read-only HTTP channel (ServeHTTP) and
// the DUMP-protected / public scheme activities (HandleActivity), as
// docs/device-protocol.md describes.
//
// The phone is an interface (Phone) so this package does not depend on the
// virtual Android implementation; every delay and timestamp goes through a
// clock.Clock so the simulator's time scale applies.
package soloapp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/clock"
)

// Permission names of harness?type=health (docs/device-protocol.md#harness).
const (
	PermADB           = "adb"
	PermFloat         = "float"
	PermBackground    = "background"
	PermPowerSave     = "powerSave"
	PermAccessibility = "accessibility"
)

// permissionNames is the health object's key order.
var permissionNames = []string{PermADB, PermFloat, PermBackground, PermPowerSave, PermAccessibility}

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

func (c *Config) fill() {
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

// Resolver handles one scheme action outside the five core ones
// (performance, record, …); New registers built-in ones, and the lead can
// plug replacements in. It
// returns the JSON body and whether it handled the request; a panic is
// reported like a Java exception thrown out of processScheme.
type Resolver func(ctx context.Context, req Request) (body []byte, handled bool)

// Request is one scheme invocation as a plugged-in Resolver sees it.
type Request struct {
	Action string
	Params map[string]string
	// Protected is true only for the DUMP-protected AdbSchemeActivity.
	Protected bool
	// Transport is "http", "adb-scheme" or "public-scheme".
	Transport string
}

// transport is how a request reached the resolvers.
type transport int

const (
	viaHTTP   transport = iota // NanoHTTPD, application context
	viaAdb                     // AdbSchemeActivity (protected)
	viaPublic                  // SchemeActivity (deep link)
)

func (t transport) String() string {
	switch t {
	case viaAdb:
		return "adb-scheme"
	case viaPublic:
		return "public-scheme"
	}
	return "http"
}

// App is one SoloPi installation on one simulated phone. Settings, cases and
// files survive Restart; every in-memory identity lives in the process value
// and is lost with it (docs/device-protocol.md#app-restart).
type App struct {
	*appCore
	// Persistent state (the case DB) and the resolver chain.
	cases      []*caseRow
	nextCaseID int64
	resolvers  map[string]Resolver
	// ext is the installation-level state of the record, scan and stress
	// resolvers (their fault knobs); it survives Restart.
	ext ext

	// The feature resolvers; embedded so their control knobs are the App's.
	*Agent
	*Perf
	*Media
	*Plugins
	*History
}

// appCore is the state every resolver shares: configuration, phone, clock,
// the app lock, SharedPreferences, system permissions, fault knobs and the
// current process.
type appCore struct {
	cfg   Config
	phone Phone
	clk   clock.Clock

	mu sync.Mutex
	// Persistent state (SharedPreferences, system permissions).
	settings map[string]any
	perms    map[string]bool
	faults   faults
	// p is the current process; replaced by Restart.
	p *process
	// runtimeSessions counts the RuntimeSessionGuard sessions of a process
	// (the app wires it to every feature's sessions).
	runtimeSessions func(p *process) int
}

// process is everything that dies with the app process. The features keep
// their own per-process state in slots (see Slot).
type process struct {
	ctx    context.Context
	cancel context.CancelFunc
	// initForced overrides the init timer (SetAppInitialized).
	initForced *bool
	initAt     time.Time
	initDone   time.Time

	lease lease
	slots []any
}

// slotMakers create the per-process state of every registered Slot.
var slotMakers []func() any

// Slot is one feature's per-process state: a new process gets a fresh T, so
// Restart drops it with the process (docs/device-protocol.md#app-restart).
type Slot[T any] struct{ i int }

// NewSlot registers a per-process state made by mk; call it at package
// initialization only.
func NewSlot[T any](mk func() *T) Slot[T] {
	slotMakers = append(slotMakers, func() any { return mk() })
	return Slot[T]{i: len(slotMakers) - 1}
}

// Of is p's state of the slot.
func (s Slot[T]) Of(p *process) *T { return p.slots[s.i].(*T) }

// appProc is the per-process state of the resolvers the app package
// implements itself.
type appProc struct {
	harness       *harnessRun
	harnessSeq    int
	importReceipt obj
	deleteReceipt obj
	adb           adbStore
	recording     bool
	// sx holds the in-memory sessions of record, scan and stress.
	sx sessions
}

var procSlot = NewSlot(func() *appProc { return &appProc{} })

// st is the app package's state of process p.
func st(p *process) *appProc { return procSlot.Of(p) }

// New creates the app and starts its process: app init finishes after
// cfg.InitDelay and the HTTP server answers 5 s (device time) later.
func New(cfg Config, phone Phone, clk clock.Clock) *App {
	cfg.fill()
	a := &App{
		appCore: &appCore{
			cfg:      cfg,
			phone:    phone,
			clk:      clk,
			settings: map[string]any{},
			perms:    map[string]bool{},
		},
		resolvers:  map[string]Resolver{},
		nextCaseID: 1,
	}
	a.runtimeSessions = a.runtimeSessionsLocked
	a.faults.init()
	for _, n := range permissionNames {
		a.perms[n] = true
	}
	for _, n := range cfg.DeniedPermissions {
		a.perms[n] = false
	}
	a.settings[keyControlPort] = int64(cfg.DevicePort)
	for k, v := range cfg.Settings {
		if spec, found := configSpecByKey(k); found {
			if val, msg := spec.parse(v); msg == "" {
				a.settings[k] = val
			}
		}
	}
	a.ext.init()
	a.Agent = &Agent{appCore: a.appCore}
	a.Perf = &Perf{appCore: a.appCore}
	a.Plugins = newPlugins(a.appCore, a.Perf)
	a.Media = &Media{appCore: a.appCore, plugins: a.Plugins}
	a.History = &History{appCore: a.appCore, perf: a.Perf, replayLiveLocked: replayLiveLocked}
	a.p = a.newProcess()
	a.registerSessionResolvers()
	return a
}

func (a *appCore) newProcess() *process {
	ctx, cancel := context.WithCancel(context.Background())
	p := &process{ctx: ctx, cancel: cancel, initAt: a.clk.Now().Add(a.cfg.InitDelay), slots: make([]any, len(slotMakers))}
	for i, mk := range slotMakers {
		p.slots[i] = mk()
	}
	return p
}

// Package is the app's package name.
func (a *appCore) Package() string { return a.cfg.Package }

// SolopiDir is the SoloPi data root on the device.
func (a *appCore) SolopiDir() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.solopiDirLocked()
}

// solopiDirLocked is KEY_BASE_DIR when set (it overrides the root;
// docs/device-protocol.md#device-files), else the configured root.
func (a *appCore) solopiDirLocked() string {
	if d := a.stringSetting("KEY_BASE_DIR"); d != "" {
		return normPath(d)
	}
	return a.cfg.SolopiDir
}

// RegisterResolver plugs in the resolver for an action outside the five
// core ones. New already registers this package's session resolvers
// (performance, record, screen-record, scan, video-analysis, stress,
// history, plugin); registering the same action replaces that one.
func (a *App) RegisterResolver(action string, r Resolver) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.resolvers[action] = r
}

// initializedLocked reports whether app init has finished.
func (a *appCore) initializedLocked() bool {
	if a.p.initForced != nil {
		return *a.p.initForced
	}
	return !a.clk.Now().Before(a.p.initAt)
}

// Initialized reports whether app init has finished.
func (a *appCore) Initialized() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.initializedLocked()
}

// HTTPReady reports whether the NanoHTTPD server is listening (5 s of device
// time after init). A front end that can refuse connections should do so
// while this is false; ServeHTTP itself answers the No Valid Listener body.
func (a *appCore) HTTPReady() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.httpReadyLocked()
}

func (a *appCore) httpReadyLocked() bool {
	done, ok := a.initDoneLocked()
	return ok && !a.clk.Now().Before(done.Add(protocol.HTTPServerStartDelayMs*time.Millisecond))
}

// initDoneLocked latches the moment app init first finished in this
// process: the HTTP server starts 5 s after it and then keeps running.
func (a *appCore) initDoneLocked() (time.Time, bool) {
	p := a.p
	if !p.initDone.IsZero() {
		return p.initDone, true
	}
	if !a.initializedLocked() {
		return time.Time{}, false
	}
	p.initDone = p.initAt
	return p.initDone, true
}

// Restart kills the app process and starts a new one: the replay snapshot,
// receipts, Agent session, generation counter and leases are lost; settings,
// cases and files survive. The HTTP server answers again 5 s after init.
func (a *App) Restart() {
	a.mu.Lock()
	old := a.p
	a.p = a.newProcess()
	// Installed plugins become fully active only with a new process.
	a.Plugins.restarted()
	a.mu.Unlock()
	old.cancel()
	a.logi("SoloPi", "process restarted")
}

// nowMs is the device's System.currentTimeMillis().
func (a *appCore) nowMs() int64 { return a.clk.Now().UnixMilli() }

func (a *appCore) logi(tag, msg string) { a.phone.Log('I', tag, msg) }

// HandleActivity processes `am start -n <pkg>/<component> -d <uri>`. The
// component is the protected AdbSchemeActivity or the public SchemeActivity
// (full or short class form). Results are only logged, as on the device; an
// error means the component is not one of SoloPi's scheme activities.
func (a *App) HandleActivity(ctx context.Context, component, dataURI string) error {
	pkg, cls, found := strings.Cut(component, "/")
	if !found {
		cls, pkg = component, a.cfg.Package
	}
	if strings.HasPrefix(cls, ".") {
		cls = pkg + cls
	}
	if pkg != a.cfg.Package {
		return fmt.Errorf("soloapp: component %q does not belong to %s", component, a.cfg.Package)
	}
	var via transport
	switch cls {
	case protocol.AdbSchemeActivity:
		via = viaAdb
	case protocol.SchemeActivity:
		via = viaPublic
	default:
		return fmt.Errorf("soloapp: unknown activity %q", cls)
	}
	a.mu.Lock()
	ready := a.initializedLocked()
	p := a.p
	a.mu.Unlock()
	if ready {
		a.processIntent(ctx, p, via, dataURI)
		return nil
	}
	// Not initialized: the activity shows its wait layout and polls every
	// 50 ms; am start returns meanwhile.
	go func() {
		for {
			if err := a.clk.Sleep(p.ctx, 50*time.Millisecond); err != nil {
				return
			}
			a.mu.Lock()
			ready, same := a.initializedLocked(), a.p == p
			a.mu.Unlock()
			if !same {
				return
			}
			if ready {
				a.processIntent(p.ctx, p, via, dataURI)
				return
			}
		}
	}()
	return nil
}

func (a *App) processIntent(ctx context.Context, p *process, via transport, dataURI string) {
	tag := "AdbSchemeActivity"
	if via == viaPublic {
		tag = "SchemeActivity"
	}
	u := ParseSchemeURI(dataURI)
	if len(u.Segments) != 1 {
		a.logi(tag, "not a single-segment scheme uri, starting origin")
		_ = a.phone.LaunchApp(a.cfg.Package)
		return
	}
	body, handled, panicked := a.dispatch(ctx, p, via, u.Segments[0], u.Params)
	if !handled || panicked {
		a.logi(tag, "scheme not handled: "+u.Segments[0])
		_ = a.phone.LaunchApp(a.cfg.Package)
		return
	}
	a.logi(tag, "scheme "+u.Segments[0]+" result: "+string(body))
}

// DevicePort is the current KEY_CONTROL_PORT, where the HTTP front listens.
func (a *appCore) DevicePort() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return int(a.intSetting(keyControlPort))
}

// AppList is SoloPi's cached installed-application list (SoloPi itself and,
// unless KEY_DISPLAY_SYSTEM_APP, system apps excluded), which also gates
// targetApp for record and performance (docs/device-protocol.md#harness).
func (a *appCore) AppList() []AppInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.appListLocked()
}

// Permission reports one of the five health permissions as health shows it.
func (a *appCore) Permission(name string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.permissionLocked(name)
}

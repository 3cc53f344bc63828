package android

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/sim/android/appspec"
	"github.com/solopi-dev/solopi/sim/android/vfs"
)

// Config describes the simulated handset. Zero fields get the defaults of a
// typical 2020s phone (see withDefaults).
type Config struct {
	Serial         string
	Width, Height  int // screen size in pixels, default 1080x2340
	Density        int // dpi, default 440
	Model          string
	Brand          string
	Manufacturer   string
	Product        string
	Device         string
	AndroidVersion string // ro.build.version.release, default "14"
	SDK            int    // ro.build.version.sdk, default 34
	CPUs           int    // online processors, default 8
	// Apps are the installed apps; nil installs appspec.DefaultApps().
	Apps []*appspec.AppSpec
	// LogcatLines bounds the logcat ring buffer (default 5000 entries).
	LogcatLines int
	// Props adds or overrides getprop values.
	Props map[string]string
}

func (c Config) withDefaults() Config {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&c.Serial, "sim-0001")
	def(&c.Model, "Pixel 7")
	def(&c.Brand, "google")
	def(&c.Manufacturer, "Google")
	def(&c.Product, "panther")
	def(&c.Device, "panther")
	def(&c.AndroidVersion, "14")
	if c.Width <= 0 || c.Height <= 0 {
		c.Width, c.Height = appspec.RefWidth, appspec.RefHeight
	}
	if c.Density <= 0 {
		c.Density = 440
	}
	if c.SDK <= 0 {
		c.SDK = 34
	}
	if c.CPUs <= 0 {
		c.CPUs = 8
	}
	if c.LogcatLines <= 0 {
		c.LogcatLines = 5000
	}
	return c
}

// Phone is one simulated handset. Create it with New; all methods are safe
// for concurrent use.
type Phone struct {
	cfg  Config
	clk  clock.Clock
	fs   *vfs.FS
	logs *logBuffer

	mu       sync.Mutex
	apps     map[string]*appRuntime
	tasks    []*task // bottom first; the last one is in front
	handlers map[string]activityHandler
	ime      imeState
	focus    fieldFocus
	overlays []*overlay
	settings map[string]string // "namespace/key" -> value
	props    map[string]string

	nextPID    int
	nextTaskID int
	nextOvl    int
	launchSeq  int

	shotErr   error
	shotDelay time.Duration
	stalls    map[string]*commandStall    // by shell command name (stall.go)
	overrides map[string]*commandOverride // by shell command name (command_fault.go)
	procs     procTable                   // the shell's signalable commands (procs.go)
	shotCache struct {
		version uint64
		png     []byte
	}
	shots shotEncodings // recent screens' PNGs by their pixels (render.go)

	version   uint64
	changed   chan struct{}
	listeners map[int]func()
	procLis   map[int]func(pkg string, alive bool)
	nextLis   int
	procEvts  []procEvent
}

type procEvent struct {
	pkg   string
	alive bool
}

// activityHandler receives intents for a registered component.
type activityHandler func(ctx context.Context, in Intent) error

// New boots a phone: installs the configured apps, starts the launcher and
// selects the default keyboard.
func New(cfg Config, clk clock.Clock) *Phone {
	cfg = cfg.withDefaults()
	if clk == nil {
		clk = clock.NewScaled(1)
	}
	p := &Phone{
		cfg:        cfg,
		clk:        clk,
		apps:       map[string]*appRuntime{},
		handlers:   map[string]activityHandler{},
		settings:   map[string]string{},
		changed:    make(chan struct{}),
		listeners:  map[int]func(){},
		procLis:    map[int]func(string, bool){},
		nextPID:    4100,
		nextTaskID: 10,
	}
	p.shots.list.Size = shotEncodingsKept
	p.fs = vfs.New(clk)
	p.logs = newLogBuffer(cfg.LogcatLines, clk)
	p.props = p.defaultProps()
	specs := cfg.Apps
	if specs == nil {
		specs = appspec.DefaultApps()
	}
	for _, s := range specs {
		p.apps[s.Package] = newAppRuntime(s)
	}
	p.ime = newIMEState()
	p.settings["secure/default_input_method"] = p.ime.current
	p.settings["secure/enabled_input_methods"] = p.ime.enabledList()
	p.Log('I', "SystemServer", "Entered the Android system server!")
	p.mu.Lock()
	p.ensureLauncherLocked()
	p.procEvts = nil
	p.mu.Unlock()
	p.Log('I', "ActivityManager", "Boot completed")
	return p
}

// Clock returns the phone's clock.
func (p *Phone) Clock() clock.Clock { return p.clk }

// Config returns the effective configuration (defaults filled in).
func (p *Phone) Config() Config { return p.cfg }

// Serial is the adb serial number.
func (p *Phone) Serial() string { return p.cfg.Serial }

// ScreenSize returns the screen size in pixels.
func (p *Phone) ScreenSize() (w, h int) { return p.cfg.Width, p.cfg.Height }

// FS returns the phone's file system.
func (p *Phone) FS() *vfs.FS { return p.fs }

// Version is a counter that grows with every change of what is on screen
// (windows, trees, texts, focus). Callers compare versions to see whether
// the UI moved, e.g. to wait for it to settle.
func (p *Phone) Version() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.version
}

// WaitChange blocks until the version is greater than since or ctx ends, and
// returns the current version.
func (p *Phone) WaitChange(ctx context.Context, since uint64) (uint64, error) {
	for {
		p.mu.Lock()
		v, ch := p.version, p.changed
		p.mu.Unlock()
		if v > since {
			return v, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return v, fmt.Errorf("wait for a UI change: %w", ctx.Err())
		}
	}
}

// OnChange registers f to run after every UI change (outside the phone's
// lock, on the goroutine that made the change). The returned func removes it.
func (p *Phone) OnChange(f func()) (cancel func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	id := p.nextLis
	p.nextLis++
	p.listeners[id] = f
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		delete(p.listeners, id)
	}
}

// OnProcess registers f to learn when an app process starts (alive=true) or
// dies (force-stop, pm clear). The SoloPi side uses it to lose its in-memory
// identities when its own process is killed.
func (p *Phone) OnProcess(f func(pkg string, alive bool)) (cancel func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	id := p.nextLis
	p.nextLis++
	p.procLis[id] = f
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		delete(p.procLis, id)
	}
}

// touchLocked records a UI change.
func (p *Phone) touchLocked() { p.version++ }

// update runs f under the lock and then, outside it, tells the listeners
// what changed. Every mutation goes through here so that listeners never run
// with the lock held (they typically read the phone again).
func (p *Phone) update(f func() error) error {
	p.mu.Lock()
	before := p.version
	err := f()
	evts := p.procEvts
	p.procEvts = nil
	var lis []func()
	if p.version != before {
		close(p.changed)
		p.changed = make(chan struct{})
		for _, k := range slices.Sorted(maps.Keys(p.listeners)) {
			lis = append(lis, p.listeners[k])
		}
	}
	var plis []func(string, bool)
	if len(evts) > 0 {
		for _, k := range slices.Sorted(maps.Keys(p.procLis)) {
			plis = append(plis, p.procLis[k])
		}
	}
	p.mu.Unlock()
	for _, e := range evts {
		for _, f := range plis {
			f(e.pkg, e.alive)
		}
	}
	for _, f := range lis {
		f()
	}
	return err
}

// view runs f under the lock for read-only access.
func (p *Phone) view(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f()
}

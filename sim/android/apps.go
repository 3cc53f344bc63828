package android

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/solopi-dev/solopi/sim/android/appspec"
)

// Well-known packages and components.
const (
	launcherPackage = "com.android.launcher3"
	systemUIPackage = "com.android.systemui"
	soloPiPackage   = "com.alipay.hulu"
	// adbSchemeComponent is SoloPi's DUMP-protected mutation activity.
	adbSchemeComponent = "com.alipay.hulu/com.alipay.hulu.common.scheme.AdbSchemeActivity"
	// schemeComponent is SoloPi's public deep-link activity.
	schemeComponent = "com.alipay.hulu/com.alipay.hulu.common.scheme.SchemeActivity"
)

// errNotInstalled is wrapped by errors about packages that are not installed.
var errNotInstalled = errors.New("package not installed")

// appInfo is what the package manager knows about an installed app.
type appInfo struct {
	Package          string
	Label            string
	VersionName      string
	VersionCode      int64
	System           bool
	LauncherActivity string // full class name, "" when the app has none
	Activities       []string
}

// appRuntime is an installed app plus its process state. State variables,
// text fields and scroll positions live in the process: a force-stop loses
// them, as it would for an app without persistence.
type appRuntime struct {
	spec    *appspec.AppSpec
	screens map[string]*appspec.ScreenSpec
	running bool
	pid     int
	vars    map[string]string
	fields  map[string]string
	scroll  map[string][2]int // node key -> (x, y) scroll offset in reference pixels
}

func newAppRuntime(s *appspec.AppSpec) *appRuntime {
	a := &appRuntime{spec: s, screens: map[string]*appspec.ScreenSpec{}}
	for i := range s.Screens {
		a.screens[s.Screens[i].Activity] = &s.Screens[i]
	}
	a.resetState()
	return a
}

func (a *appRuntime) resetState() {
	a.vars = map[string]string{}
	for k, v := range a.spec.Vars {
		a.vars[k] = string(v)
	}
	a.fields = map[string]string{}
	a.scroll = map[string][2]int{}
}

func (a *appRuntime) info() appInfo {
	acts := slices.Sorted(maps.Keys(a.screens))
	return appInfo{
		Package: a.spec.Package, Label: a.spec.Label, VersionName: a.spec.VersionName,
		VersionCode: a.spec.VersionCode, System: a.spec.System,
		LauncherActivity: a.spec.LauncherActivity, Activities: acts,
	}
}

// Apps lists the installed apps sorted by package name.
func (p *Phone) Apps() []appInfo {
	var out []appInfo
	p.view(func() {
		for _, k := range slices.Sorted(maps.Keys(p.apps)) {
			out = append(out, p.apps[k].info())
		}
	})
	return out
}

// App returns one installed app.
func (p *Phone) App(pkg string) (appInfo, bool) {
	var info appInfo
	var ok bool
	p.view(func() {
		if a := p.apps[pkg]; a != nil {
			info, ok = a.info(), true
		}
	})
	return info, ok
}

// IsInstalled reports whether pkg is installed.
func (p *Phone) IsInstalled(pkg string) bool {
	var ok bool
	p.view(func() { _, ok = p.apps[pkg] })
	return ok
}

// ProcessRunning reports whether pkg's process is alive, and its pid.
func (p *Phone) ProcessRunning(pkg string) (pid int, ok bool) {
	p.view(func() {
		if a := p.apps[pkg]; a != nil && a.running {
			pid, ok = a.pid, true
		}
	})
	return pid, ok
}

// InstallApp installs (or replaces, killing the old process) an app.
func (p *Phone) InstallApp(spec *appspec.AppSpec) error {
	if spec == nil {
		return errors.New("install app: nil spec")
	}
	return p.update(func() error {
		if old := p.apps[spec.Package]; old != nil {
			p.killLocked(old)
		}
		p.apps[spec.Package] = newAppRuntime(spec)
		p.touchLocked()
		return nil
	})
}

// UninstallApp removes an app, killing its process.
func (p *Phone) UninstallApp(pkg string) error {
	return p.update(func() error {
		a := p.apps[pkg]
		if a == nil {
			return fmt.Errorf("uninstall %s: %w", pkg, errNotInstalled)
		}
		p.killLocked(a)
		delete(p.apps, pkg)
		p.ensureLauncherLocked()
		p.touchLocked()
		return nil
	})
}

// ForceStop kills pkg's process and removes its task, like
// `am force-stop`. Stopping a package that is not running is not an error.
func (p *Phone) ForceStop(pkg string) error {
	return p.update(func() error {
		a := p.apps[pkg]
		if a == nil {
			return fmt.Errorf("force-stop %s: %w", pkg, errNotInstalled)
		}
		p.killLocked(a)
		p.ensureLauncherLocked()
		return nil
	})
}

// ClearData is `pm clear`: kill the process and forget its state.
func (p *Phone) ClearData(pkg string) error {
	if err := p.ForceStop(pkg); err != nil {
		return fmt.Errorf("clear data: %w", err)
	}
	return nil
}

func (p *Phone) startProcessLocked(a *appRuntime) {
	if a.running {
		return
	}
	a.running = true
	a.pid = p.nextPID
	p.nextPID += 17
	a.resetState()
	p.procEvts = append(p.procEvts, procEvent{a.spec.Package, true})
	p.logs.add(systemServerPID, 'I', "ActivityManager", fmt.Sprintf("Start proc %d:%s/u0a%d for activity", a.pid, a.spec.Package, 100+a.pid%400))
}

func (p *Phone) killLocked(a *appRuntime) {
	pkg := a.spec.Package
	kept := p.tasks[:0]
	for _, t := range p.tasks {
		if t.pkg != pkg {
			kept = append(kept, t)
		}
	}
	if len(kept) != len(p.tasks) {
		p.touchLocked()
	}
	p.tasks = kept
	if p.focus.pkg == pkg {
		p.clearFocusLocked()
	}
	if a.running {
		a.running = false
		p.logs.add(systemServerPID, 'I', "ActivityManager", fmt.Sprintf("Force stopping %s appid=%d user=0: from pid 0", pkg, 10000+a.pid%400))
		a.pid = 0
		p.procEvts = append(p.procEvts, procEvent{pkg, false})
	}
	a.resetState()
}

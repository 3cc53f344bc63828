package plugins

import (
	"fmt"
	"time"

	"github.com/solopi-dev/solopi/protocol"
)

// SetPluginActivityBug reproduces the real v1.0.2 app's plugin activity check
// bug (docs/device-protocol.md#known-device-quirks): plugin import and remove
// ask the display resolver for mode=status, get "not handled" and always fail
// with activity_status_unavailable. Off by default: the simulator behaves as
// the protocol intends.
func (a *Plugins) SetPluginActivityBug(on bool) {
	a.Locked(func() { a.pluginActivityBug = on })
}

// InstallPlugin puts a plugin straight into the registry (as if installed
// from the app's settings); it is runtime-loaded only after a restart.
func (a *Plugins) InstallPlugin(name string, version float64) error {
	if !protocol.ValidID(name, 64) || name == corePluginName {
		return fmt.Errorf("soloapp: invalid plugin name %q", name)
	}
	if version <= 0 {
		return fmt.Errorf("soloapp: invalid plugin version %v", version)
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	e := &pluginEntry{name: name, version: version, hasCode: true, dependencies: []string{}}
	if name == AnalyzerPluginName {
		e = defaultAnalyzerPlugin()
		e.version = version
		e.runtimeLoaded = false
	}
	a.Registry[name] = e
	return nil
}

// UninstallPlugin removes a plugin from the registry (the analyzer
// hulu_screenRecord included, which makes video analysis answer
// plugin_missing). The built-in hulu_hotPatch cannot be removed.
func (a *Plugins) UninstallPlugin(name string) error {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	e := a.Registry[name]
	if e == nil {
		return fmt.Errorf("soloapp: plugin %q is not installed", name)
	}
	if e.core {
		return fmt.Errorf("soloapp: plugin %q is a core plugin", name)
	}
	delete(a.Registry, name)
	return nil
}

// SetPluginMutationDelay sets how long (device time) a plugin import or
// remove stays in_progress before its background work finishes (default
// 300 ms).
func (a *Plugins) SetPluginMutationDelay(d time.Duration) {
	a.Locked(func() { a.pluginWorkTime = d })
}

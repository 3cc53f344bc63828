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
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/agent"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
	"github.com/solopi-dev/solopi/sim/soloapp/history"
	"github.com/solopi-dev/solopi/sim/soloapp/media"
	"github.com/solopi-dev/solopi/sim/soloapp/perf"
	"github.com/solopi-dev/solopi/sim/soloapp/plugins"
)

// resolver handles one scheme action outside the five core ones
// (performance, record, …); New registers built-in ones, and the lead can
// plug replacements in. It
// returns the JSON body and whether it handled the request; a panic is
// reported like a Java exception thrown out of processScheme.
type resolver func(ctx context.Context, req request) (body []byte, handled bool)

// request is one scheme invocation as a plugged-in Resolver sees it.
type request struct {
	Action string
	Params map[string]string
	// Protected is true only for the DUMP-protected AdbSchemeActivity.
	Protected bool
	// Transport is "http", "adb-scheme" or "public-scheme".
	Transport string
}

// App is one SoloPi installation on one simulated phone. Settings, cases and
// files survive Restart; every in-memory identity lives in the process value
// and is lost with it (docs/device-protocol.md#app-restart).
type App struct {
	*core.App
	// Persistent state (the case DB) and the resolver chain.
	cases      []*caseRow
	nextCaseID int64
	resolvers  map[string]resolver
	// ext is the installation-level state of the record, scan and stress
	// resolvers (their fault knobs); it survives Restart.
	ext ext
	// rf holds the fail-replays knob (replay_fail.go).
	rf replayFaults

	// The feature resolvers; embedded so their control knobs are the App's.
	*agent.Agent
	*perf.Perf
	*media.Media
	*plugins.Plugins
	*history.History
}

// appProc is the per-process state of the resolvers the app package
// implements itself.
type appProc struct {
	harness       *harnessRun
	harnessSeq    int
	importReceipt core.Obj
	deleteReceipt core.Obj
	adb           adbStore
	recording     bool
	// sx holds the in-memory sessions of record, scan and stress.
	sx sessions
}

var procSlot = core.NewSlot(func() *appProc { return &appProc{} })

// st is the app package's state of process p.
func st(p *core.Process) *appProc { return procSlot.Of(p) }

// New creates the app and starts its process: app init finishes after
// cfg.InitDelay and the HTTP server answers 5 s (device time) later.
func New(cfg core.Config, phone core.Phone, clk clock.Clock) *App {
	cfg.Fill()
	a := &App{
		App: &core.App{
			Cfg:      cfg,
			Phone:    phone,
			Clk:      clk,
			Settings: map[string]any{},
			Perms:    map[string]bool{},
		},
		resolvers:  map[string]resolver{},
		nextCaseID: 1,
	}
	a.RuntimeSessions = a.runtimeSessionsLocked
	a.Faults.Init()
	for _, n := range core.PermissionNames {
		a.Perms[n] = true
	}
	for _, n := range cfg.DeniedPermissions {
		a.Perms[n] = false
	}
	a.Settings[core.KeyControlPort] = int64(cfg.DevicePort)
	for k, v := range cfg.Settings {
		if spec, found := core.ConfigSpecByKey(k); found {
			if val, msg := spec.Parse(v); msg == "" {
				a.Settings[k] = val
			}
		}
	}
	a.ext.init()
	a.Agent = &agent.Agent{App: a.App}
	a.Perf = &perf.Perf{App: a.App}
	a.Plugins = plugins.NewPlugins(a.App, a.Perf)
	a.Media = &media.Media{App: a.App, Plugins: a.Plugins}
	a.History = &history.History{App: a.App, Perf: a.Perf, ReplayLiveLocked: replayLiveLocked}
	a.P = a.NewProcess()
	a.registerSessionResolvers()
	return a
}

// RegisterResolver plugs in the resolver for an action outside the five
// core ones. New already registers this package's session resolvers
// (performance, record, screen-record, scan, video-analysis, stress,
// history, plugin); registering the same action replaces that one.
func (a *App) RegisterResolver(action string, r resolver) {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	a.resolvers[action] = r
}

// Restart kills the app process and starts a new one: the replay snapshot,
// receipts, Agent session, generation counter and leases are lost; settings,
// cases and files survive. The HTTP server answers again 5 s after init.
func (a *App) Restart() {
	a.Mu.Lock()
	old := a.P
	a.P = a.NewProcess()
	// Installed plugins become fully active only with a new process.
	a.Plugins.Restarted()
	a.Mu.Unlock()
	old.Cancel()
	a.Logi("SoloPi", "process restarted")
}

// HandleActivity processes `am start -n <pkg>/<component> -d <uri>`. The
// component is the protected AdbSchemeActivity or the public SchemeActivity
// (full or short class form). Results are only logged, as on the device; an
// error means the component is not one of SoloPi's scheme activities.
func (a *App) HandleActivity(ctx context.Context, component, dataURI string) error {
	pkg, cls, found := strings.Cut(component, "/")
	if !found {
		cls, pkg = component, a.Cfg.Package
	}
	if strings.HasPrefix(cls, ".") {
		cls = pkg + cls
	}
	if pkg != a.Cfg.Package {
		return fmt.Errorf("soloapp: component %q does not belong to %s", component, a.Cfg.Package)
	}
	var via core.Transport
	switch cls {
	case protocol.AdbSchemeActivity:
		via = core.ViaAdb
	case protocol.SchemeActivity:
		via = core.ViaPublic
	default:
		return fmt.Errorf("soloapp: unknown activity %q", cls)
	}
	a.Mu.Lock()
	ready := a.InitializedLocked()
	p := a.P
	a.Mu.Unlock()
	if ready {
		a.processIntent(ctx, p, via, dataURI)
		return nil
	}
	// Not initialized: the activity shows its wait layout and polls every
	// 50 ms; am start returns meanwhile.
	go func() {
		for {
			if err := a.Clk.Sleep(p.Ctx, 50*time.Millisecond); err != nil {
				return
			}
			a.Mu.Lock()
			ready, same := a.InitializedLocked(), a.P == p
			a.Mu.Unlock()
			if !same {
				return
			}
			if ready {
				a.processIntent(p.Ctx, p, via, dataURI)
				return
			}
		}
	}()
	return nil
}

func (a *App) processIntent(ctx context.Context, p *core.Process, via core.Transport, dataURI string) {
	tag := "AdbSchemeActivity"
	if via == core.ViaPublic {
		tag = "SchemeActivity"
	}
	u := protocol.ParseMutationURI(dataURI)
	action, ok := u.Action()
	if !ok {
		a.Logi(tag, "not a single-segment scheme uri, starting origin")
		_ = a.Phone.LaunchApp(a.Cfg.Package)
		return
	}
	body, handled, panicked := a.dispatch(ctx, p, via, action, u.Params)
	if !handled || panicked {
		a.Logi(tag, "scheme not handled: "+action)
		_ = a.Phone.LaunchApp(a.Cfg.Package)
		return
	}
	a.Logi(tag, "scheme "+action+" result: "+string(body))
}

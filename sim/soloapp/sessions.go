package soloapp

// Shared plumbing of the session resolvers (performance, performance
// display, record, screen-record, scan, video-analysis, stress, history,
// plugin): their per-process state, the resolver registration, the
// RuntimeSessionGuard count and small helpers. The resolvers themselves
// live in one file each.

import (
	"context"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// sessions is the record, scan and stress sessions of one process
// (docs/device-protocol.md#app-restart).
type sessions struct {
	record *recordSession
	scan   *scanSession
	stress *stressSession
}

// registerSessionResolvers plugs the nine session resolvers into the chain,
// so a fresh App answers all 13 actions like the real one. The lead may
// still replace any of them with RegisterResolver.
func (a *App) registerSessionResolvers() {
	reg := func(action string, fn func(ctx context.Context, p *core.Process, via core.Transport, q core.Params) core.Obj) {
		a.resolvers[action] = func(ctx context.Context, req request) ([]byte, bool) {
			a.Mu.Lock()
			p := a.P
			a.Mu.Unlock()
			return core.Encode(fn(ctx, p, viaOf(req), core.Params(req.Params)), false), true
		}
	}
	reg(protocol.ActionPerformance, a.Perf.Performance)
	reg(protocol.ActionRecord, a.recordResolver)
	reg(protocol.ActionScreenRecord, a.Media.ScreenRecordResolver)
	reg(protocol.ActionScan, a.scanResolver)
	reg(protocol.ActionVideoAnalysis, a.Media.VideoAnalysisResolver)
	reg(protocol.ActionStress, a.stressResolver)
	reg(protocol.ActionHistory, a.History.HistoryResolver)
	reg(protocol.ActionPlugin, a.Plugins.PluginResolver)
}

// viaOf maps a plugged-in Request back to the transport it arrived on.
func viaOf(req request) core.Transport {
	switch {
	case req.Protected:
		return core.ViaAdb
	case req.Transport == core.ViaPublic.String():
		return core.ViaPublic
	}
	return core.ViaHTTP
}

// runtimeSessionsLocked counts RuntimeSessionGuard sessions
// (docs/device-protocol.md#concurrency-and-ownership): plugin maintenance
// needs zero of them.
func (a *App) runtimeSessionsLocked(p *core.Process) int {
	n := 0
	if p.Lease.Owner != "" {
		n++
	}
	sx := st(p).sx
	if a.Media.ScreenLiveLocked(p) {
		n++
	}
	if a.Perf.ProviderLeasedLocked(p) {
		n++
	}
	if s := sx.record; s != nil && recordMachine.IsLive(s.State) {
		n++
	}
	if s := sx.stress; s != nil && stressMachine.IsLive(s.State) {
		n++
	}
	if a.Media.ExternalRecorder {
		n++
	}
	if a.ext.externalStress {
		n++
	}
	return n
}

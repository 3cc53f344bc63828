package soloapp

// Shared plumbing of the session resolvers (performance, performance
// display, record, screen-record, scan, video-analysis, stress, history,
// plugin): their per-process state, the resolver registration, the
// RuntimeSessionGuard count and small helpers. The resolvers themselves
// live in one file each.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/protocol"
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
	reg := func(action string, fn func(ctx context.Context, p *process, via transport, q params) obj) {
		a.resolvers[action] = func(ctx context.Context, req Request) ([]byte, bool) {
			a.mu.Lock()
			p := a.p
			a.mu.Unlock()
			return encode(fn(ctx, p, viaOf(req), params(req.Params)), false), true
		}
	}
	reg(protocol.ActionPerformance, a.Perf.performance)
	reg(protocol.ActionRecord, a.recordResolver)
	reg(protocol.ActionScreenRecord, a.Media.screenRecordResolver)
	reg(protocol.ActionScan, a.scanResolver)
	reg(protocol.ActionVideoAnalysis, a.Media.videoAnalysisResolver)
	reg(protocol.ActionStress, a.stressResolver)
	reg(protocol.ActionHistory, a.History.historyResolver)
	reg(protocol.ActionPlugin, a.Plugins.pluginResolver)
}

// viaOf maps a plugged-in Request back to the transport it arrived on.
func viaOf(req Request) transport {
	switch {
	case req.Protected:
		return viaAdb
	case req.Transport == viaPublic.String():
		return viaPublic
	}
	return viaHTTP
}

// runtimeSessionsLocked counts RuntimeSessionGuard sessions
// (docs/device-protocol.md#concurrency-and-ownership): plugin maintenance
// needs zero of them.
func (a *App) runtimeSessionsLocked(p *process) int {
	n := 0
	if p.lease.owner != "" {
		n++
	}
	sx := st(p).sx
	if a.Media.ScreenLiveLocked(p) {
		n++
	}
	if a.Perf.ProviderLeasedLocked(p) {
		n++
	}
	if s := sx.record; s != nil && recordMachine.IsLive(s.state) {
		n++
	}
	if s := sx.stress; s != nil && stressMachine.IsLive(s.state) {
		n++
	}
	if a.Media.externalRecorder {
		n++
	}
	if a.ext.externalStress {
		n++
	}
	return n
}

// maintenanceLocked reports whether plugin maintenance blocks new runtime
// sessions.
func (p *process) maintenanceLocked() bool { return p.lease.maintenance }

// sleepDevice waits d of device time on the process context; false when
// the process died (restart) meanwhile.
func (a *appCore) sleepDevice(p *process, d time.Duration) bool {
	return a.clk.Sleep(p.ctx, d) == nil
}

// current reports whether p is still the running process (late callbacks
// of a dead process must not touch anything).
func (a *appCore) currentLocked(p *process) bool { return a.p == p }

// permissionDialogLocked is how long a permission request takes to answer
// (the callback arrives about 10 ms after the dialog closes).
func (a *appCore) permissionDialogLocked() time.Duration {
	if d := a.faults.permDialog; d > 0 {
		return d
	}
	return 10 * time.Millisecond
}

// missingPermissionsLocked lists the named permissions that are denied.
func (a *appCore) missingPermissionsLocked(names ...string) []string {
	var out []string
	for _, n := range names {
		if !a.permissionLocked(n) {
			out = append(out, n)
		}
	}
	return out
}

// shellForm replaces the /storage/emulated/0 prefix with /sdcard
// (docs/device-protocol.md#device-files).
func shellForm(p string) string {
	p = normPath(p)
	if p == "/storage/emulated/0" || strings.HasPrefix(p, "/storage/emulated/0/") {
		return "/sdcard" + strings.TrimPrefix(p, "/storage/emulated/0")
	}
	return p
}

// sha256Hex is the lowercase hex SHA-256 of s.
func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// javaParseInt is Integer.parseInt (an int32 with optional sign).
func javaParseInt(s string) (int64, bool) {
	n, ok := javaParseLong(s)
	if !ok || n != int64(int32(n)) {
		return 0, false
	}
	return n, true
}

// receiptLRU is an access-order LRU of receipts (Java LinkedHashMap with
// accessOrder=true and removeEldestEntry), as the video, history and plugin
// resolvers keep them. pinned keys are never evicted.
type receiptLRU struct {
	max   int
	order []string
	m     map[string]obj
}

func newReceiptLRU(n int) *receiptLRU { return &receiptLRU{max: n, m: map[string]obj{}} }

func (l *receiptLRU) touch(k string) {
	for i, o := range l.order {
		if o == k {
			l.order = append(l.order[:i], l.order[i+1:]...)
			break
		}
	}
	l.order = append(l.order, k)
}

// get returns the receipt and refreshes its access order.
func (l *receiptLRU) get(k string) (obj, bool) {
	o, found := l.m[k]
	if found {
		l.touch(k)
	}
	return o, found
}

// put stores a receipt and evicts the eldest unpinned entries beyond max.
func (l *receiptLRU) put(k string, o obj, pinned string) {
	l.m[k] = o
	l.touch(k)
	for len(l.order) > l.max {
		evicted := false
		for i, e := range l.order {
			if e != pinned && e != k {
				delete(l.m, e)
				l.order = append(l.order[:i], l.order[i+1:]...)
				evicted = true
				break
			}
		}
		if !evicted {
			return
		}
	}
}

// each visits every receipt (no access-order change).
func (l *receiptLRU) each(fn func(k string, o obj)) {
	for _, k := range l.order {
		fn(k, l.m[k])
	}
}

package soloapp

import (
	"context"
	"time"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// status is the status resolver (docs/device-protocol.md#status). Missing or
// other types are "not handled": HTTP answers the text/html fallback, the
// Activity launches SoloPi.
func (a *App) status(ctx context.Context, p *core.Process, q core.Params) (core.Obj, bool) {
	switch q["type"] {
	case "status":
		a.Mu.Lock()
		defer a.Mu.Unlock()
		s := "none"
		if st(p).recording {
			s = "record"
		}
		return core.NewObj("status", s), true
	case "page":
		return a.pageQuery(ctx, p), true
	}
	return nil, false
}

// MarkRecordingStarted flips status?type=status to "record" for the
// current process (the record resolver calls it once a recording starts;
// it never goes back until a restart).
func (a *App) MarkRecordingStarted() {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	st(a.P).recording = true
}

// pageQuery reads the current root after 500 ms, waiting at most 5 s. Any
// root counts, SoloPi's own included; there is no controllability filter.
func (a *App) pageQuery(ctx context.Context, p *core.Process) core.Obj {
	a.Mu.Lock()
	allowed := a.Perms[core.PermADB] && a.Perms[core.PermAccessibility]
	a.Mu.Unlock()
	if !allowed {
		return core.E1(protocol.ErrPagePermissionRequired, "ADB and accessibility permissions are required")
	}
	if err := a.Clk.Sleep(ctx, 500*time.Millisecond); err != nil {
		return core.E1(protocol.ErrPageQueryInterrupted, "Interrupted while waiting for the current page")
	}
	deadline := a.Clk.Now().Add(5 * time.Second)
	for {
		if r := a.ReadRoot(false); r != nil {
			return core.NewObj("page", core.ExportPage(r, false).Page)
		}
		if !a.Clk.Now().Before(deadline) {
			return core.E1(protocol.ErrPageRootUnavailable, "Current page root is unavailable")
		}
		if err := a.Clk.Sleep(ctx, 100*time.Millisecond); err != nil {
			return core.E1(protocol.ErrPageQueryInterrupted, "Interrupted while waiting for the current page")
		}
	}
}

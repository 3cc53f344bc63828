package soloapp

import (
	"context"
	"time"

	"github.com/solopi-dev/solopi/protocol"
)

// status is the status resolver (docs/device-protocol.md#status). Missing or
// other types are "not handled": HTTP answers the text/html fallback, the
// Activity launches SoloPi.
func (a *App) status(ctx context.Context, p *process, q params) (obj, bool) {
	switch q["type"] {
	case "status":
		a.mu.Lock()
		defer a.mu.Unlock()
		s := "none"
		if st(p).recording {
			s = "record"
		}
		return newObj("status", s), true
	case "page":
		return a.pageQuery(ctx, p), true
	}
	return nil, false
}

// MarkRecordingStarted flips status?type=status to "record" for the
// current process (the record resolver calls it once a recording starts;
// it never goes back until a restart).
func (a *App) MarkRecordingStarted() {
	a.mu.Lock()
	defer a.mu.Unlock()
	st(a.p).recording = true
}

// pageQuery reads the current root after 500 ms, waiting at most 5 s. Any
// root counts, SoloPi's own included; there is no controllability filter.
func (a *App) pageQuery(ctx context.Context, p *process) obj {
	a.mu.Lock()
	allowed := a.perms[PermADB] && a.perms[PermAccessibility]
	a.mu.Unlock()
	if !allowed {
		return e1(protocol.ErrPagePermissionRequired, "ADB and accessibility permissions are required")
	}
	if err := a.clk.Sleep(ctx, 500*time.Millisecond); err != nil {
		return e1(protocol.ErrPageQueryInterrupted, "Interrupted while waiting for the current page")
	}
	deadline := a.clk.Now().Add(5 * time.Second)
	for {
		if r := a.readRoot(false); r != nil {
			return newObj("page", exportPage(r, false).page)
		}
		if !a.clk.Now().Before(deadline) {
			return e1(protocol.ErrPageRootUnavailable, "Current page root is unavailable")
		}
		if err := a.clk.Sleep(ctx, 100*time.Millisecond); err != nil {
			return e1(protocol.ErrPageQueryInterrupted, "Interrupted while waiting for the current page")
		}
	}
}

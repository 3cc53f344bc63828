package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// loadControllableRoot is the device's root acquisition
// (docs/device-protocol.md#observations-and-the-ui-tree): poll every 100 ms
// for up to 5 s for a controllable root (in package pkg when pkg != ""), then
// sleep 500 ms and accept it only if it is still controllable in the same
// package. nil means unavailable (or ctx ended).
func (a *Agent) loadControllableRoot(ctx context.Context, pkg string) *core.PageRoot {
	deadline := a.Clk.Now().Add(protocol.AgentRootMaxMs * time.Millisecond)
	for {
		r := a.ReadRoot(true)
		if a.Controllable(r) && (pkg == "" || r.Pkg() == pkg) {
			if err := a.Clk.Sleep(ctx, protocol.AgentRootStableMs*time.Millisecond); err != nil {
				return nil
			}
			again := a.ReadRoot(true)
			if a.Controllable(again) && again.Pkg() == r.Pkg() {
				return again
			}
		}
		if !a.Clk.Now().Before(deadline) {
			return nil
		}
		if err := a.Clk.Sleep(ctx, protocol.AgentRootPollMs*time.Millisecond); err != nil {
			return nil
		}
	}
}

// buildObservation exports the page with nodeIds and captures the
// screenshot into the session directory. It does no state change and runs
// without the app lock (screenshots may be slow).
func (a *Agent) buildObservation(s *agentSession, r *core.PageRoot) *observation {
	id := "observation-" + core.NewUUID()
	ep := core.ExportPage(r, true)
	o := core.NewObj("observationId", id, "signature", ep.Sha, "createdAt", a.NowMs(), "treeSha256", ep.Sha,
		"page", ep.Page, "timelinePath", s.timelinePath())
	png, err := a.Phone.Screenshot()
	switch {
	case errors.Is(err, core.ErrCaptureServiceUnavailable):
		o.Set("screenshotError", protocol.ErrScreenCaptureServiceUnavailable)
	case err != nil || len(png) == 0:
		o.Set("screenshotError", protocol.ErrScreenCaptureFailed)
	default:
		path := s.dir + "/" + id + ".png"
		_ = a.Phone.MkdirAll(s.dir)
		if werr := a.Phone.WriteFile(path, png); werr != nil {
			o.Set("screenshotError", protocol.ErrScreenCaptureFailed)
		} else {
			sum := sha256.Sum256(png)
			o.Set("screenshotPath", path)
			o.Set("screenshotSha256", hex.EncodeToString(sum[:]))
		}
	}
	return &observation{wire: o, id: id, sig: ep.Sha, frame: ep.Frame, pkg: r.Pkg()}
}

// agentObserve is agent?type=observe: a new current observation.
func (a *Agent) agentObserve(ctx context.Context, p *core.Process, q core.Params) core.Obj {
	if e := missingParam(q, "sessionId", "ownerToken"); e != nil {
		return e
	}
	a.Mu.Lock()
	if !a.Perms[core.PermADB] || !a.Perms[core.PermAccessibility] {
		a.Mu.Unlock()
		return core.E1(protocol.ErrObservationPermissionRequired, "ADB and accessibility permissions are required")
	}
	s, e := a.accessLocked(p, q["sessionId"], q["ownerToken"])
	if e != nil {
		a.Mu.Unlock()
		return e
	}
	if a.Faults.OpUnavailable {
		a.Mu.Unlock()
		return core.E1(protocol.ErrOperationServiceUnavailable, "Operation service is unavailable")
	}
	gen := s.generation
	a.Mu.Unlock()

	// The capture belongs to the session: it stops when the session ends or
	// the request goes away.
	cctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	root := a.loadControllableRoot(cctx, "")
	if cctx.Err() != nil {
		return core.E1(protocol.ErrObservationInterrupted, "Observation was interrupted")
	}
	if root == nil {
		return core.E1(protocol.ErrPageRootUnavailable, "Controllable foreground page root is unavailable")
	}
	o := a.buildObservation(s, root)

	a.Mu.Lock()
	defer a.Mu.Unlock()
	if a.P != p || agentSx(p).agent != s || s.generation != gen {
		return core.E1(protocol.ErrSessionNotFound, "sessionId does not identify the current session")
	}
	switch {
	case s.state == protocol.AgentActing:
		return core.E1(protocol.ErrSessionBusy, "An action is still executing")
	case !agentMachine.IsLive(s.state):
		return core.E1(protocol.ErrTerminalSession, "The session is already terminal")
	}
	a.installObservationLocked(s, o, true)
	return core.OK("session", a.sessionSnapshotLocked(p), "observation", o.wire)
}

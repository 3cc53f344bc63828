package soloapp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/solopi-dev/solopi/protocol"
)

// loadControllableRoot is the device's root acquisition
// (docs/device-protocol.md#observations-and-the-ui-tree): poll every 100 ms
// for up to 5 s for a controllable root (in package pkg when pkg != ""), then
// sleep 500 ms and accept it only if it is still controllable in the same
// package. nil means unavailable (or ctx ended).
func (a *Agent) loadControllableRoot(ctx context.Context, pkg string) *pageRoot {
	deadline := a.clk.Now().Add(protocol.AgentRootMaxMs * time.Millisecond)
	for {
		r := a.readRoot(true)
		if a.controllable(r) && (pkg == "" || r.pkg() == pkg) {
			if err := a.clk.Sleep(ctx, protocol.AgentRootStableMs*time.Millisecond); err != nil {
				return nil
			}
			again := a.readRoot(true)
			if a.controllable(again) && again.pkg() == r.pkg() {
				return again
			}
		}
		if !a.clk.Now().Before(deadline) {
			return nil
		}
		if err := a.clk.Sleep(ctx, protocol.AgentRootPollMs*time.Millisecond); err != nil {
			return nil
		}
	}
}

// buildObservation exports the page with nodeIds and captures the
// screenshot into the session directory. It does no state change and runs
// without the app lock (screenshots may be slow).
func (a *Agent) buildObservation(s *agentSession, r *pageRoot) *observation {
	id := "observation-" + newUUID()
	ep := exportPage(r, true)
	o := newObj("observationId", id, "signature", ep.sha, "createdAt", a.nowMs(), "treeSha256", ep.sha,
		"page", ep.page, "timelinePath", s.timelinePath())
	png, err := a.phone.Screenshot()
	switch {
	case errors.Is(err, ErrCaptureServiceUnavailable):
		o.set("screenshotError", protocol.ErrScreenCaptureServiceUnavailable)
	case err != nil || len(png) == 0:
		o.set("screenshotError", protocol.ErrScreenCaptureFailed)
	default:
		path := s.dir + "/" + id + ".png"
		_ = a.phone.MkdirAll(s.dir)
		if werr := a.phone.WriteFile(path, png); werr != nil {
			o.set("screenshotError", protocol.ErrScreenCaptureFailed)
		} else {
			sum := sha256.Sum256(png)
			o.set("screenshotPath", path)
			o.set("screenshotSha256", hex.EncodeToString(sum[:]))
		}
	}
	return &observation{wire: o, id: id, sig: ep.sha, frame: ep.frame, pkg: r.pkg()}
}

// agentObserve is agent?type=observe: a new current observation.
func (a *Agent) agentObserve(ctx context.Context, p *process, q params) obj {
	if e := missingParam(q, "sessionId", "ownerToken"); e != nil {
		return e
	}
	a.mu.Lock()
	if !a.perms[PermADB] || !a.perms[PermAccessibility] {
		a.mu.Unlock()
		return e1(protocol.ErrObservationPermissionRequired, "ADB and accessibility permissions are required")
	}
	s, e := a.accessLocked(p, q["sessionId"], q["ownerToken"])
	if e != nil {
		a.mu.Unlock()
		return e
	}
	if a.faults.opUnavailable {
		a.mu.Unlock()
		return e1(protocol.ErrOperationServiceUnavailable, "Operation service is unavailable")
	}
	gen := s.generation
	a.mu.Unlock()

	// The capture belongs to the session: it stops when the session ends or
	// the request goes away.
	cctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	root := a.loadControllableRoot(cctx, "")
	if cctx.Err() != nil {
		return e1(protocol.ErrObservationInterrupted, "Observation was interrupted")
	}
	if root == nil {
		return e1(protocol.ErrPageRootUnavailable, "Controllable foreground page root is unavailable")
	}
	o := a.buildObservation(s, root)

	a.mu.Lock()
	defer a.mu.Unlock()
	if a.p != p || agentSx(p).agent != s || s.generation != gen {
		return e1(protocol.ErrSessionNotFound, "sessionId does not identify the current session")
	}
	switch {
	case s.state == protocol.AgentActing:
		return e1(protocol.ErrSessionBusy, "An action is still executing")
	case !agentMachine.IsLive(s.state):
		return e1(protocol.ErrTerminalSession, "The session is already terminal")
	}
	a.installObservationLocked(s, o, true)
	return ok("session", a.sessionSnapshotLocked(p), "observation", o.wire)
}

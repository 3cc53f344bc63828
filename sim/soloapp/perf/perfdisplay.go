package perf

// performance?mode=display: the live monitor lease
// (docs/device-protocol.md#session-types). One owner at a time shares the
// DisplayProvider with a performance recording; the status shows only the
// values bound to this session's lease.

import (
	"slices"
	"time"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

var displayMachine = protocol.PerformanceDisplay()

// displaySession is the process-wide display slot.
type displaySession struct {
	providerLease
	// cache is the lease's last sample (name → text) taken at cacheAt; a
	// status read returns it and refreshes it, so values may be stale.
	cache   core.Obj
	cacheAt int64
}

func (a *Perf) perfDisplay(p *core.Process, via core.Transport, q core.Params) core.Obj {
	act := q["action"]
	switch act {
	case "status":
		a.Mu.Lock()
		defer a.Mu.Unlock()
		return a.displaySnapshotLocked(p, true)
	case "start", "stop":
	default:
		return e2("Unsupported performance display action: " + core.JavaString(q, "action"))
	}
	if via != core.ViaAdb {
		return e2("Performance display start and stop require the ADB Scheme transport")
	}
	if act == "start" {
		return a.displayStart(p, q)
	}
	return a.displayStop(p, q)
}

// displaySnapshotLocked is the display snapshot; refresh makes a read trigger
// the lease's background refresh (the status query does).
func (a *Perf) displaySnapshotLocked(p *core.Process, refresh bool) core.Obj {
	s := perfSx(p).display
	o := core.OK("kind", "performance-display")
	now := a.NowMs()
	if s == nil {
		return append(o, core.NewObj("state", string(protocol.SessionIdle), "running", false, "active", false,
			"terminal", false, "stopRetryable", false, "items", []string{}, "ownedDisplayNames", []string{},
			"runningItems", a.providerRunningLocked(p), "sampledAt", now, "values", core.Obj{})...)
	}
	s.setSessionFields(&o, displayMachine, "running", protocol.SessionRunning)
	owned := []string{}
	if s.leaseHeld {
		owned = slices.Clone(s.names)
	}
	o.Set("ownedDisplayNames", owned)
	s.SetTimes(&o, now)
	if s.Err != "" {
		o.Set("error", s.Err)
	}
	o.Set("runningItems", a.providerRunningLocked(p))
	values := core.Obj{}
	sampled := now
	if s.leaseHeld {
		for _, e := range s.cache {
			if slices.Contains(owned, e.K) {
				values.Set(e.K, e.V)
			}
		}
		if s.cacheAt != 0 {
			sampled = s.cacheAt
		}
		if refresh {
			s.cache = a.valuesForLocked(s.items, s.target, s.StartedAt, now)
			s.cacheAt = now
		}
	}
	o.Set("sampledAt", sampled)
	o.Set("values", values)
	return o
}

func (a *Perf) displayStart(p *core.Process, q core.Params) core.Obj {
	sid := q["sessionId"]
	if sid == "" {
		sid = core.NewUUID()
	} else if !protocol.ValidID(sid, 116) {
		return e2("Invalid performance display sessionId")
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if cur := perfSx(p).display; cur != nil && displayMachine.IsLive(cur.State) {
		return append(e2("A performance display session is already active"), core.KV{K: "performanceDisplay", V: a.displaySnapshotLocked(p, false)})
	}
	s := &displaySession{providerLease: providerLease{SessionClock: core.SessionClock{State: displayMachine.Initial}, id: sid, target: q["targetApp"], items: parseItems(q["items"])}}
	a.StepClockLocked(displayMachine, &s.SessionClock, protocol.EvStart, "")
	perfSx(p).display = s
	if msg := a.perfPreflightLocked(p, s.items, s.target, "Another performance session is already running"); msg != "" {
		a.StepClockLocked(displayMachine, &s.SessionClock, protocol.EvError, msg)
		return a.displaySnapshotLocked(p, false)
	}
	go a.displayGranted(p, s, a.PermissionDialogLocked())
	return a.displaySnapshotLocked(p, false)
}

func (a *Perf) displayGranted(p *core.Process, s *displaySession, dialog time.Duration) {
	if !a.SleepDevice(p, dialog) {
		return
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if perfSx(p).display != s || !a.CurrentLocked(p) {
		return
	}
	if !a.grantLeaseLocked(p, displayLease, &s.providerLease) {
		return
	}
	// The provider samples as soon as the items run.
	s.cache = a.valuesForLocked(s.items, s.target, s.StartedAt, s.StartedAt)
	s.cacheAt = s.StartedAt
}

func (a *Perf) displayStop(p *core.Process, q core.Params) core.Obj {
	sid := q["sessionId"]
	a.Mu.Lock()
	defer a.Mu.Unlock()
	s := perfSx(p).display
	conflict := func(msg string) core.Obj {
		return append(e2(msg), core.KV{K: "performanceDisplay", V: a.displaySnapshotLocked(p, false)})
	}
	if sid == "" {
		return conflict("Parameter 'sessionId' is required")
	}
	if s == nil || s.id != sid {
		return conflict("Performance display sessionId does not match")
	}
	switch {
	case s.State == protocol.SessionStarting:
		s.cancelRequested = true
		a.StepClockLocked(displayMachine, &s.SessionClock, protocol.EvStop, "Performance display start cancellation is waiting for permissions")
	case s.State == protocol.SessionRunning:
		a.StepClockLocked(displayMachine, &s.SessionClock, protocol.EvStop, "")
		a.displayCleanupLocked(p, s)
	case s.State == protocol.SessionStopping && s.leaseHeld && !s.stopInProgress:
		a.displayCleanupLocked(p, s)
	case s.State == protocol.SessionStopping && s.stopInProgress:
		return conflict("Performance display stop is already in progress")
	default:
		return conflict("There is no active performance display session")
	}
	return a.displaySnapshotLocked(p, false)
}

// displayCleanupLocked stops the lease synchronously: stopped, or stopping
// with stopRetryable while the fault knob keeps the cleanup incomplete.
func (a *Perf) displayCleanupLocked(p *core.Process, s *displaySession) {
	if a.cleanupPendingLocked(displayLease, &s.providerLease) {
		return
	}
	releaseLeaseLocked(p, displayLease, &s.providerLease)
	s.cache, s.cacheAt = nil, 0
	a.StepClockLocked(displayMachine, &s.SessionClock, protocol.EvStopped, "")
}

package soloapp

// performance?mode=display: the live monitor lease
// (docs/device-protocol.md#session-types). One owner at a time shares the
// DisplayProvider with a performance recording; the status shows only the
// values bound to this session's lease.

import (
	"slices"
	"time"

	"github.com/solopi-dev/solopi/protocol"
)

var displayMachine = protocol.PerformanceDisplay()

// displaySession is the process-wide display slot.
type displaySession struct {
	providerLease
	// cache is the lease's last sample (name → text) taken at cacheAt; a
	// status read returns it and refreshes it, so values may be stale.
	cache   obj
	cacheAt int64
}

func (a *Perf) perfDisplay(p *process, via transport, q params) obj {
	act := q["action"]
	switch act {
	case "status":
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.displaySnapshotLocked(p, true)
	case "start", "stop":
	default:
		return e2("Unsupported performance display action: " + javaString(q, "action"))
	}
	if via != viaAdb {
		return e2("Performance display start and stop require the ADB Scheme transport")
	}
	if act == "start" {
		return a.displayStart(p, q)
	}
	return a.displayStop(p, q)
}

// displaySnapshotLocked is the display snapshot; refresh makes a read trigger
// the lease's background refresh (the status query does).
func (a *Perf) displaySnapshotLocked(p *process, refresh bool) obj {
	s := perfSx(p).display
	o := ok("kind", "performance-display")
	now := a.nowMs()
	if s == nil {
		return append(o, newObj("state", string(protocol.SessionIdle), "running", false, "active", false,
			"terminal", false, "stopRetryable", false, "items", []string{}, "ownedDisplayNames", []string{},
			"runningItems", a.providerRunningLocked(p), "sampledAt", now, "values", obj{})...)
	}
	o.set("sessionId", s.id)
	o.set("state", string(s.state))
	o.set("running", s.state == protocol.SessionRunning)
	o.set("active", displayMachine.IsLive(s.state))
	o.set("terminal", displayMachine.IsTerminal(s.state))
	o.set("stopRetryable", s.state == protocol.SessionStopping && s.leaseHeld && !s.stopInProgress)
	if s.target != "" {
		o.set("targetPackage", s.target)
	}
	o.set("items", slices.Clone(s.items))
	owned := []string{}
	if s.leaseHeld {
		owned = slices.Clone(s.names)
	}
	o.set("ownedDisplayNames", owned)
	s.setTimes(&o, now)
	if s.err != "" {
		o.set("error", s.err)
	}
	o.set("runningItems", a.providerRunningLocked(p))
	values := obj{}
	sampled := now
	if s.leaseHeld {
		for _, e := range s.cache {
			if slices.Contains(owned, e.k) {
				values.set(e.k, e.v)
			}
		}
		if s.cacheAt != 0 {
			sampled = s.cacheAt
		}
		if refresh {
			s.cache = a.valuesForLocked(s.items, s.target, s.startedAt, now)
			s.cacheAt = now
		}
	}
	o.set("sampledAt", sampled)
	o.set("values", values)
	return o
}

func (a *Perf) displayStart(p *process, q params) obj {
	sid := q["sessionId"]
	if sid == "" {
		sid = newUUID()
	} else if !protocol.ValidID(sid, 116) {
		return e2("Invalid performance display sessionId")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if cur := perfSx(p).display; cur != nil && displayMachine.IsLive(cur.state) {
		return append(e2("A performance display session is already active"), kv{"performanceDisplay", a.displaySnapshotLocked(p, false)})
	}
	s := &displaySession{providerLease: providerLease{sessionClock: sessionClock{state: displayMachine.Initial}, id: sid, target: q["targetApp"], items: parseItems(q["items"])}}
	a.stepClockLocked(displayMachine, &s.sessionClock, protocol.EvStart, "")
	perfSx(p).display = s
	if msg := a.perfPreflightLocked(p, s.items, s.target, "Another performance session is already running"); msg != "" {
		a.stepClockLocked(displayMachine, &s.sessionClock, protocol.EvError, msg)
		return a.displaySnapshotLocked(p, false)
	}
	go a.displayGranted(p, s, a.permissionDialogLocked())
	return a.displaySnapshotLocked(p, false)
}

func (a *Perf) displayGranted(p *process, s *displaySession, dialog time.Duration) {
	if !a.sleepDevice(p, dialog) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if perfSx(p).display != s || !a.currentLocked(p) {
		return
	}
	if !a.grantLeaseLocked(p, displayLease, &s.providerLease) {
		return
	}
	// The provider samples as soon as the items run.
	s.cache = a.valuesForLocked(s.items, s.target, s.startedAt, s.startedAt)
	s.cacheAt = s.startedAt
}

func (a *Perf) displayStop(p *process, q params) obj {
	sid := q["sessionId"]
	a.mu.Lock()
	defer a.mu.Unlock()
	s := perfSx(p).display
	conflict := func(msg string) obj {
		return append(e2(msg), kv{"performanceDisplay", a.displaySnapshotLocked(p, false)})
	}
	if sid == "" {
		return conflict("Parameter 'sessionId' is required")
	}
	if s == nil || s.id != sid {
		return conflict("Performance display sessionId does not match")
	}
	switch {
	case s.state == protocol.SessionStarting:
		s.cancelRequested = true
		a.stepClockLocked(displayMachine, &s.sessionClock, protocol.EvStop, "Performance display start cancellation is waiting for permissions")
	case s.state == protocol.SessionRunning:
		a.stepClockLocked(displayMachine, &s.sessionClock, protocol.EvStop, "")
		a.displayCleanupLocked(p, s)
	case s.state == protocol.SessionStopping && s.leaseHeld && !s.stopInProgress:
		a.displayCleanupLocked(p, s)
	case s.state == protocol.SessionStopping && s.stopInProgress:
		return conflict("Performance display stop is already in progress")
	default:
		return conflict("There is no active performance display session")
	}
	return a.displaySnapshotLocked(p, false)
}

// displayCleanupLocked stops the lease synchronously: stopped, or stopping
// with stopRetryable while the fault knob keeps the cleanup incomplete.
func (a *Perf) displayCleanupLocked(p *process, s *displaySession) {
	if a.cleanupPendingLocked(displayLease, &s.providerLease) {
		return
	}
	releaseLeaseLocked(p, displayLease, &s.providerLease)
	s.cache, s.cacheAt = nil, 0
	a.stepClockLocked(displayMachine, &s.sessionClock, protocol.EvStopped, "")
}

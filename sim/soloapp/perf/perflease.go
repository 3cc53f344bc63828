package perf

import (
	"slices"
	"strings"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// providerLease is what a performance recording and a performance display
// session share: both hold the DisplayProvider's one protocol lease.
type providerLease struct {
	core.SessionClock
	id             string
	target         string
	items          []string // requested keys
	names          []string // display names of the lease
	leaseHeld      bool
	stopInProgress bool
	// cancelRequested: a stop arrived while the permission request was
	// pending; the callback then fails the start.
	cancelRequested bool
}

// leaseKind is what differs between the two lease holders: their table,
// the provider owner prefix and the wording of their failures.
type leaseKind struct {
	machine *protocol.Machine
	owner   string
	// cancelled, permissions and incomplete are the errors of a start
	// cancelled while the permission request was pending, of missing item
	// permissions (the missing ones follow) and of the cleanup fault.
	cancelled, permissions, incomplete string
}

var (
	perfLease = leaseKind{
		machine:     perfMachine,
		owner:       "performance:",
		cancelled:   "Performance start was cancelled before recording",
		permissions: "Performance permissions are not ready: ",
		incomplete:  "Performance cleanup is incomplete; retry stop with the same sessionId: display items are still running",
	}
	displayLease = leaseKind{
		machine:     displayMachine,
		owner:       "display:",
		cancelled:   "Performance display start was cancelled",
		permissions: "Performance display permissions are not ready: ",
		incomplete:  "Performance display cleanup is incomplete; retry stop with the same sessionId: display items are still running",
	}
)

// grantLeaseLocked is the permission callback of a lease start: it fails
// the start when a stop came first, when item permissions are missing or
// when the provider cannot be acquired, and otherwise takes the lease and
// makes the session ready. True when the lease was taken.
func (a *Perf) grantLeaseLocked(p *core.Process, k leaseKind, l *providerLease) bool {
	if l.cancelRequested {
		a.StepClockLocked(k.machine, &l.SessionClock, protocol.EvError, k.cancelled)
		return false
	}
	if l.State != protocol.SessionStarting {
		return false
	}
	if missing := a.itemPermissionsMissingLocked(l.items); len(missing) > 0 {
		a.StepClockLocked(k.machine, &l.SessionClock, protocol.EvError, k.permissions+strings.Join(missing, ","))
		return false
	}
	if !a.acquireProviderLocked(p, k.owner+l.id) {
		a.StepClockLocked(k.machine, &l.SessionClock, protocol.EvError, "Unable to atomically acquire the requested performance items")
		return false
	}
	l.leaseHeld = true
	l.names = itemNames(l.items, a.englishLocked())
	a.StepClockLocked(k.machine, &l.SessionClock, protocol.EvReady, "")
	return true
}

// cleanupPendingLocked applies the cleanup fault knob: while it counts
// down, a stop leaves the lease held and the session stopping with a
// retryable stop. True when the fault applied.
func (a *Perf) cleanupPendingLocked(k leaseKind, l *providerLease) bool {
	if a.cleanupIncomplete <= 0 {
		return false
	}
	a.cleanupIncomplete--
	l.stopInProgress = false
	a.StepClockLocked(k.machine, &l.SessionClock, protocol.EvCleanupPending, k.incomplete)
	return true
}

// releaseLeaseLocked gives the provider back.
func releaseLeaseLocked(p *core.Process, k leaseKind, l *providerLease) {
	l.leaseHeld = false
	if perfSx(p).providerOwner == k.owner+l.id {
		perfSx(p).providerOwner = ""
	}
}

// setSessionFields writes what the recording and display snapshots share,
// in their wire order: the session, its state and the kind's own flag
// (recording or running, true in the flag state), the table's live and
// terminal sets, whether a stop may be retried, the target and the items.
func (l *providerLease) setSessionFields(o *core.Obj, m *protocol.Machine, flag string, flagState protocol.State) {
	o.Set("sessionId", l.id)
	o.Set("state", string(l.State))
	o.Set(flag, l.State == flagState)
	o.Set("active", m.IsLive(l.State))
	o.Set("terminal", m.IsTerminal(l.State))
	o.Set("stopRetryable", l.State == protocol.SessionStopping && l.leaseHeld && !l.stopInProgress)
	if l.target != "" {
		o.Set("targetPackage", l.target)
	}
	o.Set("items", slices.Clone(l.items))
}

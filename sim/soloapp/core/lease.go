package core

import (
	"fmt"
)

// lease is the process-wide DeviceControlLease
// (docs/device-protocol.md#shared-control-lease): one owner at a time among
// harness replays (harness:<n>), UI replays (ui:<n>) and Agent sessions
// (agent-lease-<uuid>). Plugin maintenance needs no holder and blocks
// acquisitions while it runs
// (docs/device-protocol.md#concurrency-and-ownership). It dies with the
// process.
type lease struct {
	Owner       string
	maintenance bool
}

// Acquire takes the lease for owner; false when someone else holds it or
// plugin maintenance is running.
func (l *lease) Acquire(owner string) bool {
	if l.Owner != "" || l.maintenance {
		return false
	}
	l.Owner = owner
	return true
}

// Release gives the lease back if owner holds it and reports whether it did.
func (l *lease) Release(owner string) bool {
	if owner == "" || l.Owner != owner {
		return false
	}
	l.Owner = ""
	return true
}

// LeaseHolder returns the current DeviceControlLease owner ("" when free).
func (a *App) LeaseHolder() string {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	return a.P.Lease.Owner
}

// BeginMaintenance is for the plugin resolver: it succeeds only while no
// runtime session exists (RuntimeSessionGuard: the device-control lease, the
// screen recorder, a display-provider lease, a recording reservation or
// stress load), and blocks new acquisitions until the returned release func
// runs. The latch dies with the process.
func (a *App) BeginMaintenance() (release func(), err error) {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	return a.BeginMaintenanceLocked(a.P)
}

// BeginMaintenanceLocked takes the plugin maintenance latch of process p.
func (a *App) BeginMaintenanceLocked(p *Process) (release func(), err error) {
	if n := a.RuntimeSessions(p); n > 0 || p.Lease.maintenance {
		return nil, fmt.Errorf("soloapp: device is busy (%d runtime sessions, lease %q, maintenance %v)", n, p.Lease.Owner, p.Lease.maintenance)
	}
	p.Lease.maintenance = true
	return func() {
		a.Mu.Lock()
		defer a.Mu.Unlock()
		p.Lease.maintenance = false
	}, nil
}

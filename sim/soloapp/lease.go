package soloapp

import "fmt"

// lease is the process-wide DeviceControlLease
// (docs/device-protocol.md#shared-control-lease): one owner at a time among
// harness replays (harness:<n>), UI replays (ui:<n>) and Agent sessions
// (agent-lease-<uuid>). Plugin maintenance needs no holder and blocks
// acquisitions while it runs
// (docs/device-protocol.md#concurrency-and-ownership). It dies with the
// process.
type lease struct {
	owner       string
	maintenance bool
}

// acquire takes the lease for owner; false when someone else holds it or
// plugin maintenance is running.
func (l *lease) acquire(owner string) bool {
	if l.owner != "" || l.maintenance {
		return false
	}
	l.owner = owner
	return true
}

// release gives the lease back if owner holds it and reports whether it did.
func (l *lease) release(owner string) bool {
	if owner == "" || l.owner != owner {
		return false
	}
	l.owner = ""
	return true
}

// LeaseHolder returns the current DeviceControlLease owner ("" when free).
func (a *appCore) LeaseHolder() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.p.lease.owner
}

// BeginMaintenance is for the plugin resolver: it succeeds only while no
// runtime session exists (RuntimeSessionGuard: the device-control lease, the
// screen recorder, a display-provider lease, a recording reservation or
// stress load), and blocks new acquisitions until the returned release func
// runs. The latch dies with the process.
func (a *appCore) BeginMaintenance() (release func(), err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.beginMaintenanceLocked(a.p)
}

// beginMaintenanceLocked takes the plugin maintenance latch of process p.
func (a *appCore) beginMaintenanceLocked(p *process) (release func(), err error) {
	if n := a.runtimeSessions(p); n > 0 || p.lease.maintenance {
		return nil, fmt.Errorf("soloapp: device is busy (%d runtime sessions, lease %q, maintenance %v)", n, p.lease.owner, p.lease.maintenance)
	}
	p.lease.maintenance = true
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		p.lease.maintenance = false
	}, nil
}

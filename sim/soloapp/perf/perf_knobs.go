package perf

// SetPerfCleanupIncomplete makes the next n performance (recording or
// display) stops leave their cleanup incomplete: the session stays
// stopping with stopRetryable:true.
func (a *Perf) SetPerfCleanupIncomplete(n int) {
	a.Locked(func() { a.cleanupIncomplete = max(0, n) })
}

// SetPerfProviderReady controls whether the DisplayProvider service is
// bound ("Performance display service is not ready" when false).
func (a *Perf) SetPerfProviderReady(ready bool) {
	a.Locked(func() { a.providerNotReady = !ready })
}

// SetManualPerformanceWindow simulates the manual performance floating
// window running the CPU item, which blocks both protocol leases.
func (a *Perf) SetManualPerformanceWindow(running bool) {
	a.Locked(func() { a.manualWindow = running })
}

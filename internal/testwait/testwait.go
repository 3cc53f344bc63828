// Package testwait is the tests' one way to wait for state another process
// or goroutine changes (a device's lease, a file, a page): poll a
// condition until it holds or a deadline fails the test. Library code
// waits through solopi/device.PollUntil and a clock instead.
package testwait

import (
	"testing"
	"time"
)

// interval is the pause between two checks: short against the seconds a
// test gives a condition, long enough not to busy a 2-core machine.
const interval = 5 * time.Millisecond

// Until polls cond until it holds; after timeout it fails the test naming
// what it waited for.
func Until(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(interval)
	}
}

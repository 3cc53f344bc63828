// Package device is the host's core of the SoloPi control protocol: the
// Transport a device is reached through (adb or the simulator), the Device
// channel (mutations through the protected activity, read-only queries over
// a tcp: stream, push/pull with digests, screencap, logcat, foreground),
// session bootstrap (OpenSession), the request parameters, request
// IDs, the one poll loop (PollUntil) on the injected clock, the typed
// device errors, SoloPi's health checks, progress events, and the one way
// device JSON is decoded and validated (WireObject, Violations).
//
// Feature packages (replay, agent, sessions, readiness) build on it; it
// imports none of them. See docs/architecture.md.
package device

// Package agent is the simulated app's agent resolver: Agent sessions with
// their observations, acts, receipts and events
// (docs/device-protocol.md#agent-sessions). It is separate because it only
// needs the shared state of sim/soloapp/core; sim/soloapp wires it in.
package agent

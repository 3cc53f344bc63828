// Package onphone connects a verification run to a SoloPi phone: it
// implements verify/execution's ports (CaseRunner and AgentSession) with
// the same in-process code as the case-import, run and agent-* commands.
//
// A deterministic segment is imported like `case-import --replace` (no
// high-risk confirmation: a compiled case holds none) and replayed like
// `run --case NAME` with the scenario's target package, auto-start on and
// the evidence in the segment's replay/ directory. An explore step brings
// the target app to the front (its launcher activity, resolved as
// startup-time does, with `am start -W -n`) and drives one Agent session
// owned by the engine's verification-<32 hex> token, which never leaves
// this package except on the wire.
//
// A cancelled context cancels exactly what was started: the replay whose
// runId and requestId are ours, the session whose sessionId and token are
// ours. The error returned then is an interrupt (fault.IsInterrupt). A run
// cancelled by someone else is not: it is a replay that did not finish.
package onphone

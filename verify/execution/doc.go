// Package execution runs a verification plan on a phone (verify-run).
//
// The Engine walks the plan's executionOrder: deterministic segments are
// imported and replayed through a CaseRunner, explore steps are driven
// through an AgentSession by a DecisionProvider (a static decisions file,
// a cloud endpoint, or the pure-vision planner), and vision checkpoints
// are put to a VisionJudge. It writes the evidence directory (plan.json,
// events.jsonl, segments/<segmentId>/…, report.json) with owner tokens
// removed, and the report is verify.Judge's verdict on what it recorded.
// A cancelled context (SIGINT/SIGTERM) cancels exactly what is active
// through the ports and still leaves a partial report marked interrupted.
package execution

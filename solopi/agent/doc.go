// Package agent is the host client of SoloPi's dynamic Agent protocol: the
// owner token, session start/observe/act/control, receipts, the timeline
// and its checks, selector resolution, evidence files, and RunSession,
// which drives a session with a DecisionProvider (the planner in agentloop
// is one). See docs/device-protocol.md.
package agent

// Package agent is the host client of SoloPi's dynamic Agent protocol: the
// owner token, session start/observe/act/control, receipts, the timeline
// and its checks, selector resolution and evidence files. verify-run's
// explore steps (verify/onphone) and agent-run's SoloPi device drive
// sessions through it. See docs/device-protocol.md.
package agent

// Package replay runs recorded cases on the device: case get/list/import/
// delete, one run (preflight, start, acknowledgement, terminal state,
// evidence collection), cancel and latest result, batches of runs, and the
// replay history. See docs/device-protocol.md and docs/state-machines.md.
package replay

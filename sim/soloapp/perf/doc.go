// Package perf is the simulated app's performance resolver pair: recordings
// (mode=normal, saved as CSVs), the live display lease (mode=display) and the
// DisplayProvider lease both share (docs/device-protocol.md#session-types).
// It is separate because it only needs sim/soloapp/core; history and plugins
// ask it whether a recording is live.
package perf

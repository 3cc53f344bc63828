// Package sessioncmd holds the SoloPi session commands: record-*,
// screen-record-*, scan-*, video-*, perf-* (with perf-analyze and the perf
// history), stress-* and plugin-*. They share the session adapters in
// commands.go (timings, stop options, session ids); Commands lists them.
package sessioncmd

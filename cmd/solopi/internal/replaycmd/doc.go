// Package replaycmd holds the replay commands: cases and case-* edits,
// run, run-repeat, run-batch, status, result, cancel and replay-history-*.
// Each command is an options struct plus a run function over
// cmdutil.DeviceDeps; Commands lists them for the app. It is separate from
// the other groups because nothing but the app wiring needs it.
package replaycmd

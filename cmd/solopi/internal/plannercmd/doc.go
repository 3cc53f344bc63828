// Package plannercmd holds the pure-vision planner commands: planner-check,
// planner-parse, planner-calibrate and agent-run (with its live console and
// status line). It also exports the model setup (Setup, ReadSetup,
// ModelFlags, Preflight, Space) that verify-run shares, which is why
// verifycmd imports it and not the reverse.
package plannercmd

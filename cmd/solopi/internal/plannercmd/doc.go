// Package plannercmd holds the pure-vision planner commands: planner-check,
// planner-parse, planner-calibrate and agent-run (with its live console and
// status line). The model setup and the endpoint preflight they run are
// agentloop's (ModelSetup); the model flags are cmdutil's, which verify-run
// shares.
package plannercmd

// Package cmdutil is what every solopi command shares, in the manner of
// gh's pkg/cmdutil: the process environment a command sees (Env), the
// global options (Globals, GlobalFlags), the adapter from a run function to
// urfave/cli that prints the one JSON object and records the exit code
// (Action, DeviceAction: the only place errors become exit codes), device
// selection through the adb server and its typed selection errors
// (DeviceDeps, MapAdbError), the status line's device events, and the
// evidence-report glue (ReportOf).
//
// It is separate so that the command groups under cmd/solopi/internal
// (replaycmd, agentcmd, plannercmd, sessioncmd, devicecmd, verifycmd,
// managedcmd) depend on one small core instead of on each other or on
// package main; cmd/solopi itself keeps only main, the app wiring and the
// commands that need the whole app (demo runs the app on a simulator).
package cmdutil

// Package cmdutil is what every solopi command shares, in the manner of
// gh's pkg/cmdutil: the process environment a command sees (Env), the app
// (App: global flags before or after the command, grouped help, --version,
// completion scripts, did-you-mean, help on stdout only when asked, parser
// errors on stderr with the usage rules each command's flags do not
// declare), the global options (Globals), the two adapters from a run
// function to urfave/cli (Local, OnDevice) that read the seconds flags,
// print the one JSON object and hand back the exit code — the only place a
// result or an error becomes output and a code — the command's device
// (DeviceDeps over solopi/device's Selector), the flags two command groups
// share (the model flags, verify-run's device budgets), the status line's
// device events, and the evidence-report glue (ReportOf).
//
// The command groups under cmd/solopi/internal (replaycmd, agentcmd,
// plannercmd, sessioncmd, devicecmd, verifycmd, managedcmd) import this
// package and libraries only, never each other; cmd/solopi lists them.
package cmdutil

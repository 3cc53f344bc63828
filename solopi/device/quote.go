package device

import "github.com/solopi-dev/solopi/solopi/adb"

// ShellQuote quotes one argument for the device's `sh -c` (shlex rules):
// arguments made only of [A-Za-z0-9_@%+=:,./-] stay bare, anything else is
// single-quoted with each ' written as '\”.
func ShellQuote(s string) string { return adb.ShellQuote(s) }

// ShellJoin joins arguments into one device shell command line, quoting
// each as needed, so the device shell re-splits it exactly.
func ShellJoin(args ...string) string { return adb.ShellJoin(args...) }

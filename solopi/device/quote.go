package device

import "github.com/solopi-dev/solopi/solopi/adb"

// ShellJoin joins arguments into one device shell command line, quoting
// each as needed, so the device shell re-splits it exactly.
func ShellJoin(args ...string) string { return adb.ShellJoin(args...) }

// Package managedcmd holds the managed-* commands: the store commands
// (health, devices, submit, status, events, report, cancel, recover, purge),
// the control-plane server, and the workers and device probe that run
// shards on this host's phones through managed/devicehost.
package managedcmd

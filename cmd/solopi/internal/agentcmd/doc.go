// Package agentcmd holds the Agent protocol commands (agent-*): session
// start, observe, act, receipts, timeline and control, and the owner-token
// handling that keeps tokens out of every output. Each command is an options
// struct plus a run function over cmdutil.DeviceDeps; Commands lists them.
package agentcmd

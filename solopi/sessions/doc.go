// Package sessions drives SoloPi's session types from the host: record,
// screen-record, scan, video analysis, stress, performance collection and
// the performance display, performance history, and plugins. The shared
// machinery (start under a fresh sessionId, wait, stop exactly our own
// session, clean up on interrupt) is in snapshot.go.
package sessions

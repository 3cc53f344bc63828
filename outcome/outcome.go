// Package outcome is the exit-code table: the one place a fault.Kind or a
// verdict becomes a process exit code, compatible with solopi-ai. Commands
// reach it through cmdutil's result constructors (which print the one JSON
// object); the libraries whose own outputs record the code the process
// will exit with (a managed report's exitCode, a trajectory's exit) read
// it too, so that the two never disagree.
package outcome

import "github.com/solopi-dev/solopi/fault"

// Exit codes, compatible with the upstream solopi-ai CLI.
const (
	ExitOK          = 0
	ExitFailure     = 2 // not ready, business failure, conflict, non-passed verdict
	ExitUsage       = 3 // local usage or validation error, device selection
	ExitTransport   = 4 // adb, HTTP or protocol error
	exitTimeout     = 124
	exitInterrupted = 130
)

// ExitFor is the exit code of an error kind.
func ExitFor(k fault.Kind) int {
	switch k {
	case fault.Invalid:
		return ExitUsage
	case fault.Failed:
		return ExitFailure
	case fault.Timeout:
		return exitTimeout
	case fault.Interrupted:
		return exitInterrupted
	}
	return ExitTransport // Transport and Internal
}

// Verdicts used by run results and managed reports.
const (
	VerdictPassed    = "passed"
	VerdictFailed    = "failed"
	VerdictNotTested = "not_tested"
	verdictCancelled = "cancelled"
)

// VerdictExit maps a verdict to its exit code: passed 0, failed 2,
// not_tested 3, cancelled 130, anything else (unfinished) 4.
func VerdictExit(verdict string) int {
	switch verdict {
	case VerdictPassed:
		return ExitOK
	case VerdictFailed:
		return ExitFailure
	case VerdictNotTested:
		return ExitUsage
	case verdictCancelled:
		return exitInterrupted
	}
	return ExitTransport
}

// ExitOf is the exit code of a result's failure: 0 when there is none.
func ExitOf(e *fault.Error) int {
	if e == nil {
		return ExitOK
	}
	return ExitFor(e.Kind)
}

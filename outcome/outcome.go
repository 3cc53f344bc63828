// Package outcome is the CLI's output contract in one place: the error type
// every command returns (stable errorCode, human message, exit code, what the
// user can do), the exit-code table, and how the one JSON object is printed.
package outcome

import (
	"context"
	"errors"
	"fmt"
)

// Exit codes (DESIGN §5), compatible with the upstream solopi-ai CLI.
const (
	ExitOK          = 0
	ExitFailure     = 2 // not ready, business failure, conflict, non-passed verdict
	ExitUsage       = 3 // local usage or validation error, device selection
	ExitTransport   = 4 // adb, HTTP or protocol error
	ExitTimeout     = 124
	ExitInterrupted = 130
)

// Error is a handled failure: it becomes {"success":false,"errorCode",...}
// on stdout and the process exit code.
type Error struct {
	Code    string // stable snake_case errorCode
	Message string // human text
	Exit    int
	// UserAction says, in words a tester can follow, what they must do.
	UserAction string
	// Details are extra top-level fields of the error object (identifiers,
	// last observed status, cleanup evidence).
	Details map[string]any
	Err     error // cause, for errors.Is/As; never printed raw
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// New returns an error with an exit code, errorCode and message.
func New(exit int, code, msg string) *Error {
	return &Error{Code: code, Message: msg, Exit: exit}
}

// Newf is New with a formatted message.
func Newf(exit int, code, format string, args ...any) *Error {
	return New(exit, code, fmt.Sprintf(format, args...))
}

// Wrap returns an error carrying cause.
func Wrap(exit int, code, msg string, cause error) *Error {
	return &Error{Code: code, Message: msg, Exit: exit, Err: cause}
}

// With adds a detail field and returns e for chaining.
func (e *Error) With(key string, v any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[key] = v
	return e
}

// WithUserAction sets what the user must do.
func (e *Error) WithUserAction(s string) *Error {
	e.UserAction = s
	return e
}

// Usage is a local usage or validation error (exit 3).
func Usage(code, msg string) *Error { return New(ExitUsage, code, msg) }

// Fields renders the error object printed on stdout.
func (e *Error) Fields() map[string]any {
	m := map[string]any{}
	for k, v := range e.Details {
		m[k] = v
	}
	m["success"] = false
	m["errorCode"] = e.Code
	m["error"] = e.Message
	if e.UserAction != "" {
		m["userActionRequired"] = e.UserAction
	}
	return m
}

// From converts any error into an *Error: a wrapped *Error is returned as
// is; context cancellation becomes interrupted (130), a deadline becomes a
// timeout (124); anything else is an internal error (exit 4) whose message
// is the error text.
func From(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	switch {
	case errors.Is(err, context.Canceled):
		return Wrap(ExitInterrupted, "interrupted", "the command was interrupted", err)
	case errors.Is(err, context.DeadlineExceeded):
		return Wrap(ExitTimeout, "timeout", "the command timed out", err)
	}
	return Wrap(ExitTransport, "internal_error", err.Error(), err)
}

// Verdicts used by run results and managed reports.
const (
	VerdictPassed    = "passed"
	VerdictFailed    = "failed"
	VerdictNotTested = "not_tested"
	VerdictCancelled = "cancelled"
)

// VerdictExit maps a verdict to its exit code: passed 0, failed 2,
// not_tested 3, cancelled 130, anything else (non-terminal, control error) 4.
func VerdictExit(verdict string) int {
	switch verdict {
	case VerdictPassed:
		return ExitOK
	case VerdictFailed:
		return ExitFailure
	case VerdictNotTested:
		return ExitUsage
	case VerdictCancelled:
		return ExitInterrupted
	}
	return ExitTransport
}

// Usagef is Usage with a formatted message.
func Usagef(code, format string, args ...any) *Error { return Newf(ExitUsage, code, format, args...) }

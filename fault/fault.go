// Package fault is the error every library package returns: a Kind that
// says what went wrong (bad input, a refused or failed operation, a broken
// transport, an expired budget, an interrupt), a stable snake_case code, a
// human message, what the user can do, and detail fields. Libraries never
// choose process exit codes; cmd/solopi maps a Kind to one in one place.
package fault

import (
	"context"
	"errors"
	"fmt"
)

// Kind classifies an error for the caller (and, in cmd/solopi, for the exit
// code).
type Kind uint8

const (
	// Internal is an unexpected failure: a bug, or an error nobody typed.
	Internal Kind = iota
	// Invalid is bad local input: flags, files, identifiers, device selection.
	Invalid
	// Failed is an operation that ran and was refused or did not succeed:
	// not ready, a conflict, a device rejection, a business failure.
	Failed
	// Transport is a broken channel: adb, HTTP, or a device answer that
	// breaks the protocol contract.
	Transport
	// Timeout is a wait budget that expired.
	Timeout
	// Interrupted is SIGINT/SIGTERM (the command's context was cancelled).
	Interrupted
)

var kindNames = [...]string{"internal", "invalid", "failed", "transport", "timeout", "interrupted"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Error is a typed, handled failure. Fields renders it as the error object
// of the output contract.
type Error struct {
	Kind    Kind
	Code    string // stable snake_case errorCode
	Message string // human text
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

// New returns an error of kind with an errorCode and message.
func New(kind Kind, code, msg string) *Error {
	return &Error{Kind: kind, Code: code, Message: msg}
}

// Newf is New with a formatted message.
func Newf(kind Kind, code, format string, args ...any) *Error {
	return New(kind, code, fmt.Sprintf(format, args...))
}

// Wrap returns an error carrying cause.
func Wrap(kind Kind, code, msg string, cause error) *Error {
	return &Error{Kind: kind, Code: code, Message: msg, Err: cause}
}

// Usage is a local usage or validation error (kind Invalid).
func Usage(code, msg string) *Error { return New(Invalid, code, msg) }

// Usagef is Usage with a formatted message.
func Usagef(code, format string, args ...any) *Error { return Newf(Invalid, code, format, args...) }

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

// Fields renders the error object printed on stdout: the details, then
// success:false, errorCode, error and userActionRequired.
func (e *Error) Fields() map[string]any {
	m := make(map[string]any, len(e.Details)+4)
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
// is; context cancellation becomes Interrupted, a deadline Timeout; anything
// else is Internal with the error text as its message.
func From(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	switch {
	case errors.Is(err, context.Canceled):
		return Wrap(Interrupted, CodeInterrupted, "the command was interrupted", err)
	case errors.Is(err, context.DeadlineExceeded):
		return Wrap(Timeout, CodeTimeout, "the command timed out", err)
	}
	return Wrap(Internal, CodeInternalError, err.Error(), err)
}

// KindOf is the kind of err (Internal for an untyped error, as From).
func KindOf(err error) Kind { return From(err).Kind }

// CodeOf is the errorCode of err ("" when err is nil).
func CodeOf(err error) string {
	if err == nil {
		return ""
	}
	return From(err).Code
}

// IsInterrupt reports whether err is an interrupt (SIGINT/SIGTERM).
func IsInterrupt(err error) bool {
	return err != nil && KindOf(err) == Interrupted
}

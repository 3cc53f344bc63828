package casefile

import (
	"fmt"
)

// Error is the one error type of this package. Code is stable snake_case;
// Message is for humans and names the step index when one is involved.
type Error struct {
	Code    string
	Message string
	// StepIndex is the 0-based step position, or -1 when the error is not
	// about one step.
	StepIndex int
	StepID    string
	Field     string
	// Details carries machine-readable context (missingParams, targetAction,
	// highRiskSteps, ...) for the CLI's JSON output.
	Details map[string]any
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, &Error{Code: X}) match on the code alone.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code != "" && t.Code == e.Code
}

func newError(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), StepIndex: -1}
}

func stepError(code string, index int, stepID, format string, args ...any) *Error {
	msg := fmt.Sprintf("step %d: ", index) + fmt.Sprintf(format, args...)
	return &Error{Code: code, Message: msg, StepIndex: index, StepID: stepID}
}

func (e *Error) with(key string, value any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[key] = value
	return e
}

func (e *Error) wrap(err error) *Error {
	e.Err = err
	return e
}

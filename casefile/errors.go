package casefile

import (
	"fmt"
)

// Stable error codes. They are part of the CLI's JSON contract (errorCode),
// so they never change once released; messages may.
const (
	// Parse.
	CodeInvalidCaseJSON     = "invalid_case_json"     // not JSON, or not an object
	CodeInvalidField        = "invalid_field"         // a known field has the wrong JSON type
	CodeInvalidOperationLog = "invalid_operation_log" // operationLog is neither an object nor an encoded object
	CodeInvalidStep         = "invalid_step"          // a step, method, node or param has the wrong shape
	CodeInvalidUTF8         = "invalid_utf8"          // bytes that are not UTF-8, or a \u escape of a lone surrogate
	CodeDuplicateKey        = "duplicate_key"         // an object key given twice (details: key, jsonPath)

	// Host normalisation and validation.
	CodeInvalidCase            = "invalid_case" // also every device-side validation failure
	CodeMissingCaseName        = "missing_case_name"
	CodeMissingTargetPackage   = "missing_target_package"
	CodeInvalidPriority        = "invalid_priority"
	CodeInvalidAdvanceSettings = "invalid_advance_settings"
	CodeInvalidRunningParams   = "invalid_running_params"
	CodeMissingSteps           = "missing_steps"
	CodeMissingAction          = "missing_action"
	CodeUnsupportedAction      = "unsupported_action"
	CodeRuntimeOnlyAction      = "runtime_only_action"
	CodeMissingParams          = "missing_params"
	CodeInvalidProviderParams  = "invalid_provider_params"
	CodeProviderPairing        = "provider_pairing"
	CodeMissingNode            = "missing_node"
	CodeMissingSelector        = "missing_selector"
	CodeDuplicateStepID        = "duplicate_step_id"
	CodeRefusedAction          = "refused_action"
	CodeUnknownProviderAction  = "unknown_provider_action"
	CodeRefusedProviderURL     = "refused_provider_url"
	CodeHighRiskUnconfirmed    = "high_risk_unconfirmed"
	CodeStepIndexOutOfRange    = "step_index_out_of_range"
	CodeLastStep               = "last_step"
	CodeInvalidOperationIndex  = "invalid_operation_index"
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

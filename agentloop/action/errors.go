package action

import "fmt"

// Protocol rejection codes. Each rejection happens before any device
// contact and has its own code so that metrics and the same-step retry
// prompt can name the exact fault.
const (
	CodeEmptyOutput          = "empty_output"
	CodeMissingAction        = "missing_action"
	CodeUnknownAction        = "unknown_action"
	CodeUnknownField         = "unknown_field"
	CodeMissingField         = "missing_field"
	CodeDuplicateKeyword     = "duplicate_keyword"
	CodePositionalArgument   = "positional_argument"
	CodeDynamicExpression    = "dynamic_expression"
	CodeMultipleCalls        = "multiple_calls"
	CodeMarkdownWrapped      = "markdown_wrapped"
	CodeJSONWrapped          = "json_wrapped"
	CodeSpecialTokenWrapped  = "special_token_wrapped"
	CodeTrailingOutput       = "trailing_output"
	CodeLeadingOutput        = "leading_output"
	CodeIncompleteCall       = "incomplete_call"
	CodeMalformedEnvelope    = "malformed_envelope"
	CodeInvalidLiteral       = "invalid_literal"
	CodeInvalidValue         = "invalid_value"
	CodeNonFiniteCoordinate  = "non_finite_coordinate"
	CodeCoordinateOutOfRange = "coordinate_out_of_range"
	CodeFieldTooLong         = "field_too_long"
	CodeInvalidWaitDuration  = "invalid_wait_duration"
	CodeSwipeDirection       = "swipe_direction_conflict"
	CodeSwipeAmbiguous       = "swipe_axis_ambiguous"
)

// ProtocolError is a rejected model answer. Code is stable and snake_case;
// Offset is the byte offset in the answer text when known (-1 otherwise).
type ProtocolError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Offset  int    `json:"offset"`
}

func (e *ProtocolError) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("%s at offset %d: %s", e.Code, e.Offset, e.Message)
	}
	return e.Code + ": " + e.Message
}

func perr(code string, off int, format string, args ...any) *ProtocolError {
	return &ProtocolError{Code: code, Message: fmt.Sprintf(format, args...), Offset: off}
}

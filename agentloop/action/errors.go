package action

import "fmt"

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

package outcome

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/solopi-dev/solopi/fault"
)

// Result is what a command returns on success: any JSON-encodable object
// (a struct or a map) plus the exit code it implies. A command that reports
// a business outcome (a failed run) returns a Result with a non-zero Exit.
type Result struct {
	Value any
	Exit  int
}

// OK wraps a successful value (exit 0).
func OK(v any) Result { return Result{Value: v} }

// Encode renders v as the single JSON object of a command: compact by
// default, indented by two spaces with pretty; the key order is the same in
// both modes. HTML characters and non-ASCII text are written as they are.
func Encode(v any, pretty bool) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if pretty {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode output: %w", err)
	}
	b := buf.Bytes()
	if len(b) == 0 || b[0] != '{' {
		return nil, fmt.Errorf("encode output: command result is not a JSON object")
	}
	return b, nil
}

// Print writes the single JSON object for a command's result or error and
// returns the exit code. It never writes a partial object: if the result
// cannot be encoded, a JSON error object is written instead.
func Print(w io.Writer, res Result, err error, pretty bool) int {
	exit := res.Exit
	var v any = res.Value
	if err != nil {
		e := fault.From(err)
		v, exit = e.Fields(), ExitFor(e.Kind)
	}
	b, encErr := Encode(v, pretty)
	if encErr != nil {
		e := fault.Wrap(fault.Internal, "output_encoding_failed", "the command result could not be encoded as JSON", encErr)
		b, _ = Encode(e.Fields(), pretty)
		exit = ExitFor(e.Kind)
	}
	if _, werr := w.Write(b); werr != nil && exit == ExitOK {
		exit = ExitTransport
	}
	return exit
}

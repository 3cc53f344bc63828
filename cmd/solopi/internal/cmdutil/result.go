package cmdutil

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
)

// Result is what a command's run function returns when it has an object to
// print: any JSON-encodable object (a struct or a map) and the exit code
// it implies. The code always comes from outcome's table: a command says
// what happened (OK, Failed, WithKind, WithFailure, WithVerdict), never a
// number.
type Result struct {
	Value any
	Exit  int
}

// OK is a successful object (exit 0).
func OK(v any) Result { return Result{Value: v} }

// Failed is an object reporting a business failure: not ready, a failed
// verdict, a refused step.
func Failed(v any) Result { return WithKind(v, fault.Failed) }

// WithKind is an object that reports a failure of kind k (a cleanup that
// did not finish is Transport, a stop by a signal Interrupted).
func WithKind(v any, k fault.Kind) Result { return Result{Value: v, Exit: outcome.ExitFor(k)} }

// WithFailure is an object whose failure (nil: none) sets the exit code.
func WithFailure(v any, failure *fault.Error) Result {
	return Result{Value: v, Exit: outcome.ExitOf(failure)}
}

// WithVerdict is an object whose verdict sets the exit code.
func WithVerdict(v any, verdict string) Result {
	return Result{Value: v, Exit: outcome.VerdictExit(verdict)}
}

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

// printObject writes the single JSON object for a command's result or error and
// returns the exit code: the one place an error becomes a printed object
// and a code. It never writes a partial object: a result that cannot be
// encoded is replaced by a JSON error object.
func printObject(w io.Writer, res Result, err error, pretty bool) int {
	exit := res.Exit
	var v any = res.Value
	if err != nil {
		e := fault.From(err)
		v, exit = e.Fields(), outcome.ExitFor(e.Kind)
	}
	b, encErr := Encode(v, pretty)
	if encErr != nil {
		e := fault.Wrap(fault.Internal, fault.CodeOutputEncodingFailed, "the command result could not be encoded as JSON", encErr)
		b, _ = Encode(e.Fields(), pretty)
		exit = outcome.ExitFor(e.Kind)
	}
	if _, werr := w.Write(b); werr != nil && exit == outcome.ExitOK {
		exit = outcome.ExitFor(fault.Transport)
	}
	return exit
}

package canonjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// MaxDocumentBytes bounds one JSON document. Every input file and body the
// host reads has a cap of its own at most this large; a document this size
// already costs several times as much memory once decoded.
const MaxDocumentBytes = 64 << 20

var (
	// ErrTrailingData is something other than white space after the
	// document: `{…} junk`, `{…}}`, a second document.
	ErrTrailingData = errors.New("canonical json: extra data after the value")
	// ErrTooLarge is a document over its size cap.
	ErrTooLarge = errors.New("canonical json: the document is larger than its size limit")
)

// Decode parses one JSON document into the generic tree (see Unmarshal).
func Decode(b []byte) (any, error) {
	var v any
	if err := Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// Unmarshal decodes the one JSON document b holds into v, as encoding/json
// does, with the rules every reader of outside input needs: numbers in
// generic values stay json.Number (integers exact, and Python's int/float
// distinction kept), anything but white space after the document is
// ErrTrailingData, and a document over MaxDocumentBytes is ErrTooLarge.
func Unmarshal(b []byte, v any) error { return unmarshal(b, v, false) }

// UnmarshalStrict is Unmarshal that also refuses an object key v's struct
// types have no field for: in a hand-written spec or a request body a
// misspelt key must fail loudly, not be ignored.
func UnmarshalStrict(b []byte, v any) error { return unmarshal(b, v, true) }

// Read reads one document of at most limit bytes (MaxDocumentBytes when
// limit is not positive or larger) from r, such as a request body, and
// unmarshals it into v; a longer stream is ErrTooLarge.
func Read(r io.Reader, limit int64, v any) error {
	if limit <= 0 || limit > MaxDocumentBytes {
		limit = MaxDocumentBytes
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return fmt.Errorf("canonical json: read: %w", err)
	}
	if int64(len(b)) > limit {
		return ErrTooLarge
	}
	return Unmarshal(b, v)
}

func unmarshal(b []byte, v any, strict bool) error {
	if len(b) > MaxDocumentBytes {
		return ErrTooLarge
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("canonical json: %w", err)
	}
	// The decoder stops at the end of the first value; what follows must be
	// white space only (a bare '}' is no value, so a token reader would
	// let `{…}}` through).
	if len(bytes.TrimLeft(b[dec.InputOffset():], " \t\r\n")) > 0 {
		return ErrTrailingData
	}
	return nil
}

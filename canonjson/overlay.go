package canonjson

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Overlay is a command result that echoes an object the device sent,
// unchanged, with the host's own typed fields laid over it: Fields is a
// struct (or anything that encodes as a JSON object) and each of its keys
// replaces the device key of the same name. It encodes as one flat object
// with its keys sorted, the order a map gives, so a result that used to be
// a merged map prints the same bytes as a typed one. HTML characters are
// kept as they are (the encoder that prints the result decides that).
//
// It exists so that a result type needs map[string]any only for the part
// it echoes: the device's status object at the top level of run, result
// and cancel, whose fields the host does not own.
type Overlay struct {
	Base   map[string]any
	Fields any
}

// MarshalJSON merges Fields over Base.
func (o Overlay) MarshalJSON() ([]byte, error) {
	top, err := encodeRaw(o.Fields)
	if err != nil {
		return nil, fmt.Errorf("overlay: host fields: %w", err)
	}
	var fields map[string]json.RawMessage
	if !bytes.Equal(bytes.TrimSpace(top), []byte("null")) {
		if err := json.Unmarshal(top, &fields); err != nil {
			return nil, fmt.Errorf("overlay: host fields are not a JSON object: %w", err)
		}
	}
	merged := make(map[string]any, len(o.Base)+len(fields))
	for k, v := range o.Base {
		merged[k] = v
	}
	for k, v := range fields {
		merged[k] = v
	}
	return encodeRaw(merged)
}

// encodeRaw is json.Marshal without HTML escaping and without the
// encoder's trailing newline.
func encodeRaw(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

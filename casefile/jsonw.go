package casefile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/solopi-dev/solopi/protocol"
)

// A tiny JSON writer. encoding/json cannot be used for SoloPi output: it
// escapes <, > and & (fastjson does not), it does not sort struct fields, and
// the device's snapshot string is hashed byte for byte into caseFingerprint.
// Values are trees of nil, string, bool, int, int64, json.Number,
// json.RawMessage, []any and map[string]any; object keys are always sorted
// (fastjson's bean property order and MapSortField).

type jsonWriter struct {
	buf bytes.Buffer
	// omitNull drops object members whose value is null, as fastjson does
	// without WriteMapNullValue. Array elements are never dropped.
	omitNull bool
}

func (w *jsonWriter) value(v any) error {
	if protocol.WriteJSONScalar(&w.buf, v) {
		return nil
	}
	switch x := v.(type) {
	case json.Number:
		w.buf.WriteString(x.String())
	case json.RawMessage:
		g, err := decodeGeneric(x)
		if err != nil {
			return err
		}
		return w.value(g)
	case []any:
		w.buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				w.buf.WriteByte(',')
			}
			if err := w.value(e); err != nil {
				return err
			}
		}
		w.buf.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k, e := range x {
			if w.omitNull && isNull(e) {
				continue
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		w.buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				w.buf.WriteByte(',')
			}
			protocol.WriteJSONString(&w.buf, k)
			w.buf.WriteByte(':')
			if err := w.value(x[k]); err != nil {
				return err
			}
		}
		w.buf.WriteByte('}')
	default:
		return fmt.Errorf("casefile: cannot encode %T", v)
	}
	return nil
}

func isNull(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case *string:
		return x == nil
	case json.RawMessage:
		return x == nil || string(bytes.TrimSpace(x)) == "null"
	}
	return false
}

func encodeJSON(v any, omitNull bool) (string, error) {
	w := &jsonWriter{omitNull: omitNull}
	if err := w.value(v); err != nil {
		return "", err
	}
	return w.buf.String(), nil
}

// decodeGeneric decodes keeping numbers verbatim, so re-encoding does not
// turn 35 into 35.0 or lose precision on long ids.
func decodeGeneric(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

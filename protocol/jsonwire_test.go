package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/canonjson"
)

func TestEncodeJSONObjects(t *testing.T) {
	t.Parallel()
	o := NewJSONObject("b", 1, "a", nil, "c", "x")
	o.Set("b", 2).Set("d", []string{"<&>"})
	o.Del("c")
	if o.Get("b") != 2 || o.Get("c") != nil || len(o.Clone()) != 3 {
		t.Fatalf("object ops: %v", o)
	}
	for _, tc := range []struct {
		opts JSONOptions
		want string
	}{
		{JSONOptions{}, `{"b":2,"d":["<&>"]}`},
		{JSONOptions{SortKeys: true}, `{"b":2,"d":["<&>"]}`},
		{JSONOptions{KeepNulls: true}, `{"b":2,"a":null,"d":["<&>"]}`},
		{JSONOptions{SortKeys: true, KeepNulls: true}, `{"a":null,"b":2,"d":["<&>"]}`},
	} {
		got, err := EncodeJSON(o, tc.opts)
		if err != nil || string(got) != tc.want {
			t.Errorf("%+v: %s %v, want %s", tc.opts, got, err, tc.want)
		}
	}
	if got, _ := EncodeJSON([]any{1.0, 0.25, 1e21, json.Number("1.50")}, JSONOptions{}); string(got) != `[1.0,0.25,1e+21,1.50]` {
		t.Errorf("numbers: %s", got)
	}
}

// A value the dialect has no rule for is an error, and the output stays
// complete JSON with a marker in its place.
func TestEncodeJSONUnsupported(t *testing.T) {
	t.Parallel()
	got, err := EncodeJSON(map[string]any{"a": struct{}{}, "b": json.RawMessage("{bad")}, JSONOptions{})
	if err == nil || !strings.Contains(err.Error(), "struct {}") || !json.Valid(got) {
		t.Fatalf("%s %v", got, err)
	}
	var syn *json.SyntaxError
	if _, err := EncodeJSON(json.RawMessage("{bad"), JSONOptions{}); !errors.As(err, &syn) {
		t.Fatalf("bad raw: %v", err)
	}
}

// FuzzEncodeJSON: any JSON document re-encodes to valid JSON holding the
// same values (keys sorted, numbers verbatim), the embedded form gives the
// same bytes, and encoding is idempotent.
func FuzzEncodeJSON(f *testing.F) {
	f.Add([]byte(`{"b":[1,2.50,-0e+10,{"z":null,"y":"<\u2028>"}],"a":"\u0000\ufffd\u00e9"}`))
	f.Add([]byte(`"\u007f\u009f\/"`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		in, err := canonjson.Decode(doc)
		if err != nil {
			return
		}
		out, err := EncodeJSON(in, JSONOptions{KeepNulls: true})
		if err != nil || !json.Valid(out) {
			t.Fatalf("%q: %s %v", doc, out, err)
		}
		back, err := canonjson.Decode(out)
		if err != nil || !reflect.DeepEqual(back, in) {
			t.Fatalf("%q: %s decodes to %v, want %v", doc, out, back, in)
		}
		raw, err := EncodeJSON(json.RawMessage(doc), JSONOptions{KeepNulls: true})
		if err != nil || !bytes.Equal(raw, out) {
			t.Fatalf("raw %q: %s %v, want %s", doc, raw, err, out)
		}
		if again, _ := EncodeJSON(back, JSONOptions{KeepNulls: true}); !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %s then %s", out, again)
		}
		dropped, err := EncodeJSON(in, JSONOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d, err := canonjson.Decode(dropped); err != nil || hasNullMember(d) {
			t.Fatalf("nulls kept: %s %v", dropped, err)
		}
	})
}

func hasNullMember(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if e == nil || hasNullMember(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasNullMember(e) {
				return true
			}
		}
	}
	return false
}

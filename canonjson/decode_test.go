package canonjson

import (
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestUnmarshalRefusesTrailingData(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`{"a":1} junk`, `{"a":1}}`, `{} {}`, `[1]]`, `1 2`, `"x"y`, "{}\n\x00", `123abc`, `{"a":1},`} {
		var v any
		if err := Unmarshal([]byte(in), &v); !errors.Is(err, ErrTrailingData) {
			t.Errorf("Unmarshal(%q) = %v; want ErrTrailingData", in, err)
		}
	}
	for _, in := range []string{"{} \r\n\t", ` [1] `, "\n7\n"} {
		if _, err := Decode([]byte(in)); err != nil {
			t.Errorf("Decode(%q): %v", in, err)
		}
	}
}

func TestUnmarshalKeepsNumbers(t *testing.T) {
	t.Parallel()
	v, err := Decode([]byte(`{"id":12345678901234567890,"f":1.0}`))
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	if m["id"] != json.Number("12345678901234567890") || m["f"] != json.Number("1.0") {
		t.Fatalf("numbers changed: %#v", m)
	}
}

func TestUnmarshalErrors(t *testing.T) {
	t.Parallel()
	var v any
	for _, in := range []string{``, `{`, `{"a":}`, `nul`, "\xef\xbb\xbf{}"} {
		if err := Unmarshal([]byte(in), &v); err == nil || errors.Is(err, ErrTrailingData) {
			t.Errorf("Unmarshal(%q) = %v; want a syntax error", in, err)
		}
	}
	big := make([]byte, MaxDocumentBytes+1)
	if err := Unmarshal(big, &v); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a document over the cap: %v", err)
	}
	var s struct{ A int }
	if err := UnmarshalStrict([]byte(`{"A":1,"B":2}`), &s); err == nil {
		t.Error("UnmarshalStrict accepted an unknown key")
	}
	if err := Unmarshal([]byte(`{"A":1,"B":2}`), &s); err != nil || s.A != 1 {
		t.Errorf("Unmarshal with an unknown key: %v, %+v", err, s)
	}
}

func TestRead(t *testing.T) {
	t.Parallel()
	var v map[string]any
	if err := Read(strings.NewReader(`{"a":[1]}`), 9, &v); err != nil || v["a"].([]any)[0] != json.Number("1") {
		t.Fatalf("Read = %v, %v", v, err)
	}
	if err := Read(strings.NewReader(`{"a":[1]} `), 9, &v); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a body one byte over the limit: %v", err)
	}
	if err := Read(strings.NewReader(`{} x`), 0, &v); !errors.Is(err, ErrTrailingData) {
		t.Errorf("trailing data in a body: %v", err)
	}
	if err := Read(errReader{}, 0, &v); err == nil {
		t.Error("a failing reader was accepted")
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, io.ErrClosedPipe }

// typed is a struct target for the differential fuzz: encoding/json and
// Unmarshal must agree on it whenever both accept a document.
type typed struct {
	A int64
	B string
	C []string
	D *bool
	E *struct{ F uint8 }
}

// FuzzUnmarshal checks the one decoder against encoding/json: it accepts
// exactly the documents json.Valid accepts (one value, nothing after it),
// its generic tree holds the numbers encoding/json reads as float64, and a
// struct target decodes to the same value.
func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,"x"]}`, `{"a":1} junk`, `{"a":1}}`, `1e400`, `[1]]`, `"\ud800"`, `{"A":-3,"B":"b","C":["c"],"D":true,"E":{"F":255}}`, `{"E":{"F":256}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := Decode(in)
		if valid := json.Valid(in); (err == nil) != valid {
			t.Fatalf("Decode(%q) error %v; json.Valid says %v", in, err, valid)
		}
		if err != nil {
			return
		}
		var std any
		if json.Unmarshal(in, &std) == nil { // numbers beyond float64 fail there only
			sameTree(t, got, std)
		}
		var a, b typed
		errA, errB := Unmarshal(in, &a), json.Unmarshal(in, &b)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("struct decode of %q: %v vs encoding/json %v", in, errA, errB)
		}
		if errA == nil && !reflect.DeepEqual(a, b) {
			t.Fatalf("struct decode of %q: %+v vs encoding/json %+v", in, a, b)
		}
	})
}

// sameTree compares a tree with json.Number leaves to encoding/json's
// float64 one.
func sameTree(t *testing.T, got, std any) {
	t.Helper()
	switch g := got.(type) {
	case json.Number:
		f, err := g.Float64()
		if err != nil || f != std.(float64) {
			t.Fatalf("number %s read as %v by encoding/json", g, std)
		}
	case map[string]any:
		s := std.(map[string]any)
		if len(g) != len(s) {
			t.Fatalf("object of %d keys vs %d", len(g), len(s))
		}
		for k, v := range g {
			sameTree(t, v, s[k])
		}
	case []any:
		s := std.([]any)
		if len(g) != len(s) {
			t.Fatalf("array of %d vs %d", len(g), len(s))
		}
		for i := range g {
			sameTree(t, g[i], s[i])
		}
	default:
		if got != std {
			t.Fatalf("%#v vs encoding/json %#v", got, std)
		}
	}
}

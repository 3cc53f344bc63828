package device

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// stdDecode is the reference: encoding/json with UseNumber, one object and
// nothing after it (json.Valid refuses what follows a value).
func stdDecode(b []byte) (map[string]any, bool) {
	if !json.Valid(b) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

func TestDecodeObject(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{}`, ` {"a":1} `, `{"n":12345678901234567890,"f":-1.5e-7,"z":0}`,
		`{"s":"tab\tq\"u\u00e9\ud83d\ude00","k":null,"t":true,"f":false}`,
		`{"a":[1,[2,{"b":[]}],{}],"dup":1,"dup":2}`,
		"{\"bad\":\"\xff\xfeok\",\"\xc3\":1}", `{"lone":"\ud800x"}`,
		// Deeper or larger than the fast path: encoding/json decodes it.
		`{"deep":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `,"s":"[[{"}`,
		`{"big":"` + strings.Repeat("x", fastMaxBytes) + `"}`,
	} {
		want, ok := stdDecode([]byte(in))
		if !ok {
			t.Fatalf("reference refuses %q", in)
		}
		got, err := DecodeObject([]byte(in))
		if err != nil || !reflect.DeepEqual(map[string]any(got), want) {
			t.Errorf("DecodeObject(%q) = %#v, %v; want %#v", in, got, err, want)
		}
	}
	for _, in := range []string{``, `null`, `[]`, `"x"`, `1`, `{"a":1}x`, `{"a":1}{}`, `{"a":1}}`, `{"a":1} junk`, `{"a":01}`, `{"a":}`, `{a:1}`, `{"a":"\x01"}`,
		`{"a":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`, // beyond encoding/json's depth
		`{"big":"` + strings.Repeat("x", fastMaxBytes) + `"} x`, `{"big":"` + strings.Repeat("x", fastMaxBytes) + `"}}`} {
		if got, err := DecodeObject([]byte(in)); err == nil {
			t.Errorf("DecodeObject(%q) = %#v, want an error", in, got)
		}
	}
}

// FuzzDecodeObject holds DecodeObject to encoding/json on any bytes a
// device might answer with.
func FuzzDecodeObject(f *testing.F) {
	for _, s := range []string{`{"success":true,"state":"running","n":3}`, `{"a":[1,{"b":null}],"c":"\u00e9"}`, "{\"x\":\"\xff\"}", `[]`, `{"a":1e400}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want, ok := stdDecode(b)
		got, err := DecodeObject(b)
		if ok != (err == nil) {
			t.Fatalf("DecodeObject(%q): err %v, encoding/json accepts: %v", b, err, ok)
		}
		if ok && !reflect.DeepEqual(map[string]any(got), want) {
			t.Fatalf("DecodeObject(%q) = %#v, want %#v", b, got, want)
		}
	})
}

// am's echo of a refused intent keeps the action and hides its
// parameters (owner tokens, input text) in what an error prints.
func TestHideIntentParams(t *testing.T) {
	t.Parallel()
	in := "Error: Activity not started, unable to resolve Intent { act=android.intent.action.VIEW dat=solopi://startaction/agent?type=start&ownerToken=s3cret-token-value cmp=x }"
	got := hideIntentParams(in)
	if strings.Contains(got, "s3cret") || !strings.Contains(got, "solopi://startaction/agent?[redacted] cmp=x }") {
		t.Errorf("%s", got)
	}
}

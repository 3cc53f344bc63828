package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

const planted = "sk-PLANTED-6f1c0b9e2d7a4c35"

func TestSecretNeverPrints(t *testing.T) {
	t.Parallel()
	s := NewSecret(planted)
	type holder struct {
		Key Secret `json:"key"`
	}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("call", "key", s, "holder", holder{s})
	j, _ := json.Marshal(holder{s})
	txt, _ := s.MarshalText()
	for _, out := range []string{
		fmt.Sprint(s), fmt.Sprintf("%v %+v %#v %s %q %x %d", s, s, s, s, s, s, s), fmt.Sprintf("%#v", holder{s}),
		string(j), string(txt), logged.String(), s.String(), s.GoString(),
	} {
		if strings.Contains(out, planted) {
			t.Errorf("the secret shows in %q", out)
		}
		if !strings.Contains(out, Marker) {
			t.Errorf("no marker in %q", out)
		}
	}
	if s.Reveal() != planted || s.IsZero() || !(Secret{}).IsZero() {
		t.Error("Reveal or IsZero")
	}
	if got := s.Redact("key=" + planted); got != "key="+Marker {
		t.Errorf("Redact = %q", got)
	}
}

func TestRedactorText(t *testing.T) {
	t.Parallel()
	r := New("0.5,0.5", "2000", "WLAN", "assert_contain", "hunter2!")
	for in, want := range map[string]string{
		`Assert failed: text "admin" is not "hunter2!"`:     `Assert failed: text "admin" is not "[redacted]"`,
		"typed WLAN into WLAN settings":                     "typed [redacted] into [redacted] settings",
		"slept 2000 ms at 0.5,0.5":                          "slept [redacted] ms at [redacted]",
		"12-01 10:20:00.123 I/Replay: assert_contain ok":    "12-01 10:20:00.123 I/Replay: [redacted] ok",
		"nothing secret here":                               "nothing secret here",
		"":                                                  "",
		`{"exceptionMessage":"expected \"hunter2!\" here"}`: `{"exceptionMessage":"expected \"[redacted]\" here"}`,
	} {
		if got := r.Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
	// Longest first: a secret that contains another is replaced whole.
	r = New("pass", "password123", "word")
	if got := r.Text("password123 and pass and words"); got != "[redacted] and [redacted] and [redacted]s" {
		t.Errorf("longest first: %q", got)
	}
	// Short secrets only as whole values.
	r = New("7", "abc", "secret")
	if got := r.Text("17:07 abc-secret"); got != "17:07 abc-[redacted]" {
		t.Errorf("short secrets shredded the text: %q", got)
	}
	if r.Text("7") != Marker || r.Text("abc") != Marker {
		t.Error("a short secret as a whole value is not redacted")
	}
	// encoding/json's spellings of a secret are found too.
	r = New(`a"b<c>`)
	for _, in := range []string{`x a"b<c> y`, `x a\"b<c> y`, `x a\"b\u003cc\u003e y`} {
		if got := r.Text(in); got != "x [redacted] y" {
			t.Errorf("Text(%q) = %q", in, got)
		}
	}
	// With adds secrets; a nil redactor knows none.
	r = New("first-secret").With("second-secret")
	if got := r.Text("first-secret second-secret"); got != Marker+" "+Marker {
		t.Errorf("With: %q", got)
	}
	var none *Redactor
	if none.Text("WLAN") != "WLAN" || none.With("WLAN").Text("WLAN") != Marker {
		t.Error("a nil Redactor hides no value")
	}
}

func TestRedactorFixedRules(t *testing.T) {
	t.Parallel()
	var r *Redactor // the fixed rules need no secret
	for in, want := range map[string]string{
		"Authorization: Bearer abc.def-ghi==":                 "Authorization: Bearer [redacted]",
		"curl -H 'authorization: BEARER xyz'":                 "curl -H 'authorization: Bearer [redacted]'",
		"token verification-0123456789abcdef0123456789abcdef": "token [redacted]",
		"verification-run-1 is a report id":                   "verification-run-1 is a report id",
		"the bear ran":                                        "the bear ran",
	} {
		if got := r.Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedactorValue(t *testing.T) {
	t.Parallel()
	r := New("hunter2!", "WLAN", "7")
	var v any
	_ = json.Unmarshal([]byte(`{"state":"failed","WLAN":1,"durationMs":7,"ownerToken":"x","owner_token_hash":"h","Api-Key":"k",
		"results":[{"exceptionMessage":"expected \"hunter2!\"","n":"7","note":"WLAN here","headers":{"Authorization":"Basic x","Cookie":"c"}}]}`), &v)
	red := r.Value(v).(map[string]any)
	res := red["results"].([]any)[0].(map[string]any)
	if res["exceptionMessage"] != `expected "[redacted]"` || res["n"] != Marker || res["note"] != Marker+" here" || red["WLAN"] != float64(1) || red["durationMs"] != float64(7) {
		t.Errorf("Value: %v", red)
	}
	for _, k := range []string{"ownerToken", "owner_token_hash", "Api-Key"} {
		if _, ok := red[k]; ok {
			t.Errorf("sensitive key %s kept", k)
		}
	}
	if h := res["headers"].(map[string]any); len(h) != 0 {
		t.Errorf("headers kept: %v", h)
	}
	if v.(map[string]any)["results"].([]any)[0].(map[string]any)["n"] != "7" {
		t.Error("Value modified its input")
	}
	if got := Walk([]string{"a WLAN"}, r.Text).([]string); got[0] != "a "+Marker {
		t.Errorf("Walk []string: %q", got)
	}
}

// The managed store's events and reports and the control plane's answers
// go through Value: sensitive keys gone, tokens and credentials hidden,
// numbers kept as decoded.
func TestValueOfAManagedReport(t *testing.T) {
	t.Parallel()
	in := map[string]any{
		"ownerToken": "x", "owner_token": "x", "OwnerTokenHash": "x", "Authorization": "x", "cookie": "x",
		"password": "x", "api_key": "x", "apiSecret": "x", "client_secret": "x",
		"keep": []any{
			"header Bearer abc.DEF-123== tail",
			"session verification-0123456789abcdef0123456789abcdef done",
			"reportId verification-run-0123456789abcdef0123456789abcdef",
			map[string]any{"token": "my-secret-value-123", "n": json.Number("1")},
		},
	}
	got, _ := json.Marshal(New("my-secret-value-123").Value(in))
	want, _ := json.Marshal(map[string]any{"keep": []any{
		"header Bearer [redacted] tail",
		"session [redacted] done",
		"reportId verification-run-0123456789abcdef0123456789abcdef",
		map[string]any{"token": "[redacted]", "n": json.Number("1")},
	}})
	if !bytes.Equal(got, want) {
		t.Fatalf("Value:\n got %s\nwant %s", got, want)
	}
}

// Whatever the secret and the text, no secret of MinLen bytes or more
// survives Text, in any of its JSON spellings, and Value keeps a tree that
// encodes.
func FuzzRedactorText(f *testing.F) {
	f.Add("a hunter2! and WLAN", "hunter2!")
	f.Add(`x"WLAN\u2028"`, "WLAN")
	f.Add("\U0001F600 secret", "secret")
	f.Add("Bearer x", "arer")
	f.Fuzz(func(t *testing.T, text, secret string) {
		r := New(secret)
		for _, in := range []string{text, text + secret + text, jsonSpelling(text+secret, true)} {
			out := r.Text(in)
			if len(secret) >= MinLen && strings.Contains(out, secret) && !touchesMarker(secret) {
				t.Fatalf("%q survives in %q", secret, out)
			}
		}
		if r.Text(secret) != Marker && secret != "" {
			t.Fatalf("the whole secret %q is kept", secret)
		}
		if _, err := json.Marshal(r.Value(map[string]any{"a": []any{text, secret}})); err != nil {
			t.Fatal(err)
		}
	})
}

// touchesMarker reports whether secret could be spelled by the marker or
// across its edge with a neighbour ("ed]x" after "[redacted]" followed by
// "x"), or by the fixed rules' replacement: such text is made by the
// redactor, not left from the input.
func touchesMarker(secret string) bool {
	for _, m := range []string{Marker, "Bearer " + Marker} {
		for i := 1; i < len(m); i++ {
			if strings.HasPrefix(secret, m[i:]) || strings.HasSuffix(secret, m[:i]) {
				return true
			}
		}
		if strings.Contains(m, secret) || strings.Contains(secret, m) {
			return true
		}
	}
	return false
}

// BenchmarkRedactLog redacts a 1 MiB logcat-like text with the 200 secrets
// of a 200-step encrypted case.
func BenchmarkRedactLog(b *testing.B) {
	secrets := make([]string, 200)
	for i := range secrets {
		secrets[i] = fmt.Sprintf("value %d", i)
	}
	r := New(secrets...)
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		fmt.Fprintf(&sb, "12-01 10:20:%02d.%03d  4100  4123 I Replay: step %d typed value %d into com.example:id/field_%d\n", i%60, i%1000, i%200, i%400, i%200)
	}
	log := sb.String()
	b.SetBytes(int64(len(log)))
	for b.Loop() {
		_ = r.Text(log)
	}
}

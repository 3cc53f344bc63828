package casefile

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// A recorded-style case: encrypted steps (explicitly, and by the absent
// flag) with the AES vectors, a plain step, and an encrypted value that
// does not decrypt (the device then uses it as stored).
var secretCase = caseWith(`[
 {"stepId":"a","operationMethod":{"actionEnum":"INPUT","encrypt":true,"operationParam":{"text":"70E64B6009261E23085996D7F3785F4C","localClickPos":"A3B7B9427C4ABA1306B67EE0A2B330FC"}},"operationNode":` + nodeJSON + `},
 {"stepId":"b","operationMethod":{"actionEnum":"ASSERT","operationParam":{"assertMode":"734004355480DBF845632F90FC02B32D","assertInputContent":"hunter2!","extra":null}},"operationNode":` + nodeJSON + `},
 {"stepId":"c","operationMethod":{"actionEnum":"SLEEP","encrypt":true,"operationParam":{"text":"DF4287CE5CF1D64E46B63D442C8F898E"}}},
 {"stepId":"d","operationMethod":{"actionEnum":"INPUT","encrypt":false,"operationParam":{"text":"public text"}},"operationNode":` + nodeJSON + `}
]`)

func TestEncryptedAndInputParams(t *testing.T) {
	c := mustParse(t, secretCase)
	want := []ParamRef{{"a", "localClickPos"}, {"a", "text"}, {"b", "assertInputContent"}, {"b", "assertMode"}, {"b", "extra"}, {"c", "text"}}
	if got := EncryptedParams(c); !slices.Equal(got, want) {
		t.Fatalf("encrypted params = %v, want %v", got, want)
	}
	// Normalisation writes the absent flag as false, as the import sends it:
	// then only the steps that say encrypt:true are encrypted on the device.
	n, _, err := Normalize(c, NormalizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want = []ParamRef{{"a", "localClickPos"}, {"a", "text"}, {"c", "text"}}
	if got := EncryptedParams(n); !slices.Equal(got, want) {
		t.Fatalf("normalised encrypted params = %v, want %v", got, want)
	}
	// Input-bearing params: what is typed and what is asserted, never the
	// SLEEP duration.
	want = []ParamRef{{"a", "text"}, {"b", "assertInputContent"}, {"d", "text"}}
	if got := InputParams(c); !slices.Equal(got, want) {
		t.Fatalf("input params = %v, want %v", got, want)
	}
}

func TestParamValues(t *testing.T) {
	// The device's snapshot: decrypted, encrypt:false everywhere; the
	// refs say which values were secret.
	snap := mustParse(t, caseWith(`[
 {"stepId":"a","operationMethod":{"actionEnum":"INPUT","encrypt":false,"operationParam":{"text":"WLAN","localClickPos":"0.5,0.5"}},"operationNode":`+nodeJSON+`},
 {"stepId":"b","operationMethod":{"actionEnum":"INPUT","encrypt":false,"operationParam":{"text":"WLAN"}},"operationNode":`+nodeJSON+`},
 {"stepId":"c","operationMethod":{"actionEnum":"SLEEP","encrypt":false,"operationParam":{"text":"2000"}}},
 {"stepId":"d","operationMethod":{"actionEnum":"INPUT","encrypt":false,"operationParam":{"text":""}},"operationNode":`+nodeJSON+`}
]`))
	got := ParamValues(snap, []ParamRef{{"a", "text"}, {"b", "text"}, {"c", "text"}, {"d", "text"}, {"gone", "text"}})
	if want := []string{"2000", "WLAN"}; !slices.Equal(got, want) {
		t.Fatalf("values = %q, want %q", got, want)
	}
	if got := ParamValues(snap, nil); len(got) != 0 {
		t.Fatalf("no refs: %q", got)
	}
}

func TestRedactorText(t *testing.T) {
	r := NewRedactor("0.5,0.5", "2000", "WLAN", "assert_contain", "hunter2!")
	for in, want := range map[string]string{
		`Assert failed: text "admin" is not "hunter2!"`:     `Assert failed: text "admin" is not "[redacted]"`,
		"typed WLAN into WLAN settings":                     "typed [redacted] into [redacted] settings",
		"slept 2000 ms at 0.5,0.5":                          "slept [redacted] ms at [redacted]",
		"12-01 10:20:00.123 I/Replay: assert_contain ok":    "12-01 10:20:00.123 I/Replay: [redacted] ok",
		"nothing secret here":                               "nothing secret here",
		"":                                                  "",
		`{"exceptionMessage":"expected \"hunter2!\" here"}`: `{"exceptionMessage":"expected \"[redacted]\" here"}`,
	} {
		if got := r.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	// Longest first: a secret that contains another is replaced whole.
	r = NewRedactor("pass", "password123", "word")
	if got := r.Redact("password123 and pass and words"); got != "[redacted] and [redacted] and [redacted]s" {
		t.Errorf("longest first: %q", got)
	}
	// Short secrets only as whole values.
	r = NewRedactor("7", "abc", "secret")
	if got := r.Redact("17:07 abc-secret"); got != "17:07 abc-[redacted]" {
		t.Errorf("short secrets shredded the text: %q", got)
	}
	if r.Redact("7") != Redacted || r.Redact("abc") != Redacted {
		t.Error("a short secret as a whole value is not redacted")
	}
	// JSON spellings of a secret are found too.
	r = NewRedactor(`a"b<c>`)
	for _, in := range []string{`x a"b<c> y`, `x a\"b<c> y`, `x a\"b\u003cc\u003e y`} {
		if got := r.Redact(in); got != "x [redacted] y" {
			t.Errorf("Redact(%q) = %q", in, got)
		}
	}
	var none *Redactor
	if none.Redact("WLAN") != "WLAN" || !none.Empty() || !NewRedactor("", "").Empty() {
		t.Error("a nil or empty Redactor must hide nothing")
	}
}

func TestRedactorJSON(t *testing.T) {
	r := NewRedactor("hunter2!", "WLAN", "7")
	doc := []byte("{\n  \"state\": \"failed\",\n  \"WLAN\": 1,\n  \"durationMs\": 7,\n  \"results\": [\n    {\"exceptionMessage\": \"expected \\\"hunter2!\\\"\", \"n\": \"7\", \"note\": \"WLAN\\u2028x\"}\n  ]\n}\n")
	got, err := r.RedactJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"state\": \"failed\",\n  \"WLAN\": 1,\n  \"durationMs\": 7,\n  \"results\": [\n    {\"exceptionMessage\": \"expected \\\"[redacted]\\\"\", \"n\": \"[redacted]\", \"note\": \"[redacted]\\u2028x\"}\n  ]\n}\n"
	if string(got) != want {
		t.Errorf("RedactJSON:\n%s\nwant\n%s", got, want)
	}
	if _, err := r.RedactJSON([]byte(`{"a":`)); err == nil {
		t.Error("accepted a broken document")
	}
	var v any
	_ = json.Unmarshal(doc, &v)
	red := r.RedactValue(v).(map[string]any)
	res := red["results"].([]any)[0].(map[string]any)
	if res["exceptionMessage"] != `expected "[redacted]"` || red["WLAN"] != float64(1) || red["durationMs"] != float64(7) {
		t.Errorf("RedactValue: %v", red)
	}
	if v.(map[string]any)["results"].([]any)[0].(map[string]any)["n"] != "7" {
		t.Error("RedactValue modified its input")
	}
}

// Whatever the secrets and the document, RedactJSON keeps a valid document
// and leaves no secret of MinSecretLen bytes or more in any string.
func FuzzRedactJSON(f *testing.F) {
	f.Add([]byte(`{"a":"hunter2! and WLAN","b":["x\"hunter2!\""],"hunter2!":0}`), "hunter2!")
	f.Add([]byte(`["\u0057LAN", "a\\WLAN"]`), "WLAN")
	f.Add([]byte(`"\ud83d\ude00 secret"`), `secret`)
	f.Fuzz(func(t *testing.T, data []byte, secret string) {
		r := NewRedactor(secret)
		out, err := r.RedactJSON(data)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid output %q", out)
		}
		var v any
		_ = json.Unmarshal(out, &v)
		var walk func(any, bool)
		walk = func(x any, key bool) {
			switch y := x.(type) {
			case string:
				if !key && len(secret) >= MinSecretLen && strings.Contains(y, secret) && !touchesPlaceholder(secret) {
					t.Fatalf("%q survives in %q", secret, out)
				}
			case map[string]any:
				for _, e := range y {
					walk(e, false)
				}
			case []any:
				for _, e := range y {
					walk(e, false)
				}
			}
		}
		walk(v, false)
	})
}

// touchesPlaceholder reports whether secret could be spelled across the
// edge of a Redacted placeholder and its neighbour ("ed]x" after
// "[redacted]" followed by "x"): such text is made by the placeholder, not
// left from the input.
func touchesPlaceholder(secret string) bool {
	for i := 1; i < len(Redacted); i++ {
		if strings.HasPrefix(secret, Redacted[i:]) || strings.HasSuffix(secret, Redacted[:i]) {
			return true
		}
	}
	return strings.Contains(Redacted, secret) || strings.Contains(secret, Redacted)
}

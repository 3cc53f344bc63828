package canonjson

import (
	"encoding/json"
	"strings"
	"testing"
)

// The expected strings were produced by CPython 3.11's json.dumps with
// sort_keys=True, separators=(",", ":"), ensure_ascii=False.
func TestFloatReprMatchesPython(t *testing.T) {
	t.Parallel()
	cases := map[float64]string{
		1e16: "1e+16", 1e15: "1000000000000000.0", 1e-4: "0.0001", 1e-5: "1e-05",
		123456789012345678.0: "1.2345678901234568e+17", 0.1: "0.1", 1.5e-7: "1.5e-07",
		2.5: "2.5", 1e22: "1e+22", 1.0: "1.0", 100.0: "100.0", 5e-324: "5e-324",
		1.7976931348623157e308: "1.7976931348623157e+308", -2.5e-9: "-2.5e-09", 0: "0.0",
	}
	for f, want := range cases {
		got, err := floatRepr(f)
		if err != nil || got != want {
			t.Errorf("FloatRepr(%v) = %q, %v; want %q", f, got, err, want)
		}
	}
}

func TestMarshalMatchesPython(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{`{"b":1,"a":[true,null,"<>&\u2028\u007f\u0001\n\"\\é"]}`, "{\"a\":[true,null,\"<>&\u2028\u007f\\u0001\\n\\\"\\\\é\"],\"b\":1}"},
		{`-0`, `0`},
		{`1E2`, `100.0`},
		{`12345678901234567890123`, `12345678901234567890123`},
		{`[1.0, 1, 1e16, 1e-7, 0.5]`, `[1.0,1,1e+16,1e-07,0.5]`},
		{`{"é":1,"z":2,"Z":3,"\u00e0":4}`, `{"Z":3,"z":2,"à":4,"é":1}`},
		{`{"x":{"b":[],"a":{}}}`, `{"x":{"a":{},"b":[]}}`},
		{"\"\\u001f\\b\\f\\r\\t\"", `"\u001f\b\f\r\t"`},
	}
	for _, c := range cases {
		v, err := Decode([]byte(c.in))
		if err != nil {
			t.Fatalf("Decode(%s): %v", c.in, err)
		}
		got, err := Marshal(v)
		if err != nil || string(got) != c.want {
			t.Errorf("Marshal(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
}

func TestMarshalGoValues(t *testing.T) {
	t.Parallel()
	v := map[string]any{"f": float(1), "g": 2.0, "i": 3, "s": []string{"b", "a"}, "m": map[string]int{"k": 1}, "n": nil}
	got, err := Marshal(v)
	want := `{"f":1.0,"g":2.0,"i":3,"m":{"k":1},"n":null,"s":["b","a"]}`
	if err != nil || string(got) != want {
		t.Fatalf("got %s, %v", got, err)
	}
	if _, err := Marshal(map[string]any{"x": struct{}{}}); err == nil {
		t.Fatal("a struct must be refused, not guessed")
	}
}

func TestRejects(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`{"a":1} x`, `{"a":`, `NaN`} {
		if _, err := Decode([]byte(in)); err == nil {
			t.Errorf("Decode(%q) accepted", in)
		}
	}
	if _, err := Marshal(json.Number("1e400")); err == nil {
		t.Error("an infinite float must be refused (allow_nan=False)")
	}
	if _, err := Marshal("\xff"); err == nil {
		t.Error("invalid UTF-8 must be refused")
	}
}

func TestFingerprintIgnoresKeyOrder(t *testing.T) {
	t.Parallel()
	a, _ := Decode([]byte(`{"a":1,"b":{"c":[1,2],"d":"x"}}`))
	b, _ := Decode([]byte(`{"b":{"d":"x","c":[1,2]},"a":1}`))
	fa, _ := Fingerprint(a)
	fb, _ := Fingerprint(b)
	if fa != fb || len(fa) != 64 || strings.ToLower(fa) != fa {
		t.Fatalf("%s vs %s", fa, fb)
	}
}

func TestPyStr(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   any
		want string
	}{{true, "True"}, {false, "False"}, {nil, "None"}, {json.Number("1.0"), "1.0"}, {json.Number("7"), "7"}, {"x", "x"}, {float(3), "3.0"}}
	for _, c := range cases {
		if got, err := PyStr(c.in); err != nil || got != c.want {
			t.Errorf("PyStr(%v) = %q, %v", c.in, got, err)
		}
	}
	if _, err := PyStr([]any{}); err == nil {
		t.Error("a list has no embedded str()")
	}
}

func FuzzMarshalDecoded(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,"x"]}`, `1e16`, `"\u2028"`, `{"b":null,"a":true}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		v, err := Decode([]byte(in))
		if err != nil {
			return
		}
		out, err := Marshal(v)
		if err != nil {
			return // NaN-like ranges and invalid UTF-8 are refused, not crashed on
		}
		// The canonical form is a fixed point.
		v2, err := Decode(out)
		if err != nil {
			t.Fatalf("canonical output does not parse: %s", out)
		}
		out2, err := Marshal(v2)
		if err != nil || string(out2) != string(out) {
			t.Fatalf("not a fixed point: %s vs %s", out, out2)
		}
	})
}

func TestMarshalIndentMatchesPython(t *testing.T) {
	t.Parallel()
	// json.dumps(v, indent=2, sort_keys=True, ensure_ascii=False) in CPython 3.11.
	v, err := Decode([]byte(`{"b":[1,2.0,{"z":[],"a":{}}],"a":"<&>` + "\u2028" + `","c":{"x":null,"y":1e16}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"a\": \"<&>\u2028\",\n  \"b\": [\n    1,\n    2.0,\n    {\n      \"a\": {},\n      \"z\": []\n    }\n  ],\n  \"c\": {\n    \"x\": null,\n    \"y\": 1e+16\n  }\n}"
	got, err := MarshalIndent(v, "  ")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("MarshalIndent =\n%s\nwant\n%s", got, want)
	}
	// The indented form decodes to the same canonical value.
	back, _ := Decode(got)
	a, _ := Marshal(v)
	b, _ := Marshal(back)
	if string(a) != string(b) {
		t.Error("indented output does not round-trip")
	}
}

package oracle

import (
	"encoding/json"
	"testing"

	"github.com/solopi-dev/solopi/canonjson"
)

// The expectations of these tables were taken from CPython 3.11's re and
// from solopi-ai's oracle evaluation run on the same inputs.

func TestPatternSearchMatchesPython(t *testing.T) {
	cases := []struct {
		pattern, text string
		want          bool
	}{
		{`(?P<d>\d)(?P=d)`, "a11b", true},
		{`(?<=a)b`, "ab", true},
		{`(?<!a)b`, "ab", false},
		{`^\d+$`, "123\n", true},
		{`^\d+\Z`, "123\n", false},
		{`a{,2}c`, "aac", true},
		{`x{,2}`, "zzz", true},
		{`[]a]+`, "]]a", true},
		{`[^]]`, "]x", true},
		{`\U0001F600`, "😀", true},
		{`\u0041`, "A", true},
		{`(?i)hello`, "HeLLo", true},
		{`\bword\b`, "a word.", true},
		{`(a)|b\1`, "b", false},
		{`\d`, "٣", true},
		{`\w+`, "éé", true},
		{`colou?r`, "color", true},
		{`\$1`, "$1", true},
		{`(?x) a b # c`, "ab", true},
		{`(?s)a.b`, "a\nb", true},
		{`a.b`, "a\nb", false},
	}
	for _, c := range cases {
		p, err := CompilePattern(c.pattern)
		if err != nil {
			t.Errorf("CompilePattern(%q): %v", c.pattern, err)
			continue
		}
		got, err := p.Search(c.text)
		if err != nil || got != c.want {
			t.Errorf("Search(%q, %q) = %v, %v; want %v", c.pattern, c.text, got, err, c.want)
		}
	}
}

func TestPatternRejectsWhatPythonRejects(t *testing.T) {
	for _, p := range []string{`(?<n>a)`, `(?'n'a)`, `\z`, `\p{L}`, `\e`, `(`, `[a`, `a**`, `\k<n>`, `\`, `\U0001F60`, `[\Z]`} {
		if _, err := CompilePattern(p); err == nil {
			t.Errorf("CompilePattern(%q) accepted a pattern Python's re rejects", p)
		}
	}
	// Python accepts \N{...}; we cannot resolve Unicode names and say so.
	if _, err := CompilePattern(`\N{DIGIT ONE}`); err == nil {
		t.Error(`\N{...} should be refused with a clear error`)
	}
}

func TestAnchored(t *testing.T) {
	cases := map[string]bool{
		`^abc$`: true, `\Aabc\Z`: true, `(?i)^abc$`: true, `^a(b|c)$`: true,
		`abc`: false, `^abc`: false, `abc$`: false, `^a|b$`: false, `^abc\$`: false, `^[$]`: false,
		`^abc\\$`: true,
	}
	for p, want := range cases {
		if got := Anchored(p); got != want {
			t.Errorf("Anchored(%q) = %v, want %v", p, got, want)
		}
	}
}

func decode(t *testing.T, s string) any {
	t.Helper()
	v, err := canonjson.Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

const counterPage = `{"observationId":"o1","page":{"className":"android.widget.FrameLayout","children":[
 {"nodeId":"n1","className":"android.widget.TextView","resourceId":"com.example.counter:id/counter_value","packageName":"com.example.counter","text":"1","description":"Counter value","children":[]},
 {"nodeId":"n2","className":"android.widget.TextView","resourceId":"com.example.counter:id/counter_status","packageName":"com.example.counter","text":"Counting"},
 {"nodeId":"n3","className":"android.widget.Button","resourceId":"dup","text":7},
 {"nodeId":"n4","className":"android.widget.Button","resourceId":"dup","text":null, "description":1.0},
 "not a node"]}}`

func TestEvaluate(t *testing.T) {
	obs := decode(t, counterPage)
	sel := func(kv ...any) Selector {
		s := Selector{}
		for i := 0; i < len(kv); i += 2 {
			s[kv[i].(string)] = kv[i+1]
		}
		return s
	}
	cases := []struct {
		name                string
		sel                 Selector
		field, op, expected string
		status, reason      string
		actual              any // nil or string
	}{
		{"equals passes", sel("resourceId", "com.example.counter:id/counter_value"), "text", "equals", "1", Passed, ReasonMatched, "1"},
		{"equals fails", sel("resourceId", "com.example.counter:id/counter_value"), "text", "equals", "2", Failed, ReasonMismatch, "1"},
		{"contains", sel("resourceId", "com.example.counter:id/counter_status"), "text", "contains", "Count", Passed, ReasonMatched, "Counting"},
		{"matches searches", sel("resourceId", "com.example.counter:id/counter_status"), "text", "matches", "unt", Passed, ReasonMatched, "Counting"},
		{"description", sel("resourceId", "com.example.counter:id/counter_value"), "description", "equals", "Counter value", Passed, ReasonMatched, "Counter value"},
		{"missing field reads empty", sel("resourceId", "com.example.counter:id/counter_status"), "description", "equals", "", Passed, ReasonMatched, ""},
		{"not found", sel("resourceId", "nope"), "text", "equals", "1", Failed, ReasonSelectorNotFound, nil},
		{"ambiguous", sel("resourceId", "dup"), "text", "equals", "7", NotTested, ReasonAmbiguousSelector, nil},
		{"int field str()", sel("nodeId", "n3"), "text", "equals", "7", Passed, ReasonMatched, "7"},
		{"null field str()", sel("nodeId", "n4"), "text", "equals", "None", Passed, ReasonMatched, "None"},
		{"float field repr", sel("nodeId", "n4"), "description", "equals", "1.0", Passed, ReasonMatched, "1.0"},
		{"int selector value equals int field", sel("text", json.Number("7")), "text", "equals", "7", Passed, ReasonMatched, "7"},
		{"string selector value does not equal int field", sel("text", "7"), "text", "equals", "7", Failed, ReasonSelectorNotFound, nil},
		{"true equals 1.0", sel("nodeId", "n4", "description", true), "text", "equals", "None", Passed, ReasonMatched, "None"},
	}
	for _, c := range cases {
		o, err := NewUI(c.sel, c.field, c.op, c.expected)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		r := o.Evaluate(obs)
		var actual any
		if r.Actual != nil {
			actual = *r.Actual
		}
		if r.Status != c.status || r.Reason != c.reason || actual != c.actual {
			t.Errorf("%s: got %s/%s actual=%v, want %s/%s actual=%v", c.name, r.Status, r.Reason, actual, c.status, c.reason, c.actual)
		}
	}
	o, _ := NewUI(sel("text", "1"), "text", "equals", "1")
	for _, bad := range []any{nil, map[string]any{}, map[string]any{"page": []any{}}} {
		if r := o.Evaluate(bad); r.Status != NotTested || r.Reason != ReasonMissingObservation {
			t.Errorf("Evaluate(%v) = %+v, want not_tested/missing_observation", bad, r)
		}
	}
}

func TestPyStrOfContainers(t *testing.T) {
	v := decode(t, `{"b":[1,2.5,true,null,"it's"],"a":"x"}`)
	if got, want := pyStr(v), `{'a': 'x', 'b': [1, 2.5, True, None, "it's"]}`; got != want {
		t.Errorf("pyStr = %s, want %s", got, want)
	}
}

func TestAssertParams(t *testing.T) {
	o, _ := NewUI(Selector{"text": "x"}, "description", "matches", "^a$")
	p := o.AssertParams()
	if p["assertMode"] != "assert_regular" || p["assertInputContent"] != "^a$" || p["assertTarget"] != "description" {
		t.Errorf("AssertParams = %v", p)
	}
	o, _ = NewUI(Selector{"text": "x"}, "text", "contains", "a")
	if p := o.AssertParams(); p["assertMode"] != "assert_contain" || len(p) != 2 {
		t.Errorf("AssertParams = %v", p)
	}
}

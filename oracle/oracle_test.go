package oracle

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/oracle/pyre"
)

// The expectations of these tables were taken from CPython 3.11's re and
// from solopi-ai's oracle evaluation run on the same inputs.

// Package pyre's differential test holds the engine to a table of Python
// results; these hold the oracle's use of it (and the examples).
func TestPatternSearchMatchesPython(t *testing.T) {
	cases := []struct {
		pattern, text string
		want          bool
	}{
		{`(?P<d>\d)(?P=d)`, "a11b", true},
		{`(?<=a)b`, "ab", true},
		{`^\d+$`, "123\n", true},
		{`^\d+\Z`, "123\n", false},
		{`a{,2}c`, "aac", true},
		{`[]a]+`, "]]a", true},
		{`\U0001F600`, "😀", true},
		{`(?i)hello`, "HeLLo", true},
		{`(a)|b\1`, "b", false},
		{`\d`, "٣", true},
		{`\d`, "²", false},
		{`^[^\W\d_]+$`, "123", false},
		{`^[^\W\d_]+$`, "Überprüfung", true},
		{`[\W\d]`, "1", true},
		{`[\d\W]`, "1", true},
		{`\w`, "½", true},
		{`\w`, "\u0301", false},
		{`\s`, "\x1c", true},
		{`\B`, "", false},
		{`[[:alpha:]]`, "a]", true},
		{`[[:alpha:]]`, "a", false},
		{`(?i)ı`, "I", true},
		{`(?i)ı`, "i", true},
		{`(?i)k`, "\u212a", true},
		{`a*+a`, "aaa", false},
		{`\N{EM DASH}`, "a—b", true},
		{`(?a)\w`, "é", false},
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
	for p, msg := range map[string]string{
		`x(?i)y`:           "global flags not at the start of the expression at position 1",
		`(?<=a+)b`:         "look-behind requires fixed-width pattern",
		`\400`:             `octal escape value \400 outside of range 0-0o377 at position 0`,
		`[\d-z]`:           `bad character range \d-z at position 1`,
		`(?P<n>a)(?P<n>b)`: "redefinition of group name 'n' as group 2; was group 1 at position 12",
		`\1(a)`:            "invalid group reference 1 at position 1",
		`(?P<1>a)`:         "bad character in group name '1' at position 4",
		`^*`:               "nothing to repeat at position 1",
		`(?L)a`:            "bad inline flags: cannot use 'L' flag with a str pattern at position 3",
		`(?<n>a)`:          "unknown extension ?<n at position 1",
		`\z`:               `bad escape \z at position 0`,
		`\N{NO SUCH NAME}`: "undefined character name 'NO SUCH NAME' at position 0",
	} {
		_, err := CompilePattern(p)
		if !errors.Is(err, errPattern) || err.Error() != "invalid regular expression: "+msg {
			t.Errorf("CompilePattern(%q) = %v, want %s", p, err, msg)
		}
	}
}

func TestUnsupportedPatternIsRefusedNotGuessed(t *testing.T) {
	_, err := CompilePattern(`(?ai)(k)\1`)
	if !errors.Is(err, ErrUnsupportedPattern) || errors.Is(err, errPattern) {
		t.Errorf("CompilePattern = %v, want ErrUnsupportedPattern", err)
	}
}

// A search that runs out of time is no answer: not_tested, never a pass
// or a failure.
func TestEvaluationTimeoutIsNotTested(t *testing.T) {
	o, err := NewUI(Selector{"resourceId": "dup"}, "text", "matches", `(a*)*b`)
	if err != nil {
		t.Fatal(err)
	}
	re, err := pyre.Compile(`(a*)*b`, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	o.pattern = &pattern{source: `(a*)*b`, re: re}
	obs := decode(t, `{"page":{"resourceId":"dup","text":"`+strings.Repeat("a", 40)+`"}}`)
	if r := o.Evaluate(obs); r.Status != notTested || r.Reason != reasonEvaluationFailed {
		t.Errorf("Evaluate = %+v, want not_tested/%s", r, reasonEvaluationFailed)
	}
}

func TestAnchored(t *testing.T) {
	cases := map[string]bool{
		`^abc$`: true, `\Aabc\Z`: true, `(?i)^abc$`: true, `^a(b|c)$`: true,
		`abc`: false, `^abc`: false, `abc$`: false, `^a|b$`: false, `^abc\$`: false, `^[$]`: false,
		`^abc\\$`: true, `(?x) ^ a $ `: true, `(^abc$)`: true, `^a$|^b$`: true, `^a$|b$`: false,
		`(?m)^abc$`: false, `(?m:^abc$)`: false, `^(?:a|b)$`: true, `(`: false, `^(?<=a+)$`: false,
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
		{"equals fails", sel("resourceId", "com.example.counter:id/counter_value"), "text", "equals", "2", failed, reasonMismatch, "1"},
		{"contains", sel("resourceId", "com.example.counter:id/counter_status"), "text", "contains", "Count", Passed, ReasonMatched, "Counting"},
		{"matches searches", sel("resourceId", "com.example.counter:id/counter_status"), "text", "matches", "unt", Passed, ReasonMatched, "Counting"},
		{"description", sel("resourceId", "com.example.counter:id/counter_value"), "description", "equals", "Counter value", Passed, ReasonMatched, "Counter value"},
		{"missing field reads empty", sel("resourceId", "com.example.counter:id/counter_status"), "description", "equals", "", Passed, ReasonMatched, ""},
		{"not found", sel("resourceId", "nope"), "text", "equals", "1", failed, reasonSelectorNotFound, nil},
		{"ambiguous", sel("resourceId", "dup"), "text", "equals", "7", notTested, reasonAmbiguousSelector, nil},
		{"int field str()", sel("nodeId", "n3"), "text", "equals", "7", Passed, ReasonMatched, "7"},
		{"null field str()", sel("nodeId", "n4"), "text", "equals", "None", Passed, ReasonMatched, "None"},
		{"float field repr", sel("nodeId", "n4"), "description", "equals", "1.0", Passed, ReasonMatched, "1.0"},
		{"int selector value equals int field", sel("text", json.Number("7")), "text", "equals", "7", Passed, ReasonMatched, "7"},
		{"string selector value does not equal int field", sel("text", "7"), "text", "equals", "7", failed, reasonSelectorNotFound, nil},
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
		if r := o.Evaluate(bad); r.Status != notTested || r.Reason != reasonMissingObservation {
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

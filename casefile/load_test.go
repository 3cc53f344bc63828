package casefile

import (
	"encoding/json"
	"github.com/solopi-dev/solopi/fault"
	"strconv"
	"testing"
)

// Where a document stops being JSON, as Python 3.11's json module reports
// it (json.JSONDecodeError lineno and colno, generated once with python3).
func TestSyntaxErrorLineColumnMatchPython(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		doc       string
		line, col int
	}{
		{"{\"a\":", 1, 6}, {"{\"a\": 1} junk", 1, 10}, {"{\"a\":1}}", 1, 8}, {"", 1, 1},
		{"{\n  \"caseName\": ", 2, 15}, {"{\"\u00e9\": x}", 1, 7}, {"[1,\n2,\n  ]", 3, 3},
		{"{\"a\":\"b\n\"}", 1, 8}, {"  \n\n {} {}", 3, 5}, {"{\"k\":\"\u65e5\u672c\"} x", 1, 12},
	} {
		_, err := Parse([]byte(tc.doc))
		e := asError(t, err)
		if e.Code != fault.CodeInvalidCaseJSON || e.Details["line"] != tc.line || e.Details["column"] != tc.col {
			t.Errorf("%q: %s line %v column %v, want %d %d", tc.doc, e.Code, e.Details["line"], e.Details["column"], tc.line, tc.col)
		}
	}
}

// The redaction marker is refused wherever a value can hold it, named by
// its JSON path; the same case without it passes.
func TestRedactionMarkerIsRefusedEverywhere(t *testing.T) {
	t.Parallel()
	const m = "[redacted]"
	base := map[string]any{"caseName": "c", "targetAppPackage": "com.example.counter", "caseDesc": "d",
		"advanceSettings": `{"version":35,"runningParam":{"mode":"UNION","paramList":[{"k":"v"}]}}`,
		"operationLog": map[string]any{"steps": []any{map[string]any{"stepId": "s", "operationId": "o",
			"operationMethod": map[string]any{"actionEnum": "CLICK", "operationParam": map[string]any{"localClickPos": "0.5,0.5"}},
			"operationNode":   map[string]any{"text": "t", "extra": map[string]any{"screenSize": "1,1"}, "assistantNodes": []any{map[string]any{"text": "a"}}, "future": "f"}}}}}
	if _, _, err := Normalize(mustParseTree(t, base), NormalizeOptions{}); err != nil {
		t.Fatal(err)
	}
	for path, edit := range map[string]func(c map[string]any){
		"$.caseDesc":           func(c map[string]any) { c["caseDesc"] = "was " + m },
		"$.unknownTopLevel[0]": func(c map[string]any) { c["unknownTopLevel"] = []any{m} },
		"$.advanceSettings.runningParam.paramList[0].k": func(c map[string]any) {
			c["advanceSettings"] = `{"version":35,"runningParam":{"mode":"UNION","paramList":[{"k":"\u005bredacted]"}]}}`
		},
		"$.operationLog.steps[0].operationMethod.operationParam.localClickPos": func(c map[string]any) {
			step(c)["operationMethod"].(map[string]any)["operationParam"].(map[string]any)["localClickPos"] = m
		},
		"$.operationLog.steps[0].operationNode.text": func(c map[string]any) { step(c)["operationNode"].(map[string]any)["text"] = m },
		"$.operationLog.steps[0].operationNode.extra.screenSize": func(c map[string]any) {
			step(c)["operationNode"].(map[string]any)["extra"] = map[string]any{"screenSize": m}
		},
		"$.operationLog.steps[0].operationNode.assistantNodes[0].text": func(c map[string]any) {
			step(c)["operationNode"].(map[string]any)["assistantNodes"] = []any{map[string]any{"text": m}}
		},
		"$.operationLog.steps[0].operationNode.future": func(c map[string]any) { step(c)["operationNode"].(map[string]any)["future"] = m },
		"$.operationLog.steps[0].stepId":               func(c map[string]any) { step(c)["stepId"] = m },
	} {
		c := deepCopy(base).(map[string]any)
		edit(c)
		_, _, err := Normalize(mustParseTree(t, c), NormalizeOptions{})
		if err == nil {
			t.Errorf("%s: accepted", path)
			continue
		}
		if e := asError(t, err); e.Code != fault.CodeRedactedValue || e.Details["jsonPath"] != path {
			t.Errorf("%s: %s %v", path, e.Code, e.Details)
		}
		// Listing and editing a historical case still works.
		if _, _, err := Normalize(mustParseTree(t, c), NormalizeOptions{SkipPolicy: true}); err != nil {
			t.Errorf("%s without the policy: %v", path, err)
		}
	}
}

func step(c map[string]any) map[string]any {
	return c["operationLog"].(map[string]any)["steps"].([]any)[0].(map[string]any)
}

func mustParseTree(t *testing.T, v map[string]any) *Case {
	t.Helper()
	b, _ := json.Marshal(v)
	return mustParse(t, string(b))
}

// Load is the command path: a schema violation is refused before the case
// is read, named as solopi-ai names the same refusal.
func TestLoadNamesSchemaViolations(t *testing.T) {
	t.Parallel()
	for doc, want := range map[string]string{
		`{"targetAppPackage":"p","operationLog":{"steps":[{"operationMethod":{"actionEnum":"BACK"}}]}}`:                                      "field caseName",
		`{"caseName":"c","targetAppPackage":"p","priority":7,"operationLog":{"steps":[{"operationMethod":{"actionEnum":"BACK"}}]}}`:          "field priority",
		`{"caseName":"c","targetAppPackage":"p","operationLog":{"steps":[{"operationMethod":{"actionEnum":"BACK"}},{"operationMethod":1}]}}`: "step 1",
	} {
		_, err := Load([]byte(doc))
		e := asError(t, err)
		got := "field " + e.Field
		if e.StepIndex >= 0 {
			got = "step " + strconv.Itoa(e.StepIndex)
		}
		if e.Code != fault.CodeCaseSchemaViolation || got != want {
			t.Errorf("%s: %s %q, want %s", doc, e.Code, got, want)
		}
	}
}

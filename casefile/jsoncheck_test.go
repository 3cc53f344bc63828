package casefile

import (
	"encoding/json"
	"github.com/solopi-dev/solopi/fault"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCheckJSONRefusesDuplicateKeysAtAnyDepth(t *testing.T) {
	t.Parallel()
	step := `{"stepId":"a","operationMethod":{"actionEnum":"BACK","operationParam":{"text":"1","text":"2"}}}`
	for _, tc := range []struct {
		name, doc, key, path string
		encoded              bool // the duplicate is inside a document carried as a string
	}{
		{"top level", `{"caseName":"a","targetAppPackage":"p","caseName":"b"}`, "caseName", "$.caseName", false},
		{"in a step's params", caseWith(`[{"operationMethod":{"actionEnum":"BACK"}},` + step + `]`), "text",
			"$.operationLog.steps[1].operationMethod.operationParam.text", false},
		{"odd key", `{"a b":{"x":[{"y":1}]},"a b":2}`, "a b", `$["a b"]`, false},
		{"escaped spelling", `{"k":1,"\u006b":2}`, "k", "$.k", false},
		{"inside an array of arrays", `[[{"z":1}],[{"z":1,"z":2}]]`, "z", "$[1][0].z", false},
		{"encoded operationLog", `{"caseName":"c","targetAppPackage":"p","operationLog":"{\"steps\":[{\"stepId\":\"s\",\"stepId\":\"t\"}]}"}`,
			"stepId", "$.operationLog.steps[0].stepId", true},
		{"encoded advanceSettings", `{"caseName":"c","targetAppPackage":"p","advanceSettings":"{\"runningParam\":{\"mode\":\"UNION\",\"mode\":\"SEPARATE\"}}","operationLog":{"steps":[{"operationMethod":{"actionEnum":"BACK"}}]}}`,
			"mode", "$.advanceSettings.runningParam.mode", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := CheckJSON([]byte(tc.doc))
			if tc.encoded {
				// The encoded documents are only seen when the case is read.
				if err != nil {
					t.Fatalf("outer document: %v", err)
				}
				c, perr := Parse([]byte(tc.doc))
				err = perr
				if err == nil {
					_, _, err = Normalize(c, NormalizeOptions{})
				}
			}
			e := asError(t, err)
			if e.Code != fault.CodeDuplicateKey || e.Details["key"] != tc.key || e.Details["jsonPath"] != tc.path {
				t.Fatalf("got %s %v (%s), want key %q at %s", e.Code, e.Details, e.Message, tc.key, tc.path)
			}
			if !strings.Contains(e.Message, tc.path) {
				t.Errorf("message %q does not name the path", e.Message)
			}
		})
	}
	for _, ok := range []string{
		`{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}`, // same key in different objects
		`{"k":1,"K":2}`, `[]`, `"x"`, `{}`,
	} {
		if err := CheckJSON([]byte(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

func TestCheckJSONRefusesInvalidUTF8(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, value string // a JSON string literal
		offset      int    // of the bad byte or escape inside the literal
	}{
		{"latin-1", "\"caf\xe9\"", 4},
		{"truncated sequence", "\"\xe6\x90\"", 1},
		{"overlong slash", "\"\xc0\xaf\"", 1},
		{"encoded surrogate bytes", "\"\xed\xa0\x80\"", 1},
		{"lone high surrogate escape", `"x\ud800y"`, 2},
		{"lone low surrogate escape", `"\udc00"`, 1},
		{"reversed pair", `"\udc00\ud800"`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, doc := range []struct {
				prefix, path string
			}{{`{"a":`, "$.a"}, {`{"caseName":"c","targetAppPackage":"p","caseDesc":`, "$.caseDesc"}} {
				data := []byte(doc.prefix + tc.value + "}")
				check := CheckJSON
				if doc.path == "$.caseDesc" {
					check = func(b []byte) error { _, err := Parse(b); return err }
				}
				e := asError(t, check(data))
				if e.Code != fault.CodeInvalidUTF8 || e.Details["offset"] != int64(len(doc.prefix)+tc.offset) && e.Details["offset"] != len(doc.prefix)+tc.offset {
					t.Fatalf("%s: got %s %v (%s), want invalid_utf8 at %d", data, e.Code, e.Details, e.Message, len(doc.prefix)+tc.offset)
				}
			}
		})
	}
	if e := asError(t, CheckJSON([]byte(`{"ok":{"\ud83d":1}}`))); e.Code != fault.CodeInvalidUTF8 || e.Details["jsonPath"] != "$.ok[\"\uFFFD\"]" {
		t.Errorf("surrogate in a key: %s %v", e.Code, e.Details)
	}
	for _, ok := range []string{`{"a":"😀 \ud83d\ude00 \\ud800 é \u00e9"}`, "{\"a\":\"\xef\xbf\xbd\"}"} {
		if err := CheckJSON([]byte(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// Every entry point of case JSON applies the check; the simulated device
// does not (fastjson keeps the last value), so its import stays faithful.
func TestCaseJSONEntryPointsApplyTheCheck(t *testing.T) {
	t.Parallel()
	dup := caseWith(`[{"operationMethod":{"actionEnum":"BACK","actionEnum":"HOME"}}]`)
	if _, err := Parse([]byte(dup)); errorCode(err) != fault.CodeDuplicateKey {
		t.Errorf("Parse: %v", err)
	}
	c, err := ParseAsDevice([]byte(dup))
	if err != nil || c.Steps[0].Method.ActionEnum != "HOME" {
		t.Errorf("ParseAsDevice: %v %+v", err, c)
	}
	if c, err := ParseAsDevice([]byte("{\"caseName\":\"caf\xe9\",\"targetAppPackage\":\"p\"}")); err != nil || c.CaseName != "caf\uFFFD" {
		t.Errorf("ParseAsDevice of Latin-1: %v %+v", err, c)
	}
	if _, err := ParseStep([]byte(`{"stepId":"a","stepId":"b"}`)); errorCode(err) != fault.CodeDuplicateKey {
		t.Errorf("ParseStep: %v", err)
	}
	if _, err := ParseStep([]byte("{\"stepId\":\"\xff\"}")); errorCode(err) != fault.CodeInvalidUTF8 {
		t.Errorf("ParseStep: %v", err)
	}
	base := mustParse(t, caseWith(`[{"operationMethod":{"actionEnum":"BACK"}}]`))
	if _, err := SetRunningParams(base, []byte(`{"mode":"UNION","paramList":[{"k":"1","k":"2"}]}`)); errorCode(err) != fault.CodeDuplicateKey {
		t.Errorf("SetRunningParams: %v", err)
	}
}

// The check agrees with the decoder on every valid document: nil exactly
// when the bytes are UTF-8 and no object repeats a key.
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}", `[{"x":{"y":[1,{"y":2,"z":3}]}}]`, `{"\u0061":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := CheckJSON(data)
		if !json.Valid(data) {
			return
		}
		if err == nil {
			if !utf8.Valid(data) {
				t.Fatal("accepted invalid UTF-8")
			}
			if hasDuplicateKey(t, data) {
				t.Fatal("accepted a duplicate key")
			}
			return
		}
		switch errorCode(err) {
		case fault.CodeInvalidUTF8:
		case fault.CodeDuplicateKey:
			if !hasDuplicateKey(t, data) {
				t.Fatalf("reported a duplicate that is not there: %v", err)
			}
		default:
			t.Fatalf("unexpected error %v", err)
		}
	})
}

// hasDuplicateKey is an independent oracle: an object has a duplicate when
// decoding it into a map loses members.
func hasDuplicateKey(t *testing.T, data []byte) bool {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	var walk func(raw json.RawMessage) bool
	walk = func(raw json.RawMessage) bool {
		s := strings.TrimSpace(string(raw))
		switch {
		case strings.HasPrefix(s, "{"):
			var m map[string]json.RawMessage
			_ = json.Unmarshal(raw, &m)
			if len(m) != countMembers(t, raw) {
				return true
			}
			for _, e := range m {
				if walk(e) {
					return true
				}
			}
		case strings.HasPrefix(s, "["):
			var a []json.RawMessage
			_ = json.Unmarshal(raw, &a)
			for _, e := range a {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(data)
}

func countMembers(t *testing.T, raw json.RawMessage) int {
	keys := objectKeys(t, raw)
	return len(keys)
}

package replay

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/sim"
)

// upstreamError is one error object solopi-ai v1.0.2 prints for a case or
// replay-history command (its CliError details in solopi_ai.py): the
// fields it carries, by JSON type. Ours must carry each under the same
// name with the same type, whatever it adds beside them.
type upstreamError struct {
	name   string
	run    func(t *testing.T) error
	fields map[string]string
}

// jsonType is the JSON type of a detail as it is printed.
func jsonType(v any) string {
	b, _ := json.Marshal(v)
	var g any
	_ = json.Unmarshal(b, &g)
	switch g.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case nil:
		return "null"
	}
	return "?"
}

func checkUpstreamFields(t *testing.T, tc upstreamError) {
	t.Helper()
	err := tc.run(t)
	if err == nil {
		t.Fatalf("%s: no error", tc.name)
	}
	fields := fault.From(err).Fields()
	for k, want := range tc.fields {
		v, ok := fields[k]
		if !ok {
			t.Errorf("%s: no %s in %v", tc.name, k, fields)
			continue
		}
		if want == "integer" {
			if n, isNum := v.(int); !isNum && jsonType(v) != "number" {
				t.Errorf("%s: %s is %T, want an integer", tc.name, k, v)
			} else if isNum && n != int(n) {
				t.Errorf("%s: %s", tc.name, k)
			}
			continue
		}
		if got := jsonType(v); got != want {
			t.Errorf("%s: %s is %s (%v), want %s", tc.name, k, got, v, want)
		}
	}
}

// Every local case command's error objects carry solopi-ai's fields.
func TestCaseErrorsCarryUpstreamFields(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := 0
	file := func(content string) string {
		n++
		p := filepath.Join(dir, "f"+strings.Repeat("x", n)+".json")
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	caseOf := func(steps string) string {
		return file(`{"caseName":"c","targetAppPackage":"com.example.counter","operationLog":{"steps":` + steps + `}}`)
	}
	const sleep = `{"operationMethod":{"actionEnum":"SLEEP","operationParam":{"text":"1"}}}`
	validate := func(path string) func(*testing.T) error {
		return func(*testing.T) error { _, err := ValidateCaseFile(CaseValidateOptions{File: path}); return err }
	}
	withParams := func(params string) func(*testing.T) error {
		return func(*testing.T) error {
			_, err := ValidateCaseFile(CaseValidateOptions{File: caseOf(`[` + sleep + `]`), RunningParamsFile: file(params)})
			return err
		}
	}
	edit := func(src, out string, e StepEdit) func(*testing.T) error {
		return func(*testing.T) error { _, err := CaseStepEdit(src, out, false, false, e); return err }
	}
	good := caseOf(`[` + sleep + `]`)
	two := caseOf(`[` + sleep + `,` + sleep + `]`)
	existing := file("{}")
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(existing, link); err != nil {
		t.Fatal(err)
	}
	idx := 5
	del := func(i int) StepEdit {
		return func(c *casefile.Case, _ casefile.EditOptions) (*casefile.EditResult, error) {
			return casefile.Delete(c, i)
		}
	}
	addStep := func(stepFile string) StepEdit {
		return func(c *casefile.Case, o casefile.EditOptions) (*casefile.EditResult, error) {
			st, err := ReadStepFile(stepFile)
			if err != nil {
				return nil, err
			}
			return casefile.Append(c, st, o)
		}
	}
	for _, tc := range []upstreamError{
		{"case file missing", validate(filepath.Join(dir, "nope.json")), map[string]string{"file": "string", "reason": "string"}},
		{"case file not JSON", validate(file("{\n  \"caseName\": ")), map[string]string{"file": "string", "line": "integer", "column": "integer"}},
		{"case file with trailing data", validate(file(`{"caseName":"c"} junk`)), map[string]string{"file": "string", "line": "integer", "column": "integer"}},
		{"step file not JSON", edit(good, filepath.Join(dir, "o1.json"), addStep(file("{"))), map[string]string{"file": "string", "line": "integer", "column": "integer"}},
		{"step file not an object", edit(good, filepath.Join(dir, "o2.json"), addStep(file("[]"))), map[string]string{"file": "string"}},
		{"running params not JSON", withParams("{,"), map[string]string{"file": "string", "line": "integer", "column": "integer"}},
		{"running params fields", withParams(`{"mode":"UNION","x":1}`), map[string]string{"missingFields": "array", "unknownFields": "array"}},
		{"running params mode", withParams(`{"mode":"X","paramList":[{"a":"1"}]}`), map[string]string{"mode": "string"}},
		{"running params row", withParams(`{"mode":"SEPARATE","paramList":[{"a":"1","b":"2"}]}`), map[string]string{"paramIndex": "integer"}},
		{"running params value", withParams(`{"mode":"UNION","paramList":[{"a":""}]}`), map[string]string{"paramIndex": "integer", "param": "string"}},
		{"running params union keys", withParams(`{"mode":"UNION","paramList":[{"a":"1"},{"b":"2"}]}`), map[string]string{"paramIndex": "integer", "expectedKeys": "array", "actualKeys": "array"}},
		{"missing field", validate(file(`{"caseName":"c","targetAppPackage":" ","operationLog":{"steps":[` + sleep + `]}}`)), map[string]string{"field": "string"}},
		{"priority", validate(file(`{"caseName":"c","targetAppPackage":"p","priority":-1,"operationLog":{"steps":[` + sleep + `]}}`)), map[string]string{"field": "string"}},
		{"unsupported action", validate(caseOf(`[{"operationMethod":{"actionEnum":"FLY"}}]`)), map[string]string{"stepIndex": "integer", "actionEnum": "string"}},
		{"runtime-only action", validate(caseOf(`[{"operationMethod":{"actionEnum":"FINISH"}}]`)), map[string]string{"stepIndex": "integer", "actionEnum": "string"}},
		{"missing params", validate(caseOf(`[{"operationMethod":{"actionEnum":"SLEEP"}}]`)), map[string]string{"stepIndex": "integer", "actionEnum": "string", "missingParams": "array"}},
		{"provider enum", validate(caseOf(`[{"operationMethod":{"actionEnum":"OTHER_NODE","operationParam":{"targetAction":"startRecord","checkList":"CPU"}},"operationNode":{"text":"x"}}]`)),
			map[string]string{"stepIndex": "integer", "targetAction": "string", "expectedActionEnum": "string"}},
		{"provider params", validate(caseOf(`[{"operationMethod":{"actionEnum":"startRecord"}}]`)), map[string]string{"stepIndex": "integer", "targetAction": "string", "missingParams": "array"}},
		{"provider number", validate(caseOf(`[{"operationMethod":{"actionEnum":"startRecordScreen","operationParam":{"resolution":"1x1","INTENT_VIDEO_BITRATE":"x","INTENT_FRAME_RATE":"1","INTENT_EXCEPT_DIFF":"1"}}}]`)),
			map[string]string{"stepIndex": "integer", "targetAction": "string", "param": "string"}},
		{"stop without start", validate(caseOf(`[{"operationMethod":{"actionEnum":"stopRecord"}}]`)), map[string]string{"stepIndex": "integer", "targetAction": "string", "requiresPriorAction": "string"}},
		{"double start", validate(caseOf(`[{"operationMethod":{"actionEnum":"startRecord","operationParam":{"checkList":"CPU"}}},{"operationMethod":{"actionEnum":"startRecord","operationParam":{"checkList":"CPU"}}}]`)),
			map[string]string{"stepIndex": "integer", "targetAction": "string"}},
		{"unclosed start", validate(caseOf(`[{"operationMethod":{"actionEnum":"startRecord","operationParam":{"checkList":"CPU"}}}]`)),
			map[string]string{"activeProviderActions": "array", "requiredStopActions": "array"}},
		{"node action without node", validate(caseOf(`[{"operationMethod":{"actionEnum":"CLICK"}}]`)), map[string]string{"stepIndex": "integer"}},
		{"duplicate stepId", validate(caseOf(`[{"stepId":"a","operationMethod":{"actionEnum":"BACK"}},{"stepId":"a","operationMethod":{"actionEnum":"BACK"}}]`)),
			map[string]string{"stepIndex": "integer", "stepId": "string"}},
		{"refused action", validate(caseOf(`[{"operationMethod":{"actionEnum":"EXECUTE_SHELL","operationParam":{"text":"ls"}}}]`)),
			map[string]string{"operation": "string", "stepIndex": "integer", "actionEnum": "string", "reason": "string"}},
		{"high risk", func(*testing.T) error {
			_, err := PrepareImport(caseOf(`[{"operationMethod":{"actionEnum":"CLEAR_DATA"}}]`), false)
			return err
		},
			map[string]string{"operation": "string", "stepIndex": "integer", "actionEnum": "string", "risk": "string"}},
		{"unknown provider", validate(caseOf(`[{"operationMethod":{"actionEnum":"OTHER_GLOBAL","operationParam":{"targetAction":"fly"}}}]`)),
			map[string]string{"operation": "string", "stepIndex": "integer", "actionEnum": "string", "targetAction": "string"}},
		{"provider url", validate(caseOf(`[{"operationMethod":{"actionEnum":"startRecord","operationParam":{"checkList":"CPU","url":"http://x"}}},{"operationMethod":{"actionEnum":"stopRecord"}}]`)),
			map[string]string{"operation": "string", "stepIndex": "integer", "actionEnum": "string", "targetAction": "string"}},
		{"step index", func(*testing.T) error { _, err := CaseStepList(good, &idx); return err },
			map[string]string{"index": "integer", "minimum": "integer", "maximum": "integer", "insertion": "boolean", "stepCount": "integer"}},
		{"last step", edit(good, filepath.Join(dir, "o3.json"), del(0)), map[string]string{"stepCount": "integer", "index": "integer"}},
		{"edit index", edit(two, filepath.Join(dir, "o4.json"), del(7)), map[string]string{"index": "integer", "stepCount": "integer"}},
		{"output is the source", edit(good, good, del(0)), map[string]string{"source": "string", "output": "string"}},
		{"output exists", edit(two, existing, del(0)), map[string]string{"output": "string"}},
		{"output is a symlink", edit(two, link, del(0)), map[string]string{"output": "string"}},
		{"step policy of an edit", edit(good, filepath.Join(dir, "o5.json"), addStep(file(`{"operationMethod":{"actionEnum":"KILL_PROCESS"}}`))),
			map[string]string{"operation": "string", "stepIndex": "integer", "actionEnum": "string", "risk": "string"}},
		{"history limit", func(*testing.T) error { return CheckReplayHistoryLimit(0) }, map[string]string{"limit": "integer"}},
		{"history id", func(*testing.T) error { return CheckReplayHistoryID("../x") }, map[string]string{"kind": "string", "id": "string"}},
		{"history list contract", func(*testing.T) error {
			return checkHistoryList(map[string]any{"kind": "performance", "records": []any{}}, 1)
		}, map[string]string{"response": "object"}},
	} {
		checkUpstreamFields(t, tc)
	}
}

// The device-side errors of case-import, case-delete and
// replay-history-delete carry solopi-ai's fields.
func TestCaseDeviceErrorsCarryUpstreamFields(t *testing.T) {
	t.Parallel()
	p := newSimPhone(t)
	ctx := context.Background()
	p.addCase("smoke", twoSteps)
	if rep := RunReplay(ctx, p.d, fastRun("smoke", "")); kindOf(rep.Err) != passed {
		t.Fatalf("run: %v", rep.Err)
	}
	list, err := ListReplayHistory(ctx, p.d, 10)
	if err != nil {
		t.Fatal(err)
	}
	id := list["records"].([]any)[0].(map[string]any)["id"].(string)
	fault := func(f sim.AnswerFault) func() {
		if err := p.dev.AddAnswerFault(f); err != nil {
			t.Fatal(err)
		}
		return p.dev.ClearAnswerFaults
	}
	short := ImportOptions{Replace: true, Timeout: 300 * time.Millisecond, PollInterval: 20 * time.Millisecond}
	for _, tc := range []struct {
		upstreamError
		fault sim.AnswerFault
	}{
		{upstreamError{"import receipt timeout", func(t *testing.T) error {
			_, err := ImportCase(ctx, p.d, caseOf(t, "smoke", twoSteps), short)
			return err
		}, map[string]string{"requestId": "string", "lastResponse": "object"}},
			sim.AnswerFault{Action: "harness", Query: map[string]string{"type": "case-import-status"}, Set: map[string]any{"success": false, "errorCode": "import_receipt_not_found"}}},
		{upstreamError{"import receipt of another request", func(t *testing.T) error {
			_, err := ImportCase(ctx, p.d, caseOf(t, "smoke", twoSteps), short)
			return err
		}, map[string]string{"requestId": "string", "response": "object"}},
			sim.AnswerFault{Action: "harness", Query: map[string]string{"type": "case-import-status"}, Set: map[string]any{"requestId": "someone-else"}}},
		{upstreamError{"delete receipt timeout", func(*testing.T) error {
			_, _, err := DeleteCase(ctx, p.d, "smoke", 300*time.Millisecond, 20*time.Millisecond)
			return err
		}, map[string]string{"requestId": "string", "lastResponse": "object", "caseName": "string", "phase": "string"}},
			sim.AnswerFault{Action: "harness", Query: map[string]string{"type": "case-delete-status"}, Set: map[string]any{"success": false, "errorCode": "case_delete_receipt_not_found"}}},
		{upstreamError{"history delete timeout", func(*testing.T) error {
			_, err := DeleteReplayHistory(ctx, p.d, id, 300*time.Millisecond, 20*time.Millisecond)
			return err
		}, map[string]string{"requestId": "string", "kind": "string", "id": "string", "lastResponse": "object", "phase": "string"}},
			sim.AnswerFault{Action: "history", Query: map[string]string{"action": "mutationStatus"}, Set: map[string]any{"state": "in_progress", "mutation/state": "in_progress", "mutation/deleted": false, "mutation/success": false}}},
		{upstreamError{"history delete receipt invalid", func(*testing.T) error {
			_, err := DeleteReplayHistory(ctx, p.d, id, 5*time.Second, 20*time.Millisecond)
			return err
		}, map[string]string{"requestId": "string", "kind": "string", "id": "string", "response": "object", "phase": "string"}},
			sim.AnswerFault{Action: "history", Query: map[string]string{"action": "mutationStatus"}, Set: map[string]any{"mutation/kind": "performance"}}},
	} {
		clear := fault(tc.fault)
		checkUpstreamFields(t, tc.upstreamError)
		clear()
	}
}

package casefile

import (
	"encoding/json"
	"github.com/solopi-dev/solopi/fault"
	"reflect"
	"strings"
	"testing"
)

const (
	startRec     = `{"operationMethod":{"actionEnum":"startRecord","operationParam":{"checkList":"CPU,Memory"}}}`
	stopRec      = `{"operationMethod":{"actionEnum":"stopRecord"}}`
	startScreen  = `{"operationMethod":{"actionEnum":"startRecordScreen","operationParam":{"resolution":"720x480","INTENT_VIDEO_BITRATE":"2500","INTENT_FRAME_RATE":"30","INTENT_EXCEPT_DIFF":"0.1"}}}`
	stopScreen   = `{"operationMethod":{"actionEnum":"stopRecordScreen"}}`
	sleepStep    = `{"operationMethod":{"actionEnum":"SLEEP","operationParam":{"text":"1000"}}}`
	clickStep    = `{"operationMethod":{"actionEnum":"click"},"operationNode":` + nodeJSON + `}`
	clearData    = `{"operationMethod":{"actionEnum":"CLEAR_DATA"}}`
	shellStep    = `{"stepId":"sh","operationMethod":{"actionEnum":"EXECUTE_SHELL","operationParam":{"text":"ls"}}}`
	screenshotOK = `{"operationMethod":{"actionEnum":"clickByScreenshot","operationParam":{"targetImage":"iVBOR","originSize":"100,50"}},"operationNode":{"nodeType":"CaptureTree","xpath":"/a"}}`
)

func TestNormalizeErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, json, code string
		step             int
		opts             NormalizeOptions
	}{
		{"missing name", `{"caseName":"  ","targetAppPackage":"p","operationLog":{"steps":[` + sleepStep + `]}}`, fault.CodeMissingCaseName, -1, NormalizeOptions{}},
		{"missing package", `{"caseName":"c","operationLog":{"steps":[` + sleepStep + `]}}`, fault.CodeMissingTargetPackage, -1, NormalizeOptions{}},
		{"priority", `{"caseName":"c","targetAppPackage":"p","priority":5,"operationLog":{"steps":[` + sleepStep + `]}}`, fault.CodeInvalidPriority, -1, NormalizeOptions{}},
		{"advanceSettings not json", `{"caseName":"c","targetAppPackage":"p","advanceSettings":"{nope","operationLog":{"steps":[` + sleepStep + `]}}`, fault.CodeInvalidAdvanceSettings, -1, NormalizeOptions{}},
		{"advanceSettings not object", `{"caseName":"c","targetAppPackage":"p","advanceSettings":"[1]","operationLog":{"steps":[` + sleepStep + `]}}`, fault.CodeInvalidAdvanceSettings, -1, NormalizeOptions{}},
		{"running params", `{"caseName":"c","targetAppPackage":"p","advanceSettings":"{\"runningParam\":{\"mode\":\"UNION\",\"paramList\":[{\"a\":\"1\"},{\"b\":\"2\"}]}}","operationLog":{"steps":[` + sleepStep + `]}}`, fault.CodeInvalidRunningParams, -1, NormalizeOptions{}},
		{"no steps", caseWith(`[]`), fault.CodeMissingSteps, -1, NormalizeOptions{}},
		{"no operationLog", `{"caseName":"c","targetAppPackage":"p"}`, fault.CodeMissingSteps, -1, NormalizeOptions{}},
		{"missing action", caseWith(`[` + sleepStep + `,{"operationMethod":{}}]`), fault.CodeMissingAction, 1, NormalizeOptions{}},
		{"unsupported action", caseWith(`[{"operationMethod":{"actionEnum":"TAP"}}]`), fault.CodeUnsupportedAction, 0, NormalizeOptions{}},
		{"case-only action", caseWith(`[{"operationMethod":{"actionEnum":"exportCase"}}]`), fault.CodeUnsupportedAction, 0, NormalizeOptions{}},
		{"runtime-only", caseWith(`[` + sleepStep + `,{"operationMethod":{"actionEnum":"finish"}}]`), fault.CodeRuntimeOnlyAction, 1, NormalizeOptions{}},
		{"runtime-only NORMAL_EXIT by code", caseWith(`[{"operationMethod":{"actionEnum":"slaveExit"}}]`), fault.CodeRuntimeOnlyAction, 0, NormalizeOptions{}},
		{"missing params", caseWith(`[{"operationMethod":{"actionEnum":"ASSERT","operationParam":{"assertMode":"assert_contain"}},"operationNode":` + nodeJSON + `}]`), fault.CodeMissingParams, 0, NormalizeOptions{}},
		{"missing targetAction", caseWith(`[{"operationMethod":{"actionEnum":"OTHER_GLOBAL"}}]`), fault.CodeMissingParams, 0, NormalizeOptions{}},
		{"provider missing params", caseWith(`[{"operationMethod":{"actionEnum":"startRecord"}}]`), fault.CodeMissingParams, 0, NormalizeOptions{}},
		{"provider wrong enum", caseWith(`[{"operationMethod":{"actionEnum":"OTHER_NODE","operationParam":{"targetAction":"stopRecord"}},"operationNode":` + nodeJSON + `}]`), fault.CodeInvalidProviderParams, 0, NormalizeOptions{}},
		{"provider originSize", caseWith(`[{"operationMethod":{"actionEnum":"assertScreenshot","operationParam":{"targetImage":"x","originSize":"100x50"}},"operationNode":` + nodeJSON + `}]`), fault.CodeInvalidProviderParams, 0, NormalizeOptions{}},
		{"provider checkList", caseWith(`[{"operationMethod":{"actionEnum":"startRecord","operationParam":{"checkList":"CPU,,Memory"}}}]`), fault.CodeInvalidProviderParams, 0, NormalizeOptions{}},
		{"provider resolution", caseWith(`[` + strings.Replace(startScreen, "720x480", "720*480", 1) + `,` + stopScreen + `]`), fault.CodeInvalidProviderParams, 0, NormalizeOptions{}},
		{"provider bitrate", caseWith(`[` + strings.Replace(startScreen, `"2500"`, `"0"`, 1) + `,` + stopScreen + `]`), fault.CodeInvalidProviderParams, 0, NormalizeOptions{}},
		{"provider diff", caseWith(`[` + strings.Replace(startScreen, `"0.1"`, `"inf"`, 1) + `,` + stopScreen + `]`), fault.CodeInvalidProviderParams, 0, NormalizeOptions{}},
		{"stop without start", caseWith(`[` + sleepStep + `,` + stopRec + `]`), fault.CodeProviderPairing, 1, NormalizeOptions{}},
		{"double start", caseWith(`[` + startRec + `,` + startRec + `,` + stopRec + `]`), fault.CodeProviderPairing, 1, NormalizeOptions{}},
		{"start never stopped", caseWith(`[` + startScreen + `,` + sleepStep + `]`), fault.CodeProviderPairing, 0, NormalizeOptions{}},
		{"missing node", caseWith(`[` + sleepStep + `,{"operationMethod":{"actionEnum":"CLICK"}}]`), fault.CodeMissingNode, 1, NormalizeOptions{}},
		{"missing selector", caseWith(`[{"operationMethod":{"actionEnum":"CLICK"},"operationNode":{"text":"  ","className":"android.widget.Button"}}]`), fault.CodeMissingSelector, 0, NormalizeOptions{}},
		{"negative index", caseWith(`[{"operationIndex":-2,"operationMethod":{"actionEnum":"BACK"}}]`), fault.CodeInvalidOperationIndex, 0, NormalizeOptions{}},
		{"duplicate stepId", caseWith(`[{"stepId":"x","operationMethod":{"actionEnum":"BACK"}},{"stepId":"x","operationMethod":{"actionEnum":"HOME"}}]`), fault.CodeDuplicateStepID, 1, NormalizeOptions{}},
		{"refused shell", caseWith(`[` + sleepStep + `,` + shellStep + `]`), fault.CodeRefusedAction, 1, NormalizeOptions{ConfirmHighRisk: true}},
		{"refused permission alert", caseWith(`[{"operationMethod":{"actionEnum":"permissionAlert"}}]`), fault.CodeRefusedAction, 0, NormalizeOptions{}},
		{"refused hide ime", caseWith(`[{"operationMethod":{"actionEnum":"HIDE_INPUT_METHOD"}}]`), fault.CodeRefusedAction, 0, NormalizeOptions{}},
		{"unknown provider", caseWith(`[{"operationMethod":{"actionEnum":"OTHER_GLOBAL","operationParam":{"targetAction":"uploadEverything"}}}]`), fault.CodeUnknownProviderAction, 0, NormalizeOptions{}},
		{"provider url", caseWith(`[{"operationMethod":{"actionEnum":"startRecord","operationParam":{"checkList":"CPU","url":"https://x"}}},` + stopRec + `]`), fault.CodeRefusedProviderURL, 0, NormalizeOptions{}},
		{"high risk", caseWith(`[` + sleepStep + `,` + clearData + `]`), fault.CodeHighRiskUnconfirmed, 1, NormalizeOptions{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := mustParse(t, tc.json)
			before, _ := marshal(c)
			_, _, err := Normalize(c, tc.opts)
			e := asError(t, err)
			if e.Code != tc.code || e.StepIndex != tc.step {
				t.Fatalf("got code %s step %d (%v), want %s step %d", e.Code, e.StepIndex, e, tc.code, tc.step)
			}
			if tc.step >= 0 && !strings.Contains(e.Message, "step ") {
				t.Errorf("message %q does not name the step", e.Message)
			}
			if after, _ := marshal(c); string(after) != string(before) {
				t.Error("Normalize modified its input")
			}
		})
	}
}

func TestNormalizeDefaultsAndShorthand(t *testing.T) {
	t.Parallel()
	c := mustParse(t, caseWith(`[`+sleepStep+`,`+startRec+`,{"stepId":"ai-step-003","operationMethod":{"actionEnum":"back"}},`+
		stopRec+`,`+clickStep+`,`+screenshotOK+`,{"operationIndex":40,"operationMethod":{"actionEnum":"Input","operationParam":{"text":7,"flag":true}},"operationNode":{"id":4294967347}}]`))
	n, risky, err := Normalize(c, NormalizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(risky) != 0 {
		t.Errorf("risky = %v", risky)
	}
	if n.CaseDesc != "" || n.TargetAppLabel != "com.example.counter" || n.RecordMode != "local" || n.Priority != 2 || n.AdvanceSettings != "" {
		t.Errorf("defaults: %+v", n)
	}
	wantIDs := []string{"ai-step-001", "ai-step-002", "ai-step-003", "ai-step-004", "ai-step-005", "ai-step-006", "ai-step-007"}
	wantEnums := []string{"SLEEP", "OTHER_GLOBAL", "BACK", "OTHER_GLOBAL", "CLICK", "OTHER_NODE", "INPUT"}
	for i, s := range n.Steps {
		if s.StepID != wantIDs[i] || s.Method.ActionEnum != wantEnums[i] || s.OperationIndex != i || s.OperationID != "ai-c" {
			t.Errorf("step %d: id %s enum %s index %d op %s", i, s.StepID, s.Method.ActionEnum, s.OperationIndex, s.OperationID)
		}
		if s.Method.Encrypt == nil || *s.Method.Encrypt || s.Method.SafeEncrypt == nil || *s.Method.SafeEncrypt {
			t.Errorf("step %d: encrypt flags not defaulted to false", i)
		}
	}
	if ta, _ := n.Steps[1].Method.Param("targetAction"); ta != "startRecord" {
		t.Errorf("shorthand targetAction = %q", ta)
	}
	if v, _ := n.Steps[6].Method.Param("text"); v != "7" {
		t.Errorf("numeric param = %q", v)
	}
	if v, _ := n.Steps[6].Method.Param("flag"); v != "true" {
		t.Errorf("bool param = %q", v)
	}
	if *n.Steps[6].Node.ID != "4294967347" {
		t.Errorf("node id = %q", *n.Steps[6].Node.ID)
	}
	plugins := RequiredPlugins(n)
	if !reflect.DeepEqual(plugins, map[string][]int{pluginImageCompare: {5}}) {
		t.Errorf("plugins = %v", plugins)
	}
}

func TestNormalizeStepIDsAvoidLaterExplicitIDs(t *testing.T) {
	t.Parallel()
	c := mustParse(t, caseWith(`[{"operationMethod":{"actionEnum":"BACK"}},{"stepId":"ai-step-001","operationMethod":{"actionEnum":"HOME"}}]`))
	n, _, err := Normalize(c, NormalizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Steps[0].StepID != "ai-step-002" || n.Steps[1].StepID != "ai-step-001" {
		t.Errorf("ids = %s, %s", n.Steps[0].StepID, n.Steps[1].StepID)
	}
}

func TestNormalizeHighRiskConfirmed(t *testing.T) {
	t.Parallel()
	c := mustParse(t, caseWith(`[`+clearData+`,{"stepId":"kill","operationMethod":{"actionEnum":"killProcess"}},{"operationMethod":{"actionEnum":"JUMP_TO_PAGE","operationParam":{"scheme":"app://x"}}}]`))
	_, _, err := Normalize(c, NormalizeOptions{})
	e := asError(t, err)
	steps, _ := e.Details["highRiskSteps"].([]HighRiskStep)
	if e.Code != fault.CodeHighRiskUnconfirmed || e.StepIndex != 0 || len(steps) != 3 {
		t.Fatalf("got %v %+v", e, e.Details)
	}
	n, risky, err := Normalize(c, NormalizeOptions{ConfirmHighRisk: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []HighRiskStep{
		{0, "ai-step-001", "CLEAR_DATA", "clears the target app's data"},
		{1, "kill", "KILL_PROCESS", "stops the target app's process"},
		{2, "ai-step-003", "JUMP_TO_PAGE", "opens a deep link or an external page"},
	}
	if !reflect.DeepEqual(risky, want) || len(n.Steps) != 3 {
		t.Errorf("risky = %+v", risky)
	}
	b, _ := json.Marshal(risky[0])
	if string(b) != `{"index":0,"stepId":"ai-step-001","actionEnum":"CLEAR_DATA","risk":"clears the target app's data"}` {
		t.Errorf("json = %s", b)
	}
}

func TestNormalizeSkipPolicyListsShell(t *testing.T) {
	t.Parallel()
	c := mustParse(t, caseWith(`[`+shellStep+`]`))
	n, risky, err := Normalize(c, NormalizeOptions{SkipPolicy: true})
	if err != nil {
		t.Fatal(err)
	}
	if n.Steps[0].Method.ActionEnum != "EXECUTE_SHELL" || len(risky) != 1 {
		t.Fatalf("got %+v %v", n.Steps[0], risky)
	}
}

func TestNormalizeSamples(t *testing.T) {
	t.Parallel()
	c := mustParseFile(t, "testdata/settings-search-wlan.json")
	n, _, err := Normalize(c, NormalizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Recorded values are kept: encrypted params stay encrypted and flagged.
	if !*n.Steps[0].Method.Encrypt || n.Steps[0].StepID != "a81f3c0d5e" || n.Steps[0].OperationID != "9f2c4b7a1e" {
		t.Errorf("recorded step changed: %+v", n.Steps[0])
	}
	if n.AdvanceSettings != `{"descriptorMode":"accessibilityMode","version":35}` {
		t.Errorf("advanceSettings = %s", n.AdvanceSettings)
	}
}

func TestRunningParams(t *testing.T) {
	t.Parallel()
	c := mustParse(t, `{"caseName":"c","targetAppPackage":"p","advanceSettings":"{\"version\":35}","operationLog":{"steps":[`+sleepStep+`]}}`)
	for _, bad := range []string{
		`{"mode":"SEPARATE","paramList":[{"a":"1,2","b":"3"}]}`,
		`{"mode":"SEPARATE","paramList":[{"a":"1,,2"}]}`,
		`{"mode":"SEPARATE","paramList":[{"a":"1"},{"a":"2"}]}`,
		`{"mode":"UNION","paramList":[{" a":"1"}]}`,
		`{"mode":"UNION","paramList":[]}`,
		`{"mode":"OTHER","paramList":[{"a":"1"}]}`,
		`{"mode":"UNION","paramList":[{"a":"1"}],"extra":1}`,
		`{"mode":"UNION","paramList":[{"a":1}]}`,
	} {
		if _, err := SetRunningParams(c, []byte(bad)); errorCode(err) != fault.CodeInvalidRunningParams {
			t.Errorf("%s: got %v", bad, err)
		}
	}
	set, err := SetRunningParams(c, []byte(`{"mode":"UNION","paramList":[{"a":"1","b":"2"},{"b":"3","a":"4"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if set.AdvanceSettings != `{"runningParam":{"mode":"UNION","paramList":[{"a":"1","b":"2"},{"a":"4","b":"3"}]},"version":35}` {
		t.Errorf("set: %s", set.AdvanceSettings)
	}
	if rp, _ := GetRunningParams(set); !rp.Configured || rp.Mode == nil || *rp.Mode != "UNION" || rp.ItemCount != 2 {
		t.Errorf("summary %+v", rp)
	}
	if _, _, err := Normalize(set, NormalizeOptions{}); err != nil {
		t.Error(err)
	}
	cleared, err := ClearRunningParams(set)
	if err != nil || cleared.AdvanceSettings != `{"version":35}` {
		t.Errorf("clear: %s %v", cleared.AdvanceSettings, err)
	}
	if rp, _ := GetRunningParams(cleared); rp.Configured {
		t.Error("still configured")
	}
}

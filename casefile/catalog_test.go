package casefile

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestCatalogShape(t *testing.T) {
	acts := Actions()
	if len(acts) != 66 {
		t.Fatalf("got %d enums, want 66", len(acts))
	}
	if n := len(ProviderActions()); n != 6 {
		t.Fatalf("got %d providers, want 6", n)
	}
	var node, runtime, caseOnly []string
	names := map[string]bool{}
	for _, a := range acts {
		if names[a.ActionEnum] {
			t.Errorf("duplicate %s", a.ActionEnum)
		}
		names[a.ActionEnum] = true
		if a.RequiresNode {
			node = append(node, a.ActionEnum)
		}
		if a.RuntimeOnly {
			runtime = append(runtime, a.ActionEnum)
		}
		if a.CaseOnly {
			caseOnly = append(caseOnly, a.ActionEnum)
		}
		if a.RequiredParams == nil || a.Params == nil {
			t.Errorf("%s: nil param lists print as null", a.ActionEnum)
		}
	}
	wantNode := []string{"CLICK", "LONG_CLICK", "INPUT", "MULTI_CLICK", "CLICK_IF_EXISTS", "CLICK_QUICK",
		"CLICK_AND_INPUT", "INPUT_SEARCH", "SCROLL_TO_BOTTOM", "SCROLL_TO_TOP", "SCROLL_TO_RIGHT",
		"SCROLL_TO_LEFT", "GESTURE", "ASSERT", "SLEEP_UNTIL", "OTHER_NODE", "LET_NODE", "CHECK_NODE"}
	if !slices.Equal(node, wantNode) {
		t.Errorf("node actions = %v", node)
	}
	if !slices.Equal(runtime, []string{"CANCEL", "PAUSE", "RESUME", "FINISH", "FOCUS", "FORCE_STOP", "NORMAL_EXIT"}) {
		t.Errorf("runtime-only = %v", runtime)
	}
	if !slices.Equal(caseOnly, []string{"DELETE_CASE", "EXPORT_CASE", "PLAY_MULTI_TIMES", "GEN_MULTI_PARAM"}) {
		t.Errorf("case-only = %v", caseOnly)
	}
}

func TestCatalogFlags(t *testing.T) {
	for _, tc := range []struct {
		name                                       string
		authoring                                  string
		refused, highRisk, allowed, supported, ctx bool
	}{
		{"CLICK", AuthoringCaseStep, false, false, true, true, false},
		{"FINISH", AuthoringRuntimeOnly, false, false, false, false, false},
		{"EXECUTE_SHELL", AuthoringCaseStep, true, true, false, true, false},
		{"HANDLE_PERMISSION_ALERT", AuthoringCaseContext, true, false, false, true, true},
		{"HIDE_INPUT_METHOD", AuthoringCaseContext, true, false, false, true, true},
		{"WHILE", AuthoringCaseContext, false, false, true, true, true},
		{"DELETE_CASE", AuthoringCaseOnly, false, false, false, false, false},
		{"CLEAR_DATA", AuthoringCaseStep, false, true, true, true, false},
		{"KILL_PROCESS", AuthoringCaseStep, false, true, true, true, false},
		{"JUMP_TO_PAGE", AuthoringCaseStep, false, true, true, true, false},
		{"OTHER_GLOBAL", AuthoringDynamicProvider, false, false, true, true, false},
	} {
		d, ok := LookupAction(tc.name)
		if !ok {
			t.Fatalf("%s not found", tc.name)
		}
		if d.Authoring != tc.authoring || d.Refused != tc.refused || d.HighRisk != tc.highRisk ||
			d.AuthoringAllowed != tc.allowed || d.SupportedInCaseStep != tc.supported || d.RequiresCaseContext != tc.ctx {
			t.Errorf("%s: got %+v", tc.name, d)
		}
		if d.HighRisk && (d.HighRiskReason == nil || !d.RequiresHighRisk) {
			t.Errorf("%s: high risk without reason", tc.name)
		}
	}
}

func TestLookupAction(t *testing.T) {
	for in, want := range map[string]string{
		"CLICK": "CLICK", "click": "CLICK", "Click": "CLICK", " click ": "CLICK",
		"longClick": "LONG_CLICK", "LONGCLICK": "LONG_CLICK", "long_click": "LONG_CLICK",
		"goToIndex": "GOTO_INDEX", "gotoindex": "GOTO_INDEX",
		"load": "LOAD_PARAM", "LOAD_PARAM": "LOAD_PARAM",
		"slaveExit": "NORMAL_EXIT", "permissionAlert": "HANDLE_PERMISSION_ALERT",
		"inputMethod": "HIDE_INPUT_METHOD", "genMultiParam": "GEN_MULTI_PARAM",
		"otherGlobal": "OTHER_GLOBAL", "while": "WHILE",
	} {
		d, ok := LookupAction(in)
		if !ok || d.ActionEnum != want {
			t.Errorf("LookupAction(%q) = %s, %v; want %s", in, d.ActionEnum, ok, want)
		}
	}
	for _, in := range []string{"", "startRecord", "LOADPARAM", "tap", "CLICK_"} {
		if d, ok := LookupAction(in); ok {
			t.Errorf("LookupAction(%q) = %s, want not found", in, d.ActionEnum)
		}
	}
	p, ok := LookupProvider("STARTRECORDSCREEN")
	if !ok || p.Code != "startRecordScreen" || p.Plugin != PluginScreenRecord || p.PairedStop != "stopRecordScreen" {
		t.Errorf("LookupProvider = %+v, %v", p, ok)
	}
	if p, _ := LookupProvider("assertScreenshot"); p.ActionEnum != "OTHER_NODE" || !p.RequiresNode || p.Plugin != PluginImageCompare {
		t.Errorf("assertScreenshot = %+v", p)
	}
	if p, _ := LookupProvider("stopRecord"); p.RequiresPriorAction != "startRecord" || p.Plugin != "" {
		t.Errorf("stopRecord = %+v", p)
	}
}

// Case-insensitive lookup must never be ambiguous between a name and a code.
func TestLookupUnambiguous(t *testing.T) {
	seen := map[string]string{}
	for _, a := range Actions() {
		for _, k := range []string{strings.ToLower(a.ActionEnum), strings.ToLower(a.Code)} {
			if prev, ok := seen[k]; ok && prev != a.ActionEnum {
				t.Errorf("%q maps to %s and %s", k, prev, a.ActionEnum)
			}
			seen[k] = a.ActionEnum
		}
	}
}

// Actions returns fresh data: callers cannot corrupt the table.
func TestActionsIsACopy(t *testing.T) {
	a := Actions()
	a[1].RequiredParams = append(a[1].RequiredParams, "x")
	a[2].Params[0] = "mutated"
	if b := Actions(); len(b[1].RequiredParams) != 0 || b[2].Params[0] != "text" {
		t.Fatal("table was mutated through Actions()")
	}
	if _, err := json.Marshal(a); err != nil {
		t.Fatal(err)
	}
}

func TestDeviceEnumResolution(t *testing.T) {
	for in, want := range map[string]string{"CLICK": "CLICK", "click": "CLICK", "Long_Click": "LONG_CLICK"} {
		if r, ok := enumByDeviceName(in); !ok || r.name != want {
			t.Errorf("%q -> %v %v", in, r.name, ok)
		}
	}
	for _, in := range []string{"longClick", "startRecord", "", "ſleep"} {
		if _, ok := enumByDeviceName(in); ok {
			t.Errorf("%q must not resolve on the device", in)
		}
	}
}

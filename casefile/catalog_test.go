package casefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/solopi-dev/solopi/fault"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestCatalogShape(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	for _, tc := range []struct {
		name                                       string
		authoring                                  string
		refused, highRisk, allowed, supported, ctx bool
	}{
		{"CLICK", authoringCaseStep, false, false, true, true, false},
		{"FINISH", authoringRuntimeOnly, false, false, false, false, false},
		{"EXECUTE_SHELL", authoringCaseStep, true, true, false, true, false},
		{"HANDLE_PERMISSION_ALERT", authoringCaseContext, true, false, false, true, true},
		{"HIDE_INPUT_METHOD", authoringCaseContext, true, false, false, true, true},
		{"WHILE", authoringCaseContext, false, false, true, true, true},
		{"DELETE_CASE", authoringCaseOnly, false, false, false, false, false},
		{"CLEAR_DATA", authoringCaseStep, false, true, true, true, false},
		{"KILL_PROCESS", authoringCaseStep, false, true, true, true, false},
		{"JUMP_TO_PAGE", authoringCaseStep, false, true, true, true, false},
		{"OTHER_GLOBAL", authoringDynamicProvider, false, false, true, true, false},
	} {
		d, ok := lookupAction(tc.name)
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
	t.Parallel()
	for in, want := range map[string]string{
		"CLICK": "CLICK", "click": "CLICK", "Click": "CLICK", " click ": "CLICK",
		"longClick": "LONG_CLICK", "LONGCLICK": "LONG_CLICK", "long_click": "LONG_CLICK",
		"goToIndex": "GOTO_INDEX", "gotoindex": "GOTO_INDEX",
		"load": "LOAD_PARAM", "LOAD_PARAM": "LOAD_PARAM",
		"slaveExit": "NORMAL_EXIT", "permissionAlert": "HANDLE_PERMISSION_ALERT",
		"inputMethod": "HIDE_INPUT_METHOD", "genMultiParam": "GEN_MULTI_PARAM",
		"otherGlobal": "OTHER_GLOBAL", "while": "WHILE",
	} {
		d, ok := lookupAction(in)
		if !ok || d.ActionEnum != want {
			t.Errorf("LookupAction(%q) = %s, %v; want %s", in, d.ActionEnum, ok, want)
		}
	}
	for _, in := range []string{"", "startRecord", "LOADPARAM", "tap", "CLICK_"} {
		if d, ok := lookupAction(in); ok {
			t.Errorf("LookupAction(%q) = %s, want not found", in, d.ActionEnum)
		}
	}
	p, ok := lookupProvider("STARTRECORDSCREEN")
	if !ok || p.Code != "startRecordScreen" || p.Plugin != pluginScreenRecord || p.PairedStop != "stopRecordScreen" {
		t.Errorf("LookupProvider = %+v, %v", p, ok)
	}
	if p, _ := lookupProvider("assertScreenshot"); p.ActionEnum != "OTHER_NODE" || !p.RequiresNode || p.Plugin != pluginImageCompare {
		t.Errorf("assertScreenshot = %+v", p)
	}
	if p, _ := lookupProvider("stopRecord"); p.RequiresPriorAction != "startRecord" || p.Plugin != "" {
		t.Errorf("stopRecord = %+v", p)
	}
}

// Case-insensitive lookup must never be ambiguous between a name and a code.
func TestLookupUnambiguous(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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

// The catalogue prints solopi-ai's `actions` descriptors: the same
// descriptors in the same order, each with solopi-ai's keys in its order and
// values, then our extra keys. Only the risk reason text differs (ours is
// English), so for it only presence is compared.
func TestAuthoringCatalogMatchesSolopiAI(t *testing.T) {
	t.Parallel()
	golden, err := os.ReadFile("testdata/solopi-ai/actions.json")
	if err != nil {
		t.Fatal(err)
	}
	type catalogJSON struct {
		Counts          map[string]int    `json:"counts"`
		EnumActions     []json.RawMessage `json:"enumActions"`
		ProviderActions []json.RawMessage `json:"providerActions"`
	}
	b, err := json.Marshal(AuthoringCatalog())
	if err != nil {
		t.Fatal(err)
	}
	var want, got catalogJSON
	if err := errors.Join(json.Unmarshal(golden, &want), json.Unmarshal(b, &got)); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got.Counts, want.Counts) || want.Counts["totalDescriptors"] != 72 {
		t.Fatalf("counts = %v, want %v", got.Counts, want.Counts)
	}
	compare := func(kind string, got, want []json.RawMessage, extras []string) {
		if len(got) != len(want) {
			t.Fatalf("%s: %d descriptors, want %d", kind, len(got), len(want))
		}
		for i := range want {
			wk, gk := objectKeys(t, want[i]), objectKeys(t, got[i])
			if !slices.Equal(gk, append(slices.Clone(wk), extras...)) {
				t.Errorf("%s[%d] keys = %v, want %v + %v", kind, i, gk, wk, extras)
				continue
			}
			var w, g map[string]any
			_ = json.Unmarshal(want[i], &w)
			_ = json.Unmarshal(got[i], &g)
			for _, k := range wk {
				if k == "highRiskReason" {
					if (w[k] == nil) != (g[k] == nil) {
						t.Errorf("%s %v: highRiskReason %v, want %v", kind, w["code"], g[k], w[k])
					}
					continue
				}
				if !reflect.DeepEqual(g[k], w[k]) {
					t.Errorf("%s %v: %s = %v, want %v", kind, w["code"], k, g[k], w[k])
				}
			}
		}
	}
	compare("enumActions", got.EnumActions, want.EnumActions, []string{"category", "type", "refused", "refusedReason", "params", "paramValues"})
	// requiresPriorAction is present only on the two stop actions, in both.
	for i := range want.ProviderActions {
		extras := []string{"provider"}
		var p map[string]any
		_ = json.Unmarshal(got.ProviderActions[i], &p)
		for _, k := range []string{"pairedStop", "plugin"} {
			if _, ok := p[k]; ok {
				extras = append(extras, k)
			}
		}
		extras = append(extras, "refusedParams")
		compare("providerActions", got.ProviderActions[i:i+1], want.ProviderActions[i:i+1], extras)
	}
}

// objectKeys lists the member names of a JSON object in document order.
func objectKeys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", raw)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// What the catalogue says about a provider's params is what the policy
// enforces: every refused param is refused on every provider step.
func TestCatalogRefusedParamsAreEnforced(t *testing.T) {
	t.Parallel()
	for _, p := range ProviderActions() {
		if !slices.Equal(p.RefusedParams, []string{"url"}) {
			t.Errorf("%s refusedParams = %v", p.Code, p.RefusedParams)
		}
		params := map[string]*string{"targetAction": Str(p.Code), "url": Str("https://collector.example/upload")}
		for _, k := range p.RequiredParams {
			if params[k] == nil {
				params[k] = Str("1")
			}
		}
		s := Step{StepID: "s", Method: Method{ActionEnum: p.ActionEnum, Params: params}}
		if _, err := stepPolicy(s, 0, true, ""); errorCode(err) != fault.CodeRefusedProviderURL {
			t.Errorf("%s with a url: %v, want %s", p.Code, err, fault.CodeRefusedProviderURL)
		}
		params["url"] = Str(" ")
		if _, err := stepPolicy(s, 0, true, ""); err != nil {
			t.Errorf("%s with a blank url: %v", p.Code, err)
		}
	}
}

// Every descriptor flag agrees with what Normalize and the policy do to a
// one-step case of that action.
func TestCatalogAgreesWithNormalize(t *testing.T) {
	t.Parallel()
	for _, d := range Actions() {
		params := map[string]*string{}
		for _, k := range d.RequiredParams {
			params[k] = Str("1")
		}
		if d.DynamicProvider {
			params["targetAction"] = Str(map[string]string{"OTHER_NODE": "clickByScreenshot", "OTHER_GLOBAL": "stopRecord"}[d.ActionEnum])
			params["targetImage"] = Str("img")
		}
		s := Step{Method: Method{ActionEnum: d.ActionEnum, Params: params}}
		if d.RequiresNode {
			s.Node = &Node{ResourceID: Str("id/x")}
		}
		c := &Case{CaseName: "c", TargetAppPackage: "p", Steps: []Step{s}}
		if d.ActionEnum == "OTHER_GLOBAL" {
			start := Step{Method: Method{ActionEnum: "startRecord", Params: map[string]*string{"checkList": Str("cpu")}}}
			c.Steps = []Step{start, s}
		}
		_, _, err := Normalize(c, NormalizeOptions{ConfirmHighRisk: true})
		if d.AuthoringAllowed != (err == nil) {
			t.Errorf("%s: authoringAllowed %v but Normalize: %v", d.ActionEnum, d.AuthoringAllowed, err)
		}
		_, _, err = Normalize(c, NormalizeOptions{SkipPolicy: true})
		if d.SupportedInCaseStep != (err == nil) {
			t.Errorf("%s: supportedInCaseStep %v but Normalize without policy: %v", d.ActionEnum, d.SupportedInCaseStep, err)
		}
		if d.HighRisk {
			if _, _, err := Normalize(c, NormalizeOptions{}); err == nil {
				t.Errorf("%s: high risk but accepted without confirmation", d.ActionEnum)
			}
		}
		if len(d.RequiredParams) > 0 && d.SupportedInCaseStep {
			c2 := c.Clone()
			delete(c2.Steps[len(c2.Steps)-1].Method.Params, d.RequiredParams[0])
			if _, _, err := Normalize(c2, NormalizeOptions{SkipPolicy: true}); errorCode(err) != fault.CodeMissingParams {
				t.Errorf("%s without %s: %v, want %s", d.ActionEnum, d.RequiredParams[0], err, fault.CodeMissingParams)
			}
		}
		if d.RequiresNode && d.SupportedInCaseStep {
			c2 := c.Clone()
			c2.Steps[len(c2.Steps)-1].Node = nil
			if _, _, err := Normalize(c2, NormalizeOptions{SkipPolicy: true}); errorCode(err) != fault.CodeMissingNode {
				t.Errorf("%s without a node: %v, want %s", d.ActionEnum, err, fault.CodeMissingNode)
			}
		}
	}
}

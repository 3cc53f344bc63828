package casefile

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/solopi-dev/solopi/fault"
)

func TestParseExportedSample(t *testing.T) {
	t.Parallel()
	c := mustParseFile(t, "testdata/settings-search-wlan.json")
	if c.CaseName != "settings-search-wlan" || c.TargetAppLabel != "设置" || c.Priority != 2 || c.GmtCreate != 1700000000000 ||
		c.ID != nil || len(c.Steps) != 6 || c.Unknown != nil {
		t.Fatalf("parsed %+v", c)
	}
	s := c.Steps[1]
	if s.StepID != "b2d74e90c1" || s.OperationIndex != 1 || s.Method.ActionEnum != "INPUT" || !s.Method.EncryptedOnDevice() ||
		*s.Method.Params["text"] != "70E64B6009261E23085996D7F3785F4C" || *s.Node.ResourceID != "android:id/search_src_text" ||
		*s.Node.Text != "" || s.Node.NodeBound.Bottom != 236 || s.Node.Extra["screenSize"] != "1080,2340" || string(s.Node.AssistantNodes) != "[]" {
		t.Fatalf("step 1 = %+v node %+v", s, s.Node)
	}
	if c.Steps[2].Node != nil {
		t.Error("SLEEP step has no node")
	}
}

func TestParseAuthoringSample(t *testing.T) {
	t.Parallel()
	c := mustParseFile(t, "testdata/counter-increment.authoring.json")
	if c.CaseName != "counter-increment" || c.Priority != 1 || len(c.Steps) != 5 || c.Steps[0].Method.ActionEnum != "sleep" ||
		*c.Steps[0].Method.Encrypt || c.Steps[0].Node != nil || c.Steps[1].StepID != "" {
		t.Fatalf("parsed %+v", c)
	}
}

func TestParseFormsAgree(t *testing.T) {
	t.Parallel()
	exported := mustParseFile(t, "testdata/settings-search-wlan.json")
	b, err := MarshalAuthoring(exported)
	if err != nil {
		t.Fatal(err)
	}
	authoring := mustParse(t, string(b))
	exported.GmtCreate, exported.GmtModify = 0, 0
	if !reflect.DeepEqual(exported, authoring) {
		t.Fatalf("forms differ:\n%+v\n%+v", exported, authoring)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, json, code, field string }{
		{"not json", `{"caseName":`, fault.CodeInvalidCaseJSON, ""},
		{"empty", ``, fault.CodeInvalidCaseJSON, ""},
		{"array", `[{"caseName":"x"}]`, fault.CodeInvalidCaseJSON, ""},
		{"string", `"case"`, fault.CodeInvalidCaseJSON, ""},
		{"number", `12`, fault.CodeInvalidCaseJSON, ""},
		{"null", `null`, fault.CodeInvalidCaseJSON, ""},
		{"trailing", `{"caseName":"x"} {}`, fault.CodeInvalidCaseJSON, ""},
		{"name type", `{"caseName":1}`, fault.CodeInvalidField, "caseName"},
		{"priority type", `{"caseName":"x","priority":"2"}`, fault.CodeInvalidField, "priority"},
		{"priority float", `{"caseName":"x","priority":1.5}`, fault.CodeInvalidField, "priority"},
		{"priority overflow", `{"caseName":"x","priority":9999999999}`, fault.CodeInvalidField, "priority"},
		{"gmt type", `{"gmtCreate":"now"}`, fault.CodeInvalidField, "gmtCreate"},
		{"advanceSettings type", `{"advanceSettings":[1]}`, fault.CodeInvalidField, "advanceSettings"},
		{"operationLog bad string", `{"operationLog":"{steps"}`, fault.CodeInvalidOperationLog, ""},
		{"operationLog array string", `{"operationLog":"[]"}`, fault.CodeInvalidOperationLog, ""},
		{"operationLog number", `{"operationLog":5}`, fault.CodeInvalidOperationLog, ""},
		{"steps object", `{"operationLog":{"steps":{}}}`, fault.CodeInvalidOperationLog, ""},
		{"step string", `{"operationLog":{"steps":["x"]}}`, fault.CodeInvalidStep, ""},
		{"method array", `{"operationLog":{"steps":[{"operationMethod":[]}]}}`, fault.CodeInvalidStep, "operationMethod"},
		{"encrypt string", `{"operationLog":{"steps":[{"operationMethod":{"encrypt":"true"}}]}}`, fault.CodeInvalidStep, "operationMethod.encrypt"},
		{"param object", `{"operationLog":{"steps":[{"operationMethod":{"operationParam":{"a":{}}}}]}}`, fault.CodeInvalidStep, "operationMethod.operationParam.a"},
		{"node string", `{"operationLog":{"steps":[{"operationNode":"x"}]}}`, fault.CodeInvalidStep, "operationNode"},
		{"bound type", `{"operationLog":{"steps":[{"operationNode":{"nodeBound":{"left":"1"}}}]}}`, fault.CodeInvalidStep, "operationNode.nodeBound.left"},
		{"index type", `{"operationLog":{"steps":[{"operationIndex":"0"}]}}`, fault.CodeInvalidStep, "operationIndex"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(tc.json))
			e := asError(t, err)
			if e.Code != tc.code || e.Field != tc.field {
				t.Fatalf("got %s/%s (%v), want %s/%s", e.Code, e.Field, e, tc.code, tc.field)
			}
		})
	}
}

func TestParseKeepsUnknownAndDropsNoise(t *testing.T) {
	t.Parallel()
	c := mustParse(t, `{"caseName":"x","selected":false,"ideRecord":false,"caseFingerprint":"ab","custom":{"b":1,"a":[true]},
		"operationLog":"{\"storePath\":\"/sdcard/x\",\"note\":\"n\",\"steps\":[{\"operationMethod\":{\"actionEnum\":\"BACK\",\"x\":1},\"y\":2,\"operationNode\":{\"z\":3}}]}"}`)
	if len(c.Unknown) != 1 || string(c.Unknown["custom"]) != `{"a":[true],"b":1}` {
		t.Errorf("unknown = %v", c.Unknown)
	}
	if len(c.OperationLogUnknown) != 1 || string(c.OperationLogUnknown["note"]) != `"n"` {
		t.Errorf("operationLog unknown = %v", c.OperationLogUnknown)
	}
	s := c.Steps[0]
	if string(s.Unknown["y"]) != "2" || string(s.Method.Unknown["x"]) != "1" || string(s.Node.Unknown["z"]) != "3" {
		t.Errorf("step unknowns lost: %+v", s)
	}
	out, err := marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"custom":{"a":[true],"b":1}`, `\"note\":\"n\"`, `\"y\":2`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("Marshal lost %s: %s", want, out)
		}
	}
	for _, gone := range []string{"selected", "ideRecord", "caseFingerprint", "storePath"} {
		if strings.Contains(string(out), gone) {
			t.Errorf("Marshal kept %s", gone)
		}
	}
}

func TestMarshalExportedForm(t *testing.T) {
	t.Parallel()
	src, _ := os.ReadFile("testdata/settings-search-wlan.json")
	c := mustParseFile(t, "testdata/settings-search-wlan.json")
	id := int64(9)
	c.ID = &id
	out, err := marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsAny(out, "\n") || !strings.HasPrefix(string(out), `{"advanceSettings":"{\"descriptorMode\"`) {
		t.Errorf("not compact sorted: %.80s", out)
	}
	var got, want map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(src, &want)
	for _, k := range []string{"id", "gmtCreate", "gmtModify", "selected", "ideRecord"} {
		delete(want, k)
		if _, ok := got[k]; ok {
			t.Errorf("Marshal kept %s", k)
		}
	}
	// operationLog differs only by key order inside the HashMap params.
	var gotLog, wantLog any
	json.Unmarshal([]byte(got["operationLog"].(string)), &gotLog)
	json.Unmarshal([]byte(want["operationLog"].(string)), &wantLog)
	if !reflect.DeepEqual(gotLog, wantLog) {
		t.Errorf("operationLog differs")
	}
	delete(got, "operationLog")
	delete(want, "operationLog")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("top level differs:\n%v\n%v", got, want)
	}
	// No HTML escaping, non-ASCII kept raw.
	if strings.Contains(string(out), `\u003c`) || !strings.Contains(string(out), "搜索设置") {
		t.Error("escaping differs from fastjson")
	}
	f, err := MarshalImportFile(c)
	if err != nil || !strings.HasSuffix(string(f), "}\n") || !strings.Contains(string(f), "\n  \"caseName\": ") {
		t.Errorf("import file layout: %s %v", f, err)
	}
}

func TestReadBackJSON(t *testing.T) {
	t.Parallel()
	fp := strings.Repeat("ab", 32)
	c := mustParse(t, "\uFEFF"+`{"id":12,"caseName":"c","targetAppPackage":"p","gmtCreate":5,"gmtModify":6,"caseFingerprint":"`+fp+`",
		"operationLog":"{\"steps\":[{\"operationId\":\"o\",\"stepId\":\"s\",\"operationIndex\":0,\"operationMethod\":{\"actionEnum\":\"BACK\",\"encrypt\":false,\"operationParam\":{}}}]}"}`)
	if *c.ID != 12 || c.CaseFingerprint != fp {
		t.Fatalf("read-back fields: %+v", c)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"advanceSettings":"","caseDesc":"","caseFingerprint":"` + fp + `","caseName":"c","gmtCreate":5,"gmtModify":6,"id":12,` +
		`"operationLog":{"steps":[{"operationId":"o","operationIndex":0,"operationMethod":{"actionEnum":"BACK","encrypt":false,"operationParam":{}},"stepId":"s"}]},` +
		`"priority":2,"recordMode":"","targetAppLabel":"","targetAppPackage":"p"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	var back Case
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(&back, c) {
		t.Errorf("unmarshal: %v\n%+v\n%+v", err, back, c)
	}
	n, _, _ := Normalize(c, NormalizeOptions{})
	if out, _ := marshal(n); strings.Contains(string(out), "caseFingerprint") || strings.Contains(string(out), `"id"`) || strings.Contains(string(out), "gmtCreate") {
		t.Errorf("import form kept generated fields: %s", out)
	}
}

func TestSchemaValidatesSamples(t *testing.T) {
	t.Parallel()
	compiler := jsonschema.NewCompiler()
	compiler.Draft = jsonschema.Draft2020
	compiler.AssertContent = true
	if err := compiler.AddResource(schemaURL, bytes.NewReader(schema(t))); err != nil {
		t.Fatal(err)
	}
	schema, err := compiler.Compile(schemaURL)
	if err != nil {
		t.Fatal(err)
	}
	validate := func(data []byte) error {
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return err
		}
		return schema.Validate(v)
	}
	files, _ := filepath.Glob("testdata/*.json")
	if len(files) < 2 {
		t.Fatal("samples missing")
	}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if err := validate(data); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		c := mustParse(t, string(data))
		n, _, err := Normalize(c, NormalizeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []func(*Case) ([]byte, error){marshal, MarshalAuthoring} {
			out, _ := m(n)
			if err := validate(out); err != nil {
				t.Errorf("%s re-marshalled: %v", f, err)
			}
		}
	}
	for name, bad := range map[string]string{
		"no name":              `{"targetAppPackage":"p","operationLog":{"steps":[{"operationMethod":{"actionEnum":"BACK"}}]}}`,
		"priority":             `{"caseName":"c","targetAppPackage":"p","priority":3,"operationLog":{"steps":[{"operationMethod":{"actionEnum":"BACK"}}]}}`,
		"operationLog garbage": `{"caseName":"c","targetAppPackage":"p","operationLog":"{steps"}`,
		"encoded no steps":     `{"caseName":"c","targetAppPackage":"p","operationLog":"{\"steps\":[]}"}`,
		"encoded bad running":  `{"caseName":"c","targetAppPackage":"p","advanceSettings":"{\"runningParam\":{\"mode\":\"X\",\"paramList\":[]}}","operationLog":{"steps":[{"operationMethod":{"actionEnum":"BACK"}}]}}`,
		"no method":            `{"caseName":"c","targetAppPackage":"p","operationLog":{"steps":[{}]}}`,
		"bad running params":   `{"caseName":"c","targetAppPackage":"p","advanceSettings":{"runningParam":{"mode":"X","paramList":[]}},"operationLog":{"steps":[{"operationMethod":{"actionEnum":"BACK"}}]}}`,
	} {
		if err := validate([]byte(bad)); err == nil {
			t.Errorf("%s: schema accepted it", name)
		}
	}
}

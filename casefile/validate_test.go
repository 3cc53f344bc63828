package casefile

import (
	"github.com/solopi-dev/solopi/fault"
	"testing"
)

func TestDeviceValidate(t *testing.T) {
	t.Parallel()
	good := `{"operationId":"o","stepId":"s1","operationIndex":0,"operationMethod":{"actionEnum":"CLICK"},"operationNode":` + nodeJSON + `}`
	for _, tc := range []struct{ name, json, msg string }{
		{"ok", caseWith(`[` + good + `]`), ""},
		{"ok lowercase enum", caseWith(`[{"operationId":"o","stepId":"s","operationMethod":{"actionEnum":"sleep"}}]`), ""},
		{"no name", `{"targetAppPackage":"p","operationLog":{"steps":[` + good + `]}}`, "Case name is required"},
		{"no package", `{"caseName":"c","targetAppPackage":"","operationLog":{"steps":[` + good + `]}}`, "Target app package is required"},
		{"priority", `{"caseName":"c","targetAppPackage":"p","priority":3,"operationLog":{"steps":[` + good + `]}}`, "Case priority must be between 0 and 2"},
		{"negative priority", `{"caseName":"c","targetAppPackage":"p","priority":-1,"operationLog":{"steps":[` + good + `]}}`, "Case priority must be between 0 and 2"},
		{"no steps", caseWith(`[]`), "Case must contain at least one inline operation step"},
		{"no operationLog", `{"caseName":"c","targetAppPackage":"p"}`, "Case must contain at least one inline operation step"},
		{"null step", caseWith(`[` + good + `,null]`), "Case step 1 has no supported action"},
		{"code is unknown to device", caseWith(`[{"operationId":"o","stepId":"s","operationMethod":{"actionEnum":"longClick","operationParam":{"text":"1"}},"operationNode":` + nodeJSON + `}]`), "Case step 0 has no supported action"},
		{"provider shorthand unknown to device", caseWith(`[{"operationId":"o","stepId":"s","operationMethod":{"actionEnum":"stopRecord"}}]`), "Case step 0 has no supported action"},
		{"no method", caseWith(`[{"operationId":"o","stepId":"s"}]`), "Case step 0 has no supported action"},
		{"no operationId", caseWith(`[{"stepId":"s","operationMethod":{"actionEnum":"BACK"}}]`), "Case step 0 has no operationId or stepId"},
		{"no stepId", caseWith(`[` + good + `,{"operationId":"o","operationMethod":{"actionEnum":"BACK"}}]`), "Case step 1 has no operationId or stepId"},
		{"negative index", caseWith(`[{"operationId":"o","stepId":"s","operationIndex":-1,"operationMethod":{"actionEnum":"BACK"}}]`), "Case step 0 has a negative operationIndex"},
		{"duplicate", caseWith(`[` + good + `,` + good + `]`), "Case step 1 has a duplicate stepId"},
		{"no node", caseWith(`[{"operationId":"o","stepId":"s","operationMethod":{"actionEnum":"CLICK"}}]`), "Case step 0 has no grounded node selector"},
		{"empty selectors", caseWith(`[{"operationId":"o","stepId":"s","operationMethod":{"actionEnum":"CHECK_NODE"},"operationNode":{"text":"","className":"x"}}]`), "Case step 0 has no grounded node selector"},
		// The device does not trim: a blank selector grounds the node.
		{"blank selector ok on device", caseWith(`[{"operationId":"o","stepId":"s","operationMethod":{"actionEnum":"CLICK"},"operationNode":{"text":" "}}]`), ""},
		// Case-menu enums parse on the device, so it accepts them.
		{"case-only accepted by device", caseWith(`[{"operationId":"o","stepId":"s","operationMethod":{"actionEnum":"DELETE_CASE"}}]`), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := DeviceValidate(mustParse(t, tc.json))
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("unexpected %v", err)
				}
				return
			}
			e := asError(t, err)
			if e.Code != fault.CodeInvalidCase || e.Message != tc.msg || e.Error() != tc.msg {
				t.Fatalf("got %s / %q, want invalid_case / %q", e.Code, e.Message, tc.msg)
			}
		})
	}
	if err := DeviceValidate(nil); err == nil || err.Error() != "Case name is required" {
		t.Fatalf("nil case: %v", err)
	}
}

func TestDeviceValidateSamples(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"testdata/settings-search-wlan.json"} {
		if err := DeviceValidate(mustParseFile(t, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	// The authoring sample needs host normalisation (codes, ids) first.
	c := mustParseFile(t, "testdata/counter-increment.authoring.json")
	if err := DeviceValidate(c); err == nil {
		t.Error("raw authoring case should fail device validation (no stepIds)")
	}
	n, _, err := Normalize(c, NormalizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := DeviceValidate(n); err != nil {
		t.Errorf("normalised counter case: %v", err)
	}
}

func TestApplyDeviceImportDefaults(t *testing.T) {
	t.Parallel()
	c := mustParse(t, `{"caseName":"c","targetAppPackage":"p","operationLog":{"steps":[{"operationId":"o","stepId":"s","operationMethod":{"actionEnum":"back"}}]}}`)
	out := ApplyDeviceImportDefaults(c, 42, 1700)
	if *out.ID != 42 || out.GmtCreate != 1700 || out.GmtModify != 1700 || out.RecordMode != "local" ||
		out.TargetAppLabel != "p" || out.CaseDesc != "" || out.AdvanceSettings != "" || out.Steps[0].Method.ActionEnum != "BACK" {
		t.Fatalf("got %+v", out)
	}
	if c.ID != nil || c.Steps[0].Method.ActionEnum != "back" {
		t.Fatal("input was modified")
	}
}

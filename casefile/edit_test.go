package casefile

import (
	"encoding/json"
	"errors"
	"github.com/solopi-dev/solopi/fault"
	"strings"
	"testing"
)

func editCase(t *testing.T) *Case {
	return mustParseFile(t, "testdata/counter-increment.authoring.json")
}

func stepIDs(c *Case) string {
	ids := make([]string, len(c.Steps))
	for i, s := range c.Steps {
		ids[i] = s.StepID
		if s.OperationIndex != i {
			ids[i] += "!badindex"
		}
	}
	return strings.Join(ids, ",")
}

func mustStep(t *testing.T, s string) Step {
	t.Helper()
	st, err := ParseStep([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestList(t *testing.T) {
	t.Parallel()
	ds, err := List(editCase(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 5 || ds[1].ActionEnum != "CLICK" || ds[1].ActionCode != "click" || !ds[1].RequiresNode || ds[0].RequiresNode {
		t.Fatalf("descriptors: %+v", ds)
	}
	b, err := json.Marshal(ds[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"index":0`, `"stepId":"ai-step-001"`, `"targetAction":null`, `"highRiskReason":null`, `"authoringAllowed":true`, `"step":{"operationId":"ai-counter-increment"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("descriptor JSON lacks %s: %s", want, b)
		}
	}
	// Historical shell steps are listed, flagged not authorable.
	ds, err = List(mustParse(t, caseWith(`[`+shellStep+`]`)))
	if err != nil || ds[0].AuthoringAllowed || !ds[0].HighRisk {
		t.Fatalf("shell listing: %+v %v", ds, err)
	}
}

func TestInsertAndAppend(t *testing.T) {
	t.Parallel()
	c := editCase(t)
	before, _ := MarshalAuthoring(c)
	r, err := Insert(c, 1, mustStep(t, `{"operationMethod":{"actionEnum":"home"}}`), EditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := stepIDs(r.Case); got != "ai-step-001,ai-step-006,ai-step-002,ai-step-003,ai-step-004,ai-step-005" {
		t.Errorf("ids = %s", got)
	}
	if r.Operation != "add" || r.AffectedIndex != 1 || r.StepCount != 6 || r.Step.ActionEnum != "HOME" || r.Step.StepID != "ai-step-006" {
		t.Errorf("result %+v", r)
	}
	if after, _ := MarshalAuthoring(c); string(after) != string(before) {
		t.Error("source case mutated")
	}
	// Append, and Insert at the end; explicit stepId kept.
	r, err = Append(c, mustStep(t, `{"stepId":"end","operationMethod":{"actionEnum":"BACK"}}`), EditOptions{})
	if err != nil || r.AffectedIndex != 5 || r.Case.Steps[5].StepID != "end" {
		t.Fatalf("append: %+v %v", r, err)
	}
	r, err = Insert(c, 5, mustStep(t, `{"stepId":"end","operationMethod":{"actionEnum":"BACK"}}`), EditOptions{})
	if err != nil || r.AffectedIndex != 5 || r.Case.Steps[5].StepID != "end" {
		t.Fatalf("insert at the end: %+v %v", r, err)
	}
	for _, tc := range []struct {
		name string
		at   int
		step string
		opts EditOptions
		code string
	}{
		{"out of range", 7, `{"operationMethod":{"actionEnum":"BACK"}}`, EditOptions{}, fault.CodeStepIndexOutOfRange},
		{"minus one", -1, `{"operationMethod":{"actionEnum":"BACK"}}`, EditOptions{}, fault.CodeStepIndexOutOfRange},
		{"very negative", -1 << 31, `{"operationMethod":{"actionEnum":"BACK"}}`, EditOptions{}, fault.CodeStepIndexOutOfRange},
		{"shell refused even confirmed", 0, shellStep, EditOptions{ConfirmHighRisk: true}, fault.CodeRefusedAction},
		{"high risk unconfirmed", 0, clearData, EditOptions{}, fault.CodeHighRiskUnconfirmed},
		{"duplicate id", 0, `{"stepId":"ai-step-002","operationMethod":{"actionEnum":"BACK"}}`, EditOptions{}, fault.CodeDuplicateStepID},
		{"no selector", 0, `{"operationMethod":{"actionEnum":"CLICK"},"operationNode":{"className":"x"}}`, EditOptions{}, fault.CodeMissingSelector},
		{"runtime only", 0, `{"operationMethod":{"actionEnum":"PAUSE"}}`, EditOptions{}, fault.CodeRuntimeOnlyAction},
		{"unpaired stop", 0, stopRec, EditOptions{}, fault.CodeProviderPairing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Insert(c, tc.at, mustStep(t, tc.step), tc.opts)
			if errorCode(err) != tc.code {
				t.Fatalf("got %v, want %s", err, tc.code)
			}
		})
	}
	r, err = Insert(c, 0, mustStep(t, clearData), EditOptions{ConfirmHighRisk: true})
	if err != nil || !r.HighRiskConfirmed || !r.Step.HighRisk {
		t.Fatalf("confirmed add: %+v %v", r, err)
	}
}

func TestUpdate(t *testing.T) {
	t.Parallel()
	c := editCase(t)
	r, err := Update(c, 2, mustStep(t, `{"operationMethod":{"actionEnum":"LONG_CLICK","operationParam":{"text":"800"}},"operationNode":`+nodeJSON+`}`), EditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := r.Case.Steps[2]
	if s.StepID != "ai-step-003" || s.OperationID != "ai-counter-increment" || s.Method.ActionEnum != "LONG_CLICK" || r.Step.ActionCode != "longClick" {
		t.Errorf("updated step %+v", s)
	}
	if _, err := Update(c, 5, mustStep(t, sleepStep), EditOptions{}); errorCode(err) != fault.CodeStepIndexOutOfRange {
		t.Errorf("out of range: %v", err)
	}
	if _, err := Update(c, 0, mustStep(t, `{"operationMethod":{"actionEnum":"SLEEP"}}`), EditOptions{}); errorCode(err) != fault.CodeMissingParams {
		t.Errorf("missing params: %v", err)
	}
}

func TestDelete(t *testing.T) {
	t.Parallel()
	c := editCase(t)
	r, err := Delete(c, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.RemovedStepID != "ai-step-001" || r.StepCount != 4 || stepIDs(r.Case) != "ai-step-002,ai-step-003,ai-step-004,ai-step-005" {
		t.Errorf("delete: %+v %s", r, stepIDs(r.Case))
	}
	one := mustParse(t, caseWith(`[`+sleepStep+`]`))
	if _, err := Delete(one, 0); errorCode(err) != fault.CodeLastStep {
		t.Errorf("last step: %v", err)
	}
	paired := mustParse(t, caseWith(`[`+startRec+`,`+sleepStep+`,`+stopRec+`]`))
	if _, err := Delete(paired, 0); errorCode(err) != fault.CodeProviderPairing {
		t.Errorf("pairing: %v", err)
	}
	if _, err := Delete(paired, 3); errorCode(err) != fault.CodeStepIndexOutOfRange {
		t.Errorf("range: %v", err)
	}
	// Deleting needs no high-risk confirmation.
	risky := mustParse(t, caseWith(`[`+clearData+`,`+sleepStep+`]`))
	if _, err := Delete(risky, 1); err != nil {
		t.Errorf("delete next to a high-risk step: %v", err)
	}
}

func TestMove(t *testing.T) {
	t.Parallel()
	c := editCase(t)
	r, err := Move(c, 0, 4, EditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if stepIDs(r.Case) != "ai-step-002,ai-step-003,ai-step-004,ai-step-005,ai-step-001" || r.AffectedIndex != 4 || r.Step.StepID != "ai-step-001" {
		t.Errorf("move: %s", stepIDs(r.Case))
	}
	r, err = Move(c, 3, 1, EditOptions{})
	if err != nil || stepIDs(r.Case) != "ai-step-001,ai-step-004,ai-step-002,ai-step-003,ai-step-005" {
		t.Errorf("move back: %s %v", stepIDs(r.Case), err)
	}
	if _, err := Move(c, 0, 5, EditOptions{}); errorCode(err) != fault.CodeStepIndexOutOfRange {
		t.Errorf("range: %v", err)
	}
	paired := mustParse(t, caseWith(`[`+startRec+`,`+sleepStep+`,`+stopRec+`]`))
	if _, err := Move(paired, 2, 0, EditOptions{}); errorCode(err) != fault.CodeProviderPairing {
		t.Errorf("pairing: %v", err)
	}
	risky := mustParse(t, caseWith(`[`+clearData+`,`+sleepStep+`]`))
	if _, err := Move(risky, 0, 1, EditOptions{}); errorCode(err) != fault.CodeHighRiskUnconfirmed {
		t.Errorf("high risk: %v", err)
	}
}

func TestCopy(t *testing.T) {
	t.Parallel()
	c := editCase(t)
	r, err := Copy(c, 2, 3, EditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Case.Steps[3].StepID != "ai-step-003-copy" || r.AffectedIndex != 3 {
		t.Errorf("copy: %s", stepIDs(r.Case))
	}
	r2, err := Copy(r.Case, 2, 0, EditOptions{})
	if err != nil || r2.Case.Steps[0].StepID != "ai-step-003-copy-2" {
		t.Fatalf("second copy: %s %v", stepIDs(r2.Case), err)
	}
	r3, err := Copy(r2.Case, 0, 6, EditOptions{})
	if err != nil || r3.Case.Steps[6].StepID != "ai-step-003-copy-2-copy" {
		t.Fatalf("copy of copy: %s %v", stepIDs(r3.Case), err)
	}
	shell := mustParse(t, caseWith(`[`+shellStep+`]`))
	if _, err := Copy(shell, 0, 1, EditOptions{ConfirmHighRisk: true}); errorCode(err) != fault.CodeRefusedAction {
		t.Errorf("shell copy: %v", err)
	}
	if _, err := Copy(c, 0, 6, EditOptions{}); errorCode(err) != fault.CodeStepIndexOutOfRange {
		t.Errorf("range: %v", err)
	}
	// Copying a provider start breaks pairing (double start).
	paired := mustParse(t, caseWith(`[`+startRec+`,`+stopRec+`]`))
	if _, err := Copy(paired, 0, 1, EditOptions{}); errorCode(err) != fault.CodeProviderPairing {
		t.Errorf("pairing: %v", err)
	}
}

// Edits write the authoring form, which must parse back to the same case.
func TestEditOutputRoundTrip(t *testing.T) {
	t.Parallel()
	r, err := Copy(editCase(t), 0, 1, EditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := MarshalAuthoring(r.Case)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	again, err := MarshalAuthoring(back)
	if err != nil || string(again) != string(out) {
		t.Fatalf("round trip differs:\n%s\n%s", out, again)
	}
	if !strings.Contains(string(out), "\n  \"operationLog\": {\n") || !strings.HasSuffix(string(out), "}\n") {
		t.Errorf("authoring layout:\n%s", out)
	}
}

// No edit accepts a negative index; the error names the allowed range.
func TestEditsRefuseNegativeIndexes(t *testing.T) {
	t.Parallel()
	c := editCase(t)
	st := mustStep(t, `{"operationMethod":{"actionEnum":"BACK"}}`)
	for name, edit := range map[string]func() (*EditResult, error){
		"insert":    func() (*EditResult, error) { return Insert(c, -1, st, EditOptions{}) },
		"update":    func() (*EditResult, error) { return Update(c, -1, st, EditOptions{}) },
		"delete":    func() (*EditResult, error) { return Delete(c, -1) },
		"move from": func() (*EditResult, error) { return Move(c, -1, 0, EditOptions{}) },
		"move to":   func() (*EditResult, error) { return Move(c, 0, -2, EditOptions{}) },
		"copy from": func() (*EditResult, error) { return Copy(c, -3, 0, EditOptions{}) },
		"copy to":   func() (*EditResult, error) { return Copy(c, 0, -1, EditOptions{}) },
	} {
		_, err := edit()
		e := asError(t, err)
		if e.Code != fault.CodeStepIndexOutOfRange || e.Details["minimum"] != 0 {
			t.Errorf("%s: %s %v", name, e.Code, e.Details)
		}
	}
}

// A step an edit writes may not hold the redaction marker (case-validate
// would refuse the case): the error names its JSON path in the case; the
// same value elsewhere in a parameter name is fine.
func TestEditRefusesRedactedStep(t *testing.T) {
	t.Parallel()
	c := editCase(t)
	_, err := Update(c, 0, mustStep(t, `{"operationMethod":{"actionEnum":"SLEEP","operationParam":{"text":"[redacted]"}}}`), EditOptions{})
	var e *Error
	if !errors.As(err, &e) || e.Code != fault.CodeRedactedValue || e.StepIndex != 0 || e.Details["jsonPath"] != "$.operationLog.steps[0].operationMethod.operationParam.text" {
		t.Fatalf("update: %v", err)
	}
	_, err = Insert(c, 2, mustStep(t, `{"operationMethod":{"actionEnum":"BACK"},"note":"was [redacted] here"}`), EditOptions{})
	if !errors.As(err, &e) || e.Code != fault.CodeRedactedValue || e.StepIndex != 2 || e.Details["jsonPath"] != "$.operationLog.steps[2].note" {
		t.Fatalf("insert (an unknown field): %v", err)
	}
	if _, err := Insert(c, 2, mustStep(t, `{"operationMethod":{"actionEnum":"SLEEP","operationParam":{"text":"500"}}}`), EditOptions{}); err != nil {
		t.Fatal(err)
	}
}

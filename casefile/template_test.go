package casefile

import (
	"bytes"
	"errors"
	"testing"

	"github.com/solopi-dev/solopi/fault"
)

// case-template is solopi-ai's: one SLEEP 1000 step whose node is written
// null, the package as the label by default, and a file that parses back
// into the same case.
func TestTemplate(t *testing.T) {
	t.Parallel()
	c, err := Template("login", "com.example.app", "")
	if err != nil {
		t.Fatal(err)
	}
	if c.CaseName != "login" || c.TargetAppLabel != "com.example.app" || c.CaseDesc != templateDesc || len(c.Steps) != 1 {
		t.Fatalf("template %+v", c)
	}
	s := c.Steps[0]
	if s.Method.ActionEnum != "SLEEP" || *s.Method.Params["text"] != "1000" || s.StepID != "ai-step-001" || s.OperationID != "ai-login" {
		t.Fatalf("template step %+v", s)
	}
	b, err := MarshalImportFile(c)
	if err != nil {
		t.Fatal(err)
	}
	// The steps are a JSON string inside the file (operationLog).
	if !bytes.Contains(b, []byte(`\"operationNode\":null`)) {
		t.Fatalf("the step's node is not written null:\n%s", b)
	}
	back, err := Parse(b)
	if err != nil {
		t.Fatalf("the template does not parse back: %v\n%s", err, b)
	}
	again, err := MarshalImportFile(back)
	if err != nil || !bytes.Equal(again, b) {
		t.Fatalf("the template changed on a round trip (%v):\n%s\n%s", err, b, again)
	}
	if c, err := Template("login", "com.example.app", "Example"); err != nil || c.TargetAppLabel != "Example" {
		t.Fatalf("a given label: %+v %v", c, err)
	}
	for _, bad := range []struct{ name, pkg, code, field string }{
		{" ", "com.example.app", fault.CodeMissingCaseName, "caseName"},
		{"login", "example", fault.CodeMissingTargetPackage, "targetAppPackage"},
		{"login", "", fault.CodeMissingTargetPackage, "targetAppPackage"},
	} {
		_, err := Template(bad.name, bad.pkg, "")
		var e *Error
		if !errors.As(err, &e) || e.Code != bad.code || e.Field != bad.field {
			t.Errorf("Template(%q, %q): %v, want %s on %s", bad.name, bad.pkg, err, bad.code, bad.field)
		}
	}
}

// case-step-list --index selects one descriptor; an index outside the
// list, negative included, is step_index_out_of_range.
func TestSelectStep(t *testing.T) {
	t.Parallel()
	c, err := Template("login", "com.example.app", "")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := List(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := SelectStep(ds, 0)
	if err != nil || len(got) != 1 || got[0].StepID != "ai-step-001" || got[0].ActionEnum != "SLEEP" {
		t.Fatalf("SelectStep(0) = %+v %v", got, err)
	}
	for _, i := range []int{-1, 1, 99} {
		if _, err := SelectStep(ds, i); !errors.Is(err, &Error{Code: fault.CodeStepIndexOutOfRange}) {
			t.Errorf("SelectStep(%d): %v", i, err)
		}
	}
}

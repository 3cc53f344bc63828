package casefile

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/solopi-dev/solopi/fault"
	"testing"
)

func TestErrorMatching(t *testing.T) {
	t.Parallel()
	_, err := Parse([]byte(`{"caseName":x}`))
	wrapped := fmt.Errorf("case-validate: %w", err)
	if !errors.Is(wrapped, &Error{Code: fault.CodeInvalidCaseJSON}) || errors.Is(wrapped, &Error{Code: fault.CodeInvalidCase}) {
		t.Fatal("errors.Is must match on code")
	}
	if errorCode(wrapped) != fault.CodeInvalidCaseJSON || errorCode(errors.New("x")) != "" {
		t.Fatal("ErrorCode")
	}
	var syntax *json.SyntaxError
	if !errors.As(wrapped, &syntax) {
		t.Fatal("the JSON cause must stay reachable through Unwrap")
	}
}

func TestStepJSONAndDescribe(t *testing.T) {
	t.Parallel()
	var s Step
	if err := json.Unmarshal([]byte(`{"stepId":"x","operationMethod":{"actionEnum":"otherNode","operationParam":{"targetAction":"assertScreenshot","targetImage":"i"}},"operationNode":{"text":"t"}}`), &s); err != nil {
		t.Fatal(err)
	}
	d := Describe(s, 3)
	if d.ActionEnum != "OTHER_NODE" || d.ActionCode != "assertScreenshot" || *d.TargetAction != "assertScreenshot" || !d.RequiresNode || !d.AuthoringAllowed {
		t.Errorf("descriptor %+v", d)
	}
	s.Method.Params["targetAction"] = Str("mystery")
	if d := Describe(s, 0); d.AuthoringAllowed {
		t.Error("unknown provider must not be authorable")
	}
	if err := json.Unmarshal([]byte(`[]`), &s); errorCode(err) != fault.CodeInvalidStep {
		t.Errorf("non-object step: %v", err)
	}
}

func TestFingerprintNulls(t *testing.T) {
	t.Parallel()
	// All-null input hashes 11 0xFF bytes; distinct from empty strings.
	allNull := Fingerprint(FingerprintInput{})
	empty := ""
	zero := int64(0)
	allEmpty := Fingerprint(FingerprintInput{ID: &zero, CaseName: &empty, CaseDesc: &empty, TargetAppPackage: &empty,
		TargetAppLabel: &empty, RecordMode: &empty, AdvanceSettings: &empty, OperationLog: &empty,
		Priority: &zero, GmtCreate: &zero, GmtModify: &zero})
	if allNull == allEmpty || len(allNull) != 64 {
		t.Fatalf("null and empty must differ: %s %s", allNull, allEmpty)
	}
	// The length prefix counts UTF-8 bytes, not characters.
	a := Fingerprint(FingerprintInput{CaseName: Str("设置")})
	b := Fingerprint(FingerprintInput{CaseName: Str("设置x")})
	if a == b {
		t.Fatal("distinct names collide")
	}
}

// errorCode returns the code of a casefile error anywhere in err's chain, or "".
func errorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

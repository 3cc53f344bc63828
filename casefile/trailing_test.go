package casefile

import (
	"github.com/solopi-dev/solopi/fault"
	"strings"
	"testing"
)

// Every JSON document a case carries is one document: data after it (junk,
// a second closing brace, a second document) is refused wherever it is,
// as an error of that document's code, never silently dropped.
func TestTrailingDataIsRefused(t *testing.T) {
	t.Parallel()
	const step = `{"operationMethod":{"actionEnum":"BACK"}}`
	for _, tail := range []string{" junk", "}", " {}", "]", ","} {
		t.Run(strings.TrimSpace(tail), func(t *testing.T) {
			t.Parallel()
			if _, err := Parse([]byte(caseWith(`[`+step+`]`) + tail)); errorCode(err) != fault.CodeInvalidCaseJSON {
				t.Errorf("case file: %v", err)
			}
			opLog := strings.ReplaceAll(`{"steps":[`+step+`]}`+tail, `"`, `\"`)
			if _, err := Parse([]byte(`{"caseName":"c","operationLog":"` + opLog + `"}`)); errorCode(err) != fault.CodeInvalidOperationLog {
				t.Errorf("operationLog string: %v", err)
			}
			if _, err := ParseStep([]byte(step + tail)); errorCode(err) != fault.CodeInvalidStep {
				t.Errorf("step file: %v", err)
			}
			base := mustParse(t, caseWith(`[`+step+`]`))
			if _, err := SetRunningParams(base, []byte(`{"mode":"UNION","paramList":[{"k":"1"}]}`+tail)); errorCode(err) != fault.CodeInvalidRunningParams {
				t.Errorf("running params file: %v", err)
			}
			adv := strings.ReplaceAll(`{"version":35}`+tail, `"`, `\"`)
			c := mustParse(t, `{"caseName":"c","targetAppPackage":"p","advanceSettings":"`+adv+`","operationLog":{"steps":[`+step+`]}}`)
			if _, _, err := Normalize(c, NormalizeOptions{}); errorCode(err) != fault.CodeInvalidAdvanceSettings {
				t.Errorf("advanceSettings string: %v", err)
			}
		})
	}
}

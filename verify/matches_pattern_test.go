package verify

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/fault"
)

// A matches pattern Python 3.11 refuses is invalid_oracle; one it accepts
// that the evaluator cannot run exactly is unsupported_oracle.
func TestMatchesPatternRefusals(t *testing.T) {
	t.Parallel()
	for pattern, code := range map[string]string{
		`x(?i)y`:     fault.CodeInvalidOracle,
		`(?<=a+)b`:   fault.CodeInvalidOracle,
		`(?ai)(k)\1`: fault.CodeUnsupportedOracle,
		`a*+`:        "",
	} {
		q, _ := json.Marshal(pattern)
		req := strings.Replace(visionRequirement, `"expected":"1"}`, `"operator":"matches","expected":`+string(q)+`}`, 1)
		_, err := Compile(newDocument(decodeJSON(t, req)))
		if got := fault.CodeOf(err); got != code {
			t.Errorf("%s: %v, want %q", pattern, err, code)
		}
	}
}

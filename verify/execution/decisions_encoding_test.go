package execution

import (
	"testing"

	"github.com/solopi-dev/solopi/fault"
)

// A decisions file (or a managed assignment's decisions) escaping a lone
// surrogate or holding bytes that are not UTF-8 is refused before the
// phone, like a requirement.
func TestDecisionsEncoding(t *testing.T) {
	t.Parallel()
	plan := compileFixture(t, "counter-outcome-matrix")
	for _, doc := range []string{
		`{"hybrid-success":{"explore-increment":[{"type":"blocked","reason":"\ud800"}]}}`,
		"{\"hybrid-success\":{\"explore-increment\":[{\"type\":\"blocked\",\"reason\":\"\xc3\"}]}}",
	} {
		if _, err := parseDecisions([]byte(doc), plan); fault.CodeOf(err) != fault.CodeInvalidDecisions || fault.KindOf(err) != fault.Invalid {
			t.Errorf("%q: %v", doc, err)
		}
	}
}

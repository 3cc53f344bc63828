package casefile

import (
	"github.com/solopi-dev/solopi/fault"
	"testing"
)

// CheckEncoding is CheckJSON's encoding rules without its duplicate-key
// rule.
func TestCheckEncoding(t *testing.T) {
	t.Parallel()
	if err := CheckEncoding([]byte(`{"a":1,"a":2}`)); err != nil {
		t.Errorf("a repeated key: %v", err)
	}
	if err := CheckJSON([]byte(`{"a":1,"a":2}`)); err == nil {
		t.Error("CheckJSON lost its duplicate-key rule")
	}
	for _, doc := range []string{"{\"a\":\"\xff\"}", `{"a":"\ud800"}`, `{"\udc00":1}`} {
		if e := asError(t, CheckEncoding([]byte(doc))); e.Code != fault.CodeInvalidUTF8 {
			t.Errorf("%q: %v", doc, e)
		}
	}
}

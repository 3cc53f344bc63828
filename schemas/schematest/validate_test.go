package schematest

import (
	"github.com/solopi-dev/solopi/schemas"

	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// Raw is the embedded schema text (what `solopi schema NAME` prints); an
// unknown name is an error naming it.
func TestRaw(t *testing.T) {
	t.Parallel()
	b, err := schemas.Raw("error")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil || doc["$schema"] == nil {
		t.Fatalf("error schema %v: %.200s", err, b)
	}
	if _, err := schemas.Raw("no-such-output"); err == nil || !strings.Contains(err.Error(), "no-such-output") {
		t.Fatalf("unknown schema: %v", err)
	}
	if _, err := NewSet().Compile("no-such-output"); err == nil {
		t.Fatal("an unknown schema compiled")
	}
}

// recorder is a testing.TB whose Fatalf records the failure instead of
// ending the test, so that Validate's refusals can be checked.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
}

// Validate checks an output against its command's schema, and a handled
// error (success=false with an errorCode) against the error schema.
func TestValidateHelper(t *testing.T) {
	t.Parallel()
	errorObject := []byte(`{"success":false,"errorCode":"no_device","error":"no device"}`)
	for _, c := range []struct {
		name string
		data []byte
		fail string
	}{
		{"case-template", errorObject, ""},
		{"error", errorObject, ""},
		{"case-template", []byte(`{"success":false,"error":"no device"}`), "does not match schema case-template"},
		{"error", []byte(`{"success":false,"errorCode":"Bad Code","error":"x"}`), "does not match schema error"},
		{"error", []byte(`{"success":false,"errorCode":"x","error":"y"} {}`), "more than one JSON value"},
		{"error", []byte(`{`), "not JSON"},
	} {
		r := &recorder{TB: t}
		Validate(r, c.name, c.data)
		switch {
		case c.fail == "" && r.failed != "":
			t.Errorf("Validate(%s, %s) failed: %s", c.name, c.data, r.failed)
		case c.fail != "" && !strings.Contains(r.failed, c.fail):
			t.Errorf("Validate(%s, %s) = %q, want a failure with %q", c.name, c.data, r.failed, c.fail)
		}
	}
}

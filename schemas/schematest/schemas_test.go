package schematest

import (
	"testing"

	"github.com/solopi-dev/solopi/schemas"
)

func TestEverySchemaCompiles(t *testing.T) {
	t.Parallel()
	set := NewSet()
	if len(schemas.Names()) < 3 {
		t.Fatalf("only %d schemas embedded", len(schemas.Names()))
	}
	for _, n := range schemas.Names() {
		if _, err := set.Compile(n); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
}

func TestErrorSchema(t *testing.T) {
	t.Parallel()
	set := NewSet()
	good := `{"success":false,"errorCode":"no_device","error":"no device","userActionRequired":"plug it in"}`
	if err := set.ValidateBytes("error", []byte(good)); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		`{"success":false,"error":"x"}`,
		`{"success":false,"errorCode":"Not-Snake","error":"x"}`,
		`{"success":true,"errorCode":"x","error":"x"}`,
		`{"success":false,"errorCode":"x","error":""}`,
		`{"success":false,"errorCode":"x","error":"y"} {}`,
		`{"success":false,"errorCode":"x","error":"y"}}`,
		`{"success":false,"errorCode":"x","error":"y"} junk`,
		`not json`,
	} {
		if err := set.ValidateBytes("error", []byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

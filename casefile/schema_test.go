package casefile

import (
	"os"
	"testing"
)

// schemaURL is the $id of the case schema.
const schemaURL = "https://solopi.dev/schemas/solopi-case.schema.json"

// schema returns case.schema.json, the JSON Schema (draft 2020-12) for
// SoloPi case files in both the exported and the authoring form. The
// binary checks shape with CheckShape instead (no schema engine at start
// up); the tests prove the two agree.
func schema(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("case.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

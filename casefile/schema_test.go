package casefile

import (
	"os"
	"testing"
)

// SchemaURL is the $id of the case schema.
const SchemaURL = "https://solopi.dev/schemas/solopi-case.schema.json"

// Schema returns case.schema.json, the JSON Schema (draft 2020-12) for
// SoloPi case files in both the exported and the authoring form. The
// binary checks shape with CheckShape instead (no schema engine at start
// up); the tests prove the two agree.
func Schema(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("case.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

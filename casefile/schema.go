package casefile

import _ "embed"

// SchemaURL is the $id of the case schema.
const SchemaURL = "https://solopi.dev/schemas/solopi-case.schema.json"

// schemaJSON is the JSON Schema (draft 2020-12) for SoloPi case files in
// both the exported and the authoring form.
//
//go:embed case.schema.json
var schemaJSON []byte

// Schema returns a copy of the embedded case JSON Schema. Compile it with
// assertion of content keywords enabled to also check operationLog strings.
func Schema() []byte { return append([]byte(nil), schemaJSON...) }

package verify

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/schemas/schematest"
)

// schemaRefuses are the refusals a JSON Schema can express: a requirement
// the compiler refuses with one of these codes is refused by
// schemas/requirement.schema.json too. (The others need the whole document:
// coverage, references, bindings, uniqueness after expansion, routes.)
var schemaRefuses = map[string]bool{
	fault.CodeUnsupportedSchema: true, fault.CodeUnsupportedAction: true, fault.CodeInvalidAction: true,
	fault.CodeInvalidSelector: true, fault.CodeInvalidBudget: true, fault.CodeInvalidStep: true, fault.CodeDuplicateAction: true,
}

// The requirement schema agrees with the compiler on solopi-ai's cases and
// the committed requirements: it accepts every requirement that compiles
// and refuses what it can express of the rest.
func TestRequirementSchemaAgreesWithTheCompiler(t *testing.T) {
	t.Parallel()
	sch, err := schematest.NewSet().Compile("requirement")
	if err != nil {
		t.Fatal(err)
	}
	var cases []requirementCase
	b, err := os.ReadFile("testdata/requirement-cases.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"testdata/solopi-ai/counter-success.json", "testdata/solopi-ai/counter-outcome-matrix.json", "testdata/vision-requirement.json", "../cmd/solopi/demodata/counter-smoke.json"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, requirementCase{Name: f, Requirement: b})
	}
	// What a schema cannot see: JSON Schema counts 1.0 as an integer.
	blind := map[string]bool{"budget-float": true}
	for _, c := range cases {
		if blind[c.Name] {
			continue
		}
		doc, err := ParseRequirement(c.Requirement)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		_, cerr := Compile(doc)
		verr := sch.Validate(doc.Tree)
		switch {
		case cerr == nil && verr != nil:
			t.Errorf("%s compiles but the schema refuses it: %v", c.Name, verr)
		case cerr != nil && schemaRefuses[c.Code] && verr == nil:
			t.Errorf("%s is refused with %s but the schema accepts it", c.Name, c.Code)
		}
	}
}

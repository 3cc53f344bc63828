package managedcmd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/solopi-dev/solopi/verify"
)

// verifyFixtures are solopi-ai's requirement fixtures.
const verifyFixtures = "../../../../verify/testdata/solopi-ai/"

// fixturePlan compiles the named fixture requirement into a plan file, as
// verify-compile does.
func fixturePlan(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(verifyFixtures, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := verify.ParseRequirement(b)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := verify.Compile(doc)
	if err != nil {
		t.Fatal(err)
	}
	data, err := verify.MarshalPlan(plan)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

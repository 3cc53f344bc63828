package cmdtest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/solopi-dev/solopi/verify"
)

// Fixtures is the directory of solopi-ai's requirement fixtures
// (verify/testdata/solopi-ai).
func Fixtures() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "verify", "testdata", "solopi-ai")
}

// CompilePlan compiles a requirement into a plan file, as verify-compile
// does.
func CompilePlan(t testing.TB, requirement []byte) string {
	t.Helper()
	doc, err := verify.ParseRequirement(requirement)
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
	return WriteFile(t, "plan.json", data)
}

// FixturePlan compiles the named fixture requirement into a plan file.
func FixturePlan(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Fixtures(), name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return CompilePlan(t, b)
}

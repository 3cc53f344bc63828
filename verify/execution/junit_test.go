package execution

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/artifacts"
)

func TestJUnitOfTheMatrix(t *testing.T) {
	t.Parallel()
	out := runFixture(t, "counter-outcome-matrix", true, &counterPhone{})
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := writeJUnit(path, out.Report, out.redact); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var root artifacts.XMLTestsuites
	if err := xml.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	if len(root.Suites) != 5 {
		t.Fatalf("suites = %d, want one per scenario", len(root.Suites))
	}
	// 5 checkpoints + 5 cleanup testcases; failed: product-failure and
	// agent-false-done checkpoints, cleanup-failure's cleanup; skipped:
	// uncovered-checkpoint.
	if root.Tests != 10 || root.Failures != 3 || root.Skipped != 1 {
		t.Errorf("tests %d failures %d skipped %d", root.Tests, root.Failures, root.Skipped)
	}
	var msg string
	for _, s := range root.Suites {
		for _, c := range s.Cases {
			if s.Name == "agent-false-done" && c.Failure != nil {
				msg = c.Failure.Message
			}
		}
	}
	for _, want := range []string{"oracle_mismatch", "counter_value", "equals", `"1"`, `actual "0"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("failure message %q lacks %s", msg, want)
		}
	}
}

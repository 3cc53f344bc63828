package cmdtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/verify"
)

// SlowPlan is a plan whose one replay waits n times 5 s of device time
// before its checkpoint.
func SlowPlan(t testing.TB, n int) string {
	t.Helper()
	var steps []string
	for i := range n {
		steps = append(steps, fmt.Sprintf(`{"id":"wait-%d","action":{"type":"wait","durationMs":5000}},`, i))
	}
	req := `{"id":"slow","title":"slow","targetAppPackage":"com.example.counter","acceptanceCriteria":["the counter shows 0"],
	 "scenarios":[{"id":"slow-replay","acceptanceCriteria":["AC-001"],"steps":[` + strings.Join(steps, "") +
		`{"id":"reset","action":{"type":"click","selector":{"resourceId":"com.example.counter:id/reset_button"}}}],
	  "checkpoints":[{"id":"zero","afterStep":"reset","oracle":{"type":"ui","selector":{"resourceId":"com.example.counter:id/counter_value"},"expected":"0"}}]}]}`
	return CompilePlan(t, []byte(req))
}

// ReadVerifyReport validates and decodes a verification report.json.
func ReadVerifyReport(t testing.TB, path string) *verify.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, "verification-report", b)
	var r verify.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// CheckInterruptedReport checks verify-run's summary m of an interrupted
// run: a partial report marked interrupted, the active segment not_tested
// (interrupted).
func CheckInterruptedReport(t testing.TB, m map[string]any, segment string) *verify.Report {
	t.Helper()
	if m["interrupted"] != true || m["success"] != false {
		t.Fatalf("summary %v", m)
	}
	rep := ReadVerifyReport(t, m["report"].(string))
	if !rep.Interrupted {
		t.Error("the report is not marked interrupted")
	}
	found := false
	for _, s := range rep.Scenarios {
		for _, seg := range s.Segments {
			if seg.SegmentID == segment {
				found = true
				if seg.State != verify.NotTested || seg.Reason != verify.ReasonInterrupted {
					t.Errorf("segment %s is %s/%s, want not_tested/interrupted", segment, seg.State, seg.Reason)
				}
			}
		}
	}
	if !found {
		t.Errorf("no segment %s in the report", segment)
	}
	return rep
}

// EachFileUnder calls check with every file under root.
func EachFileUnder(t testing.TB, root string, check func(path string, b []byte)) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil {
			check(path, b)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// ManagedFiles are a counter-success plan, solopi-ai's fixture matrix of
// one agent target and a decisions file, for managed-submit.
func ManagedFiles(t testing.TB) (plan, matrix, decisions string) {
	t.Helper()
	plan = FixturePlan(t, "counter-success")
	matrix = WriteFile(t, "matrix.json", []byte(`[{"id":"android-agent","replicas":1,"selector":{"platform":"android","capabilities":["agent","verification"]}}]`))
	decisions = WriteFile(t, "decisions.json", []byte(`{"explore":[{"action":"done"}]}`))
	return plan, matrix, decisions
}

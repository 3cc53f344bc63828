package execution

import (
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
)

func TestJUnitOfTheMatrix(t *testing.T) {
	t.Parallel()
	out := runFixture(t, "counter-outcome-matrix", true, &counterPhone{})
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := writeJUnit(path, out.Report, nil, out.EventsPath, out.Timeline, out.redact); err != nil {
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

// Each testcase's time is the time of the segments that judge it, read
// from the segment_started and segment_finished events: here every replay
// the phone runs takes 1.5 s of the run's clock, and nothing else does.
func TestJUnitTimesFromTheSegmentEvents(t *testing.T) {
	t.Parallel()
	plan := compileFixture(t, "counter-success")
	rememberCases(plan)
	clk := clock.NewFake(time.UnixMilli(1_700_000_000_000))
	phone := &counterPhone{onRun: func(context.Context, RunRequest) error {
		clk.Advance(1500 * time.Millisecond)
		return nil
	}}
	e := &Engine{Phones: []Ports{{Runner: phone, Agent: phone}}, Clock: clk}
	out, err := e.Run(context.Background(), plan, filepath.Join(t.TempDir(), "run"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := writeJUnit(path, out.Report, plan, out.EventsPath, out.Timeline, out.redact); err != nil {
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
	got := map[string]string{}
	for _, s := range root.Suites {
		for _, c := range s.Cases {
			got[c.Name] = c.Time
		}
	}
	// Both checkpoints are judged by the one test segment; the cleanup
	// testcase is the cleanup segment.
	want := map[string]string{"value-is-one": "1.500", "status-is-counting": "1.500", "cleanup": "1.500"}
	if len(got) != len(want) {
		t.Fatalf("testcases %v", got)
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("testcase %s time=%q, want %q", name, got[name], w)
		}
	}
	// A run whose events file is gone is an error, not zero times.
	if err := writeJUnit(path+"2", out.Report, plan, out.EventsPath+".missing", out.Timeline, out.redact); fault.CodeOf(err) != fault.CodeArtifactsIOFailed {
		t.Fatalf("missing events: %v", err)
	}
}

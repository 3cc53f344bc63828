package replay

import (
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
)

// twentyCases imports 20 cases; every third one fails.
func twentyCases(p *simPhone) []string {
	var names []string
	for i := 1; i <= 20; i++ {
		n := fmt.Sprintf("case %02d/支付", i)
		steps := twoSteps
		if i%3 == 0 {
			steps = failSteps
		}
		p.addCase(n, steps)
		names = append(names, n)
	}
	return names
}

func batchOpts(cases []string, root string, cont bool) BatchOptions {
	ro := fastRun("", root)
	return BatchOptions{Run: ro, Cases: cases, ContinueOnFailure: cont}
}

// junitOf writes and re-reads the batch's JUnit report and checks it
// against the JUnit element and attribute rules: counters on both levels
// equal the children, at most one of failure/error/skipped per testcase,
// numeric times, unique testcase names, attachments that exist.
func junitOf(t *testing.T, b *BatchReport) artifacts.XMLTestsuites {
	t.Helper()
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := artifacts.WriteJUnit(path, false, "solopi", b.JUnitSuite("solopi.run-batch", testExit)); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(raw), xml.Header) {
		t.Fatalf("no XML declaration")
	}
	var doc artifacts.XMLTestsuites
	if err := xml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("junit is not well-formed: %v", err)
	}
	if len(doc.Suites) != 1 {
		t.Fatalf("suites %d", len(doc.Suites))
	}
	s := doc.Suites[0]
	var fails, errs, skips int
	names := map[string]bool{}
	for _, tc := range s.Cases {
		n := 0
		if tc.Failure != nil {
			n++
			fails++
			if tc.Failure.Message == "" || tc.Failure.Type == "" {
				t.Fatalf("failure without message/type: %+v", tc)
			}
		}
		if tc.Error != nil {
			n++
			errs++
		}
		if tc.Skipped != nil {
			n++
			skips++
		}
		if n > 1 {
			t.Fatalf("testcase %s has %d outcome elements", tc.Name, n)
		}
		if names[tc.Name] {
			t.Fatalf("duplicate testcase name %s", tc.Name)
		}
		names[tc.Name] = true
		if !strings.HasPrefix(tc.Classname, "solopi.") {
			t.Fatalf("classname %s", tc.Classname)
		}
		var secs float64
		if _, err := fmt.Sscanf(tc.Time, "%g", &secs); err != nil || secs < 0 {
			t.Fatalf("time %q", tc.Time)
		}
		if tc.SystemOut != nil {
			for _, line := range strings.Split(tc.SystemOut.Text, "\n") {
				if p, ok := strings.CutPrefix(line, "[[ATTACHMENT|"); ok {
					p = strings.TrimSuffix(p, "]]")
					if _, err := os.Stat(p); err != nil || !filepath.IsAbs(p) {
						t.Fatalf("attachment %s: %v", p, err)
					}
				}
			}
		}
	}
	if s.Tests != len(s.Cases) || s.Failures != fails || s.Errors != errs || s.Skipped != skips {
		t.Fatalf("suite counters %+v disagree with cases (f%d e%d s%d)", s, fails, errs, skips)
	}
	if doc.Tests != s.Tests || doc.Failures != s.Failures || doc.Errors != s.Errors || doc.Skipped != s.Skipped {
		t.Fatalf("root counters disagree")
	}
	return doc
}

// aggregateCounts derives JUnit-comparable counts from the aggregate JSON
// and the sub-run reports.
func aggregateCounts(t *testing.T, b *BatchReport) (tests, failures, errors, skipped int) {
	skipped = len(b.Payload.Skipped)
	tests = skipped
	for i, r := range b.Payload.Results {
		tests++
		switch {
		case b.Children[i].Report.Err == nil:
		case r.ErrorCode == fault.CodeReplayFailed:
			failures++
		default:
			errors++
		}
	}
	return
}

func TestRunBatchTwentyMixedStopsAtFirstFailure(t *testing.T) {
	t.Parallel()
	ph := newSimPhone(t)
	names := twentyCases(ph)
	root := t.TempDir()
	b := RunBatch(context.Background(), ph.d, batchOpts(names, root, false))
	p := b.Payload
	if kindOf(b.Err) != fault.Failed || p.Success || p.CompletedRuns != 3 || !p.StoppedEarly || p.RequestedRuns != 20 {
		t.Fatalf("kind %v payload %+v", kindOf(b.Err), p)
	}
	// Only the runs that ran are results; the other 17 are skipped and
	// not failures (solopi-ai's counting).
	res, skipped := p.Results, p.Skipped
	if len(res) != 3 || *res[2].State != "failed" || len(skipped) != 17 || skipped[0].Index != 4 || *p.FailedRuns != 1 || b.Children[19].Report != nil {
		t.Fatalf("results %v skipped %v", res, skipped)
	}
	seen := map[string]bool{}
	for _, r := range res[:3] {
		if r.RunID == nil || seen[*r.RunID] {
			t.Fatalf("sub-runs must have distinct runIds: %v", res[:3])
		}
		seen[*r.RunID] = true
	}
	// Upstream layout: ROOT/batch-<id>/NNN-<sanitized case>.
	sub := filepath.Join(root, "batch-"+b.BatchID, "003-case-03")
	if _, err := os.Stat(filepath.Join(sub, ArtifactResult)); err != nil {
		t.Fatalf("sub-run artifacts: %v", err)
	}
	doc := junitOf(t, b)
	tt, ff, ee, ss := aggregateCounts(t, b)
	s := doc.Suites[0]
	if s.Tests != tt || s.Failures != ff || s.Errors != ee || s.Skipped != ss || ff != 1 || ss != 17 {
		t.Fatalf("junit %+v vs aggregate t%d f%d e%d s%d", s, tt, ff, ee, ss)
	}
}

func TestRunBatchTwentyMixedContinueOnFailure(t *testing.T) {
	t.Parallel()
	ph := newSimPhone(t)
	names := twentyCases(ph)
	b := RunBatch(context.Background(), ph.d, batchOpts(names, t.TempDir(), true))
	p := b.Payload
	if kindOf(b.Err) != fault.Failed || p.CompletedRuns != 20 || p.StoppedEarly || *p.FailedRuns != 6 {
		t.Fatalf("kind %v payload %+v", kindOf(b.Err), p)
	}
	doc := junitOf(t, b)
	tt, ff, ee, ss := aggregateCounts(t, b)
	s := doc.Suites[0]
	if s.Tests != 20 || s.Tests != tt || s.Failures != ff || s.Errors != ee || s.Skipped != ss || ff != 6 || ss != 0 {
		t.Fatalf("junit %+v vs aggregate t%d f%d e%d s%d", s, tt, ff, ee, ss)
	}
	// Every failed testcase names the exception step.
	for _, tc := range s.Cases {
		if tc.Failure != nil && !strings.Contains(tc.Failure.Text, "exceptionStepId: ai-step-002") {
			t.Fatalf("failure text %q", tc.Failure.Text)
		}
	}
}

func TestRunBatchAllPassAndInfraExitWins(t *testing.T) {
	t.Parallel()
	ph := newSimPhone(t)
	ph.addCase("a", twoSteps)
	ph.addCase("b", twoSteps)
	b := RunBatch(context.Background(), ph.d, batchOpts([]string{"a", "b", "a"}, "", false))
	if kindOf(b.Err) != passed || !b.Payload.Success || b.Payload.FailedRuns != nil {
		t.Fatalf("all pass: %d %+v", kindOf(b.Err), b.Payload)
	}
	// A protocol anomaly (exit 4) after a business failure (exit 2): the
	// first child exit that is not 0 or 2 decides.
	ph.addCase("c", failSteps)
	if err := ph.dev.AddAnswerFault(sim.AnswerFault{Action: "harness", Query: map[string]string{"type": "status"},
		When: map[string]any{"caseName": "b", "state": "passed"}, Set: map[string]any{"results": []any{}}}); err != nil {
		t.Fatal(err)
	}
	b = RunBatch(context.Background(), ph.d, batchOpts([]string{"c", "b"}, "", true))
	if kindOf(b.Err) != fault.Transport {
		t.Fatalf("kind %v", kindOf(b.Err))
	}
}

func TestRunBatchInterruptCancelsActiveThenWritesPartial(t *testing.T) {
	t.Parallel()
	ph := newSimPhone(t)
	for _, n := range []string{"a", "c", "d"} {
		ph.addCase(n, twoSteps)
	}
	ph.addCase("b", hangSteps)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ph.onStatus(func(r runAnswer, n int) {
		if r.CaseName == "b" && r.State == "running" && n == 2 {
			cancel()
		}
	})
	root := t.TempDir()
	b := RunBatch(ctx, ph.d, batchOpts([]string{"a", "b", "c", "d"}, root, true))
	p := b.Payload
	if kindOf(b.Err) != fault.Interrupted || p.ErrorCode != fault.CodeBatchInterrupted || p.CompletedRuns != 2 {
		t.Fatalf("kind %v payload %+v", kindOf(b.Err), p)
	}
	res := p.Results
	if len(res) != 2 || *res[0].State != "passed" || kindOf(b.Children[1].Report.Err) != fault.Interrupted || len(p.Skipped) != 2 {
		t.Fatalf("results %v", res)
	}
	// The active sub-run was cancelled by its own runId before returning.
	runB := *res[1].RunID
	if ph.mutations("type=cancel&runId="+runB) != 1 || ph.status().State != "cancelled" {
		t.Fatalf("sub-run not cancelled: %v", ph.dev.Mutations())
	}
	if _, err := os.Stat(filepath.Join(root, "batch-"+b.BatchID, "002-b", artifacts.ManifestName)); err != nil {
		t.Fatalf("interrupted sub-run evidence: %v", err)
	}
	doc := junitOf(t, b)
	if s := doc.Suites[0]; s.Skipped != 2 || s.Errors != 1 || s.Tests != 4 {
		t.Fatalf("junit %+v", s)
	}
}

func TestRunBatchTimeoutStopsAfterCancel(t *testing.T) {
	t.Parallel()
	ph := newSimPhone(t)
	ph.addCase("a", hangSteps)
	ph.addCase("b", twoSteps)
	o := batchOpts([]string{"a", "b"}, "", true)
	o.Run.RunTimeout = 300 * time.Millisecond
	b := RunBatch(context.Background(), ph.d, o)
	res := b.Payload.Results
	if kindOf(b.Err) != fault.Timeout || b.Payload.ErrorCode != fault.CodeBatchRunTimeout || len(res) != 1 || len(b.Payload.Skipped) != 1 {
		t.Fatalf("kind %v payload %+v", kindOf(b.Err), b.Payload)
	}
	if ph.mutations("type=cancel&runId="+*res[0].RunID) != 1 {
		t.Fatalf("timed-out sub-run not cancelled")
	}
}

func TestValidateBatch(t *testing.T) {
	t.Parallel()
	if err := ValidateBatch(BatchOptions{}); fault.From(err).Code != fault.CodeNoCases {
		t.Fatalf("no cases: %v", err)
	}
	if err := ValidateBatch(BatchOptions{Cases: []string{"a", " "}}); fault.KindOf(err) != fault.Invalid {
		t.Fatalf("blank case: %v", err)
	}
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	o := BatchOptions{Cases: []string{"a"}}
	o.Run.ArtifactsDir = file
	if err := ValidateBatch(o); fault.From(err).Code != fault.CodeUnsafeArtifactPath {
		t.Fatalf("root is a file: %v", err)
	}
}

func TestRunJUnitCaseNoWaitIsSkipped(t *testing.T) {
	t.Parallel()
	ph := newSimPhone(t)
	ph.addCase("a", hangSteps)
	o := fastRun("a", "")
	o.NoWait = true
	rep := RunReplay(context.Background(), ph.d, o)
	tc := RunJUnitCase(rep, "a", 0)
	if kindOf(rep.Err) != passed || tc.Skipped == nil || tc.Failure != nil || tc.Error != nil {
		t.Fatalf("kind %v case %+v", kindOf(rep.Err), tc)
	}
}

// Progress events place every sub-run in its batch (index, total, case),
// so a display can show one updating line; the run's state changes come
// as events too.
func TestRunBatchProgressEvents(t *testing.T) {
	t.Parallel()
	ph := newSimPhone(t)
	ph.addCase("a", twoSteps)
	ph.addCase("b", twoSteps)
	var mu sync.Mutex
	var events []device.Event
	o := batchOpts([]string{"a", "b"}, "", false)
	o.Run.Progress = func(e device.Event) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	}
	if b := RunBatch(context.Background(), ph.d, o); b.Err != nil {
		t.Fatalf("batch: %v", b.Err)
	}
	lines, claimed := 0, 0
	for _, e := range events {
		want := map[int]string{1: "a", 2: "b"}[e.Index]
		if e.Total != 2 || want == "" || e.Case != want {
			t.Fatalf("event outside its sub-run: %+v", e)
		}
		if e.Phase == "run" && e.Message == fmt.Sprintf("[%d/2] %s", e.Index, e.Case) {
			lines++
		}
		if e.Phase == "claimed" && e.RunID != "" && e.State != "" {
			claimed++
		}
	}
	if lines != 2 || claimed != 2 {
		t.Fatalf("events %+v", events)
	}
}

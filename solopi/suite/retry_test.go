package suite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/history"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/suitereport"
)

// fail-replays count 1 with one retry: the case is flaky (never passed),
// both attempts keep their own evidence, the first failure's screenshot is
// attached, exit 0 — and 2 with FailOnFlaky. A case that fails every time
// is failed after its retry.
func TestFlakyAndFailedCases(t *testing.T) {
	t.Parallel()
	r := newRig(t, 1, false)
	ctx := context.Background()
	dev := r.devs[0]
	if err := dev.App.FailReplays("login-ok", 1); err != nil {
		t.Fatal(err)
	}
	if err := dev.App.FailReplays("broken", 5); err != nil {
		t.Fatal(err)
	}
	o := r.options([]Item{{Name: "login-ok", Case: caseOf(t, "login-ok", 100)}, {Name: "broken", Case: caseOf(t, "broken", 100)}, {Name: "steady", Case: caseOf(t, "steady", 100)}})
	o.Retries = 1
	o.ArtifactsRoot = t.TempDir()
	o.History = newHistory(t)
	rep, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]suitereport.Case{}
	for _, c := range rep.Cases {
		by[c.Name] = c
	}
	fl := by["login-ok"]
	if fl.Verdict != suitereport.Flaky || len(fl.Attempts) != 2 || fl.Attempts[0].Verdict != suitereport.Failed || fl.Attempts[1].Verdict != suitereport.Passed {
		t.Fatalf("login-ok %+v", fl)
	}
	first, second := fl.Attempts[0], fl.Attempts[1]
	if first.Error != "injected failure" || first.ErrorCode != "replay_failed" || first.ExceptionStep == nil || *first.ExceptionStep != 0 || first.ExceptionStepID != "wait" {
		t.Fatalf("first attempt %+v", first)
	}
	if first.EvidenceDir == second.EvidenceDir || filepath.Base(first.EvidenceDir) != "attempt-1" || filepath.Base(second.EvidenceDir) != "attempt-2" {
		t.Fatalf("evidence %s, %s", first.EvidenceDir, second.EvidenceDir)
	}
	shot := filepath.Join(first.EvidenceDir, "screen.png")
	if !contains(first.Attachments, shot) {
		t.Fatalf("attachments %v", first.Attachments)
	}
	for _, a := range fl.Attempts {
		m, err := os.ReadFile(filepath.Join(a.EvidenceDir, artifacts.ManifestName))
		if err != nil || !strings.Contains(string(m), a.RunID) {
			t.Fatalf("attempt %d manifest: %v", a.Number, err)
		}
	}
	if m, _ := os.ReadFile(filepath.Join(first.EvidenceDir, artifacts.ManifestName)); !strings.Contains(string(m), `"errorCode": "replay_failed"`) {
		t.Fatalf("the first failure's evidence was overwritten: %s", m)
	}
	br := by["broken"]
	if br.Verdict != suitereport.Failed || len(br.Attempts) != 2 {
		t.Fatalf("broken %+v", br)
	}
	if rep.Counts.Flaky != 1 || rep.Counts.Failed != 1 || rep.Counts.Passed != 1 {
		t.Fatalf("counts %+v", rep.Counts)
	}
	if got := outcome.ExitOf(rep.Failure()); got != 2 {
		t.Fatalf("exit %d with a failed case", got)
	}
	// The JUnit: flakyFailure for login-ok, failure + rerunFailure for
	// broken, with the first failure's screenshot attached.
	doc := readJUnit(t, rep)
	cases := map[string]artifacts.XMLTestcase{}
	for _, c := range doc.Suites[0].Cases {
		cases[c.Name] = c
	}
	if c := cases["login-ok"]; c.Failure != nil || len(c.FlakyFailures) != 1 || !strings.Contains(c.SystemOut.Text, "[[ATTACHMENT|"+shot+"]]") {
		t.Fatalf("junit login-ok %+v", c)
	}
	if c := cases["broken"]; c.Failure == nil || len(c.RerunFailures) != 1 {
		t.Fatalf("junit broken %+v", c)
	}
	// History: every attempt, the flaky run counted as flaky.
	sums, err := o.History.Summaries(ctx, history.Query{Cases: []string{"login-ok"}})
	if err != nil || len(sums) != 1 || sums[0].Flaky != 1 || sums[0].Attempts != 2 {
		t.Fatalf("history %+v %v", sums, err)
	}

	// Only the flaky case now: exit 0, or 2 with FailOnFlaky.
	for _, failOnFlaky := range []bool{false, true} {
		if err := dev.App.FailReplays("login-ok", 1); err != nil {
			t.Fatal(err)
		}
		o := r.options([]Item{{Name: "login-ok", Case: caseOf(t, "login-ok", 100)}})
		o.Retries, o.FailOnFlaky = 1, failOnFlaky
		rep, err := Run(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if failOnFlaky {
			want = 2
		}
		if rep.Counts.Flaky != 1 || outcome.ExitOf(rep.Failure()) != want {
			t.Fatalf("fail-on-flaky %v: counts %+v exit %d", failOnFlaky, rep.Counts, outcome.ExitOf(rep.Failure()))
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

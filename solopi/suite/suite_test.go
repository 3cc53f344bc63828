package suite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/history"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/solopi/replay"
	"github.com/solopi-dev/solopi/suitereport"
)

// Twelve case files on four phones: every case passes once, each phone
// takes cases from the one queue, every attempt has its evidence, one
// JUnit suite per phone, one history row per attempt. A second run finds
// the cases in place (nothing imported again) and starts the longest first.
func TestSuiteAcrossFourPhones(t *testing.T) {
	t.Parallel()
	r := newRig(t, 4, false)
	ctx := context.Background()
	its := items(t, "reg", 1000, 3000, 500, 2000, 1500, 2500, 800, 1200, 2200, 600, 1800, 2800)
	o := r.options(its)
	o.ArtifactsRoot = t.TempDir()
	o.History = newHistory(t)
	rep, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if f := rep.Failure(); f != nil || rep.Counts.Passed != 12 || rep.Counts.Attempts != 12 {
		t.Fatalf("failure %v, counts %+v", f, rep.Counts)
	}
	for _, d := range rep.Devices {
		if !d.Usable || len(d.Timeline) == 0 || d.Model == "" || d.AndroidVersion == "" {
			t.Errorf("phone %+v", d)
		}
	}
	for _, c := range rep.Cases {
		a := c.Attempts[0]
		if c.Fingerprint == "" || a.RunID == "" || a.DurationMs <= 0 {
			t.Errorf("case %+v", c)
		}
		want := filepath.Join(rep.ArtifactsDir, c.Name, "attempt-1")
		if a.EvidenceDir != want {
			t.Errorf("%s evidence %s, want %s", c.Name, a.EvidenceDir, want)
		}
		if _, err := os.Stat(filepath.Join(want, artifacts.ManifestName)); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(rep.ArtifactsDir, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, "suite-report", b)
	doc := readJUnit(t, rep)
	if len(doc.Suites) != 4 || doc.Tests != 12 || doc.Failures+doc.Errors+doc.Skipped != 0 {
		t.Fatalf("junit %d suites, %d tests", len(doc.Suites), doc.Tests)
	}
	sums, err := o.History.Summaries(ctx, history.Query{})
	if err != nil || len(sums) != 12 {
		t.Fatalf("history %d cases %v", len(sums), err)
	}
	// Again: a phone that holds a case keeps it (no import: same case
	// id); the queue may give it to another phone, which imports it.
	before := caseIDs(t, r, its)
	o.ArtifactsRoot = t.TempDir()
	rep2, err := Run(ctx, o)
	if err != nil || outcome.ExitOf(rep2.Failure()) != 0 {
		t.Fatalf("second run: %v %v", err, rep2.Failure())
	}
	after := caseIDs(t, r, its)
	for k, id := range before {
		if after[k] != id {
			t.Errorf("%s was imported again: id %d -> %d", k, id, after[k])
		}
	}
}

func caseIDs(t *testing.T, r *rig, its []Item) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, d := range r.local {
		for _, it := range its {
			dc, err := replay.GetCase(context.Background(), d, it.Name)
			if err == nil {
				out[d.Serial()+"/"+it.Name] = dc.ID
			}
		}
	}
	return out
}

// The queue starts the longest cases first (the history's medians), the
// ones without history after them in suite order.
func TestQueueStartsTheLongestFirst(t *testing.T) {
	t.Parallel()
	r := newRig(t, 1, false)
	ctx := context.Background()
	its := items(t, "ord", 100, 100, 100, 100, 100)
	h := newHistory(t)
	for name, ms := range map[string]int{"ord-02": 2000, "ord-04": 9000, "ord-05": 5000} {
		if err := h.Append(ctx, history.Record{BatchID: "before", CaseName: name, Serial: "sim-0001", Attempt: 1, Verdict: suitereport.Passed,
			Duration: time.Duration(ms) * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
	}
	o := r.options(its)
	o.History = h
	rep, err := Run(ctx, o)
	if err != nil || rep.Failure() != nil {
		t.Fatalf("%v %v", err, rep.Failure())
	}
	var order []string
	for _, s := range rep.Devices[0].Timeline {
		order = append(order, s.Case)
	}
	if got := strings.Join(order, " "); got != "ord-04 ord-05 ord-02 ord-01 ord-03" {
		t.Fatalf("order %s", got)
	}
	// The report keeps the suite order.
	if rep.Cases[0].Name != "ord-01" || rep.Cases[4].Name != "ord-05" {
		t.Fatalf("report order %s … %s", rep.Cases[0].Name, rep.Cases[4].Name)
	}
}

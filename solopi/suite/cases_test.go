package suite

import (
	"context"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/replay"
	"github.com/solopi-dev/solopi/suitereport"
)

func importOn(t *testing.T, r *rig, serial string, it Item) int64 {
	t.Helper()
	if _, err := replay.ImportCase(context.Background(), r.localOf(serial), it.Case, replay.ImportOptions{Replace: true, Timeout: 15 * time.Second, PollInterval: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	return caseID(t, r, serial, it.Name)
}

func caseID(t *testing.T, r *rig, serial, name string) int64 {
	t.Helper()
	dc, err := replay.GetCase(context.Background(), r.localOf(serial), name)
	if err != nil {
		t.Fatal(err)
	}
	return dc.ID
}

// A phone holding another case under a case file's name refuses the suite
// before anything runs, unless Replace; the same case is not imported
// again, unless Reimport.
func TestCaseNameConflictReplaceAndReimport(t *testing.T) {
	t.Parallel()
	r := newRig(t, 2, false)
	ctx := context.Background()
	file := Item{Name: "login", Case: caseOf(t, "login", 100), File: "cases/login.json"}
	other := Item{Name: "login", Case: caseOf(t, "login", 999)}
	keep := importOn(t, r, "sim-0001", file)
	theirs := importOn(t, r, "sim-0002", other)

	o := r.options([]Item{file, {Name: "extra", Case: caseOf(t, "extra", 100)}})
	_, err := Run(ctx, o)
	e := fault.From(err)
	if e.Code != fault.CodeCaseNameConflict || e.Kind != fault.Failed || e.Details["serial"] != "sim-0002" || e.Details["file"] != "cases/login.json" {
		t.Fatalf("conflict: %v %v", err, e.Details)
	}
	for _, d := range r.local {
		st, err := replay.FetchReplayStatus(ctx, d)
		if err != nil || st.RunID != "" {
			t.Fatalf("%s ran something before the refusal: %+v %v", d.Serial(), st, err)
		}
	}
	if caseID(t, r, "sim-0002", "login") != theirs {
		t.Fatal("the phone's own case was replaced without Replace")
	}

	o.Replace = true
	o.ShardAll = true // both phones run it: the one with the same case keeps it
	rep, err := Run(ctx, o)
	if err != nil || rep.Failure() != nil {
		t.Fatalf("replace: %v %v", err, rep.Failure())
	}
	if caseID(t, r, "sim-0001", "login") != keep {
		t.Error("the same case was imported again")
	}
	if caseID(t, r, "sim-0002", "login") == theirs {
		t.Error("Replace did not import the file")
	}
	o.Replace, o.Reimport = false, true
	before := caseID(t, r, "sim-0001", "login")
	if rep, err = Run(ctx, o); err != nil || rep.Failure() != nil {
		t.Fatalf("reimport: %v %v", err, rep.Failure())
	}
	if caseID(t, r, "sim-0001", "login") == before {
		t.Error("Reimport did not import the file")
	}
}

// A case named only runs on the phones that hold it; one no phone holds is
// an error without an attempt.
func TestNamedCasesRunWhereTheyAre(t *testing.T) {
	t.Parallel()
	r := newRig(t, 2, false)
	ctx := context.Background()
	only := Item{Name: "only-two", Case: caseOf(t, "only-two", 100)}
	importOn(t, r, "sim-0002", only)
	o := r.options([]Item{{Name: "only-two"}, {Name: "nowhere"}})
	o.ShardAll = false
	rep, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cases[0]
	if c.Verdict != suitereport.Passed || c.Attempts[0].Device != "sim-0002" || c.Fingerprint == "" {
		t.Fatalf("only-two %+v", c)
	}
	n := rep.Cases[1]
	if n.Verdict != suitereport.Error || len(n.Attempts) != 0 || n.Reason == nil || n.Reason.Code != protocol.ErrCaseNotFound {
		t.Fatalf("nowhere %+v", n)
	}
	if f := rep.Failure(); f == nil || f.Code != fault.CodeBatchInfrastructureFailed {
		t.Fatalf("failure %v", f)
	}
}

// ShardAll runs every case on every phone, each result bound to its phone,
// one JUnit suite per phone with every case.
func TestShardAll(t *testing.T) {
	t.Parallel()
	r := newRig(t, 2, false)
	o := r.options(items(t, "matrix", 100, 200, 300))
	o.ShardAll = true
	o.ArtifactsRoot = t.TempDir()
	rep, err := Run(context.Background(), o)
	if err != nil || rep.Failure() != nil {
		t.Fatalf("%v %v", err, rep.Failure())
	}
	if len(rep.Cases) != 6 {
		t.Fatalf("%d results", len(rep.Cases))
	}
	for _, c := range rep.Cases {
		if c.Device == "" || c.Attempts[0].Device != c.Device {
			t.Errorf("%s ran on %s, bound to %s", c.Name, c.Attempts[0].Device, c.Device)
		}
	}
	for _, s := range rep.JUnit() {
		if len(s.Cases) != 3 {
			t.Errorf("suite %s has %d cases", s.Name, len(s.Cases))
		}
	}
	if d := rep.Cases[0].Attempts[0].EvidenceDir; d == "" || !contains([]string{"sim-0001", "sim-0002"}, lastButOne(d)) {
		t.Errorf("shard evidence %s", d)
	}
}

func lastButOne(p string) string {
	parts := splitPath(p)
	if len(parts) < 2 {
		return ""
	}
	return parts[len(parts)-2]
}

package devicehost

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/managed/worker"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/verify"
)

// A host recording performance around its shards (managed-worker --perf)
// keeps the session's CSVs, their analysis and a page of their own in the
// attempt's evidence, stops exactly its session, and leaves the verdict
// the Result Judge's.
func TestShardPerfLandsInTheAttemptEvidence(t *testing.T) {
	t.Parallel()
	d := phone(t, sim.Options{})
	h := hostOn(d)
	h.Perf = []string{"CPU", "Memory"}
	a := &managed.Assignment{Serial: d.Serial(), Plan: fixturePlan(t, "counter-success"), Decisions: []byte(`{}`)}
	dir := filepath.Join(t.TempDir(), "attempt")
	v, err := h.ExecuteShard(context.Background(), worker.ShardRun{Assignment: a, ArtifactsDir: dir})
	if err != nil || v.Status != verify.Passed {
		t.Fatalf("shard %+v %v", v, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "perf", "recording.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec shardPerf
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.SessionID == "" || len(rec.Errors) > 0 || rec.Target != "com.example.counter" || len(rec.Files) == 0 {
		t.Fatalf("recording %s", b)
	}
	csvs, _ := filepath.Glob(filepath.Join(dir, "perf", "*.csv"))
	if len(csvs) == 0 {
		t.Fatal("no CSV in perf/")
	}
	for _, f := range []string{"analysis.json", "report.html"} {
		if _, err := os.Stat(filepath.Join(dir, "perf", f)); err != nil {
			t.Errorf("perf/%s: %v", f, err)
		}
	}
	// Exactly our session was stopped: the phone records nothing now.
	mut := d.MutationsWith("perf")
	stopped := false
	for _, m := range mut {
		stopped = stopped || strings.Contains(m, "stop") && strings.Contains(m, rec.SessionID)
	}
	if !stopped {
		t.Errorf("no stop of %s among the phone's mutations %v", rec.SessionID, mut)
	}
}

// A plan whose scenarios target one app records that app; one whose
// scenarios target several records the whole device.
func TestPlanTarget(t *testing.T) {
	t.Parallel()
	for plan, want := range map[string]string{
		`{"intent":{"scenarios":[{"targetAppPackage":"a.b"},{"targetAppPackage":"a.b"}]}}`: "a.b",
		`{"intent":{"scenarios":[{"targetAppPackage":"a.b"},{"targetAppPackage":"c.d"}]}}`: "",
		`{"intent":{"scenarios":[]}}`: "",
	} {
		if got := planTarget([]byte(plan)); got != want {
			t.Errorf("%s: %q, want %q", plan, got, want)
		}
	}
}

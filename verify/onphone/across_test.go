package onphone

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/verify"
	"github.com/solopi-dev/solopi/verify/execution"
)

// The outcome matrix across three phones: its four dependents of
// hybrid-success run on different phones, none before hybrid-success has
// its verdict, and the report is the single phone's (solopi-ai's
// fingerprint).
func TestAcrossPhonesGivesTheOnePhoneVerdict(t *testing.T) {
	t.Parallel()
	var opens []SessionOpener
	for i := range 3 {
		d := sim.New(sim.Options{Serial: fmt.Sprintf("sim-across-%d", i), TimeScale: 20})
		t.Cleanup(func() { d.Close() })
		opens = append(opens, func(ctx context.Context) (*device.Session, error) {
			if err := d.WaitReady(ctx); err != nil {
				return nil, err
			}
			return device.OpenSession(ctx, d, device.SessionOptions{StartupTimeout: 30 * time.Second, PreserveForeground: true})
		})
	}
	plan, err := verify.MarshalPlan(compile(t, readFixture(t, "counter-outcome-matrix")))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := VerifyAcross(ctx, opens, execution.RunOptions{Plan: plan, Artifacts: dir,
		DecisionsFile: fixtures + "counter-agent-decisions.json"}, Budgets{Phone: Options{PollInterval: 20 * time.Millisecond}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != verify.Failed || s.OutcomeFingerprint != outcomeMatrixDecisions {
		t.Fatalf("summary %+v, want solopi-ai's one-phone fingerprint %s", s, outcomeMatrixDecisions)
	}

	// Who ran what, from the events.
	f, err := os.Open(s.Events)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	serials := map[string]bool{}
	hybridFinished, dependentBefore := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev map[string]any
		if err := canonjson.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		typ, _ := ev["type"].(string)
		details := ev
		if typ != "segment_started" && typ != "segment_finished" {
			continue
		}
		serial, _ := details["serial"].(string)
		if serial == "" {
			t.Fatalf("segment event without its phone: %v", ev)
		}
		serials[serial] = true
		scenario, _ := details["scenarioId"].(string)
		if typ == "segment_finished" && scenario == "hybrid-success" {
			hybridFinished = true
		}
		if typ == "segment_started" && scenario != "hybrid-success" && !hybridFinished {
			dependentBefore = true
		}
	}
	if dependentBefore {
		t.Error("a dependent scenario started before hybrid-success finished")
	}
	if len(serials) < 2 {
		t.Errorf("every segment ran on %v: the scenarios were not spread", serials)
	}
}

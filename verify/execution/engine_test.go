package execution

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/verify"
)

// The outcome fingerprints solopi-ai computes for its fixtures on the
// Counter app.
const (
	outcomeCounterSuccess    = "b98aee168968e31c0129a3b4b6b2c5ebaeedecebc9d6e106d88cb208ce6a79fa"
	outcomeMatrixDecisions   = "61e3753994ad27d965fd556d4dd7aef201ccd686c435390e489577bbe519a91a"
	outcomeMatrixNoDecisions = "89c20de7008a76c345446859d2e48f02cc88d8ecc2d15b00174edd52ea9186a2"
)

func runFixture(t *testing.T, fixture string, decisions bool, phone *counterPhone) *runOutput {
	t.Helper()
	plan := compileFixture(t, fixture)
	rememberCases(plan)
	e := &Engine{Phones: []Ports{{Runner: phone, Agent: phone}}, Clock: clock.NewFake(time.UnixMilli(1_700_000_000_000))}
	if decisions {
		d, err := parseDecisions(readFixture(t, "counter-agent-decisions"), plan)
		if err != nil {
			t.Fatal(err)
		}
		e.Decisions = d
	}
	out, err := e.Run(context.Background(), plan, filepath.Join(t.TempDir(), "run"))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestEngineGoldenOutcomes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, fixture string
		decisions     bool
		status, want  string
		scenarios     map[string]string
	}{
		{"counter-success", "counter-success", false, verify.Passed, outcomeCounterSuccess, map[string]string{"deterministic-success": verify.Passed}},
		{"matrix with decisions", "counter-outcome-matrix", true, verify.Failed, outcomeMatrixDecisions, map[string]string{
			"hybrid-success": verify.Passed, "product-failure": verify.Failed, "agent-false-done": verify.Failed,
			"uncovered-checkpoint": verify.NotTested, "cleanup-failure": verify.Failed,
		}},
		{"matrix without decisions", "counter-outcome-matrix", false, verify.NotTested, outcomeMatrixNoDecisions, map[string]string{
			"hybrid-success": verify.NotTested, "product-failure": verify.NotTested, "agent-false-done": verify.NotTested,
			"uncovered-checkpoint": verify.NotTested, "cleanup-failure": verify.NotTested,
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out := runFixture(t, c.fixture, c.decisions, &counterPhone{})
			b, err := os.ReadFile(out.ReportPath)
			if err != nil {
				t.Fatal(err)
			}
			schematest.Validate(t, "verification-report", b)
			r := out.Report
			if r.Status != c.status || r.OutcomeFingerprint != c.want {
				t.Errorf("status %s outcome %s, want %s %s", r.Status, r.OutcomeFingerprint, c.status, c.want)
			}
			for _, s := range r.Scenarios {
				if s.Status != c.scenarios[s.ScenarioID] {
					t.Errorf("scenario %s = %s, want %s (failure %+v)", s.ScenarioID, s.Status, c.scenarios[s.ScenarioID], s.Failure)
				}
			}
		})
	}
}

func TestEngineKeepsOwnerTokensOutOfEveryFile(t *testing.T) {
	t.Parallel()
	phone := &counterPhone{}
	out := runFixture(t, "counter-outcome-matrix", true, phone)
	if len(phone.tokens) == 0 {
		t.Fatal("no Agent session was started")
	}
	eachFile(t, filepath.Dir(out.ReportPath), func(path string, b []byte) {
		for _, tok := range phone.tokens {
			if strings.Contains(string(b), tok) {
				t.Errorf("%s contains an owner token", path)
			}
		}
		if strings.Contains(string(b), `"ownerToken"`) {
			t.Errorf("%s contains an ownerToken field", path)
		}
	})
}

// Observe sees every segment that runs start and finish, in order, with
// the plan's segment count as the total.
func TestEngineObservesSegments(t *testing.T) {
	t.Parallel()
	plan := compileFixture(t, "counter-success")
	rememberCases(plan)
	var seen []SegmentProgress
	phone := &counterPhone{}
	e := &Engine{Phones: []Ports{{Runner: phone, Agent: phone}}, Observe: func(p SegmentProgress) { seen = append(seen, p) }}
	if _, err := e.Run(context.Background(), plan, filepath.Join(t.TempDir(), "run")); err != nil {
		t.Fatal(err)
	}
	// counter-success: one test segment and one cleanup segment.
	if len(seen) != 4 {
		t.Fatalf("observed %+v", seen)
	}
	for i, p := range seen {
		started := i%2 == 0
		if p.Index != i/2+1 || p.Total != 2 || (p.State == "") != started {
			t.Errorf("event %d: %+v", i, p)
		}
	}
	if seen[1].State != "passed" || seen[3].Phase != "cleanup" {
		t.Errorf("finished events %+v %+v", seen[1], seen[3])
	}
}

// On several phones the matrix's dependents run at once and the report is
// the one-phone report (run with -race, this is also the walker's data
// race test).
func TestSeveralPhonesGiveTheOnePhoneReport(t *testing.T) {
	t.Parallel()
	plan := compileFixture(t, "counter-outcome-matrix")
	rememberCases(plan)
	d, err := parseDecisions(readFixture(t, "counter-agent-decisions"), plan)
	if err != nil {
		t.Fatal(err)
	}
	var phones []Ports
	for i := range 3 {
		p := &counterPhone{}
		phones = append(phones, Ports{Serial: "phone-" + string(rune('a'+i)), Runner: p, Agent: p})
	}
	e := &Engine{Phones: phones, Decisions: d, Clock: clock.NewFake(time.UnixMilli(1_700_000_000_000))}
	out, err := e.Run(context.Background(), plan, filepath.Join(t.TempDir(), "run"))
	if err != nil {
		t.Fatal(err)
	}
	if out.Report.OutcomeFingerprint != outcomeMatrixDecisions {
		t.Fatalf("outcome fingerprint %s, want the one-phone %s", out.Report.OutcomeFingerprint, outcomeMatrixDecisions)
	}
}

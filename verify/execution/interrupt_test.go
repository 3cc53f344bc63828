package execution

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/verify"
)

func interrupted(ctx context.Context) error {
	return fault.Wrap(fault.Interrupted, fault.CodeInterrupted, "interrupted", ctx.Err())
}

func runInterrupted(t *testing.T, phone *counterPhone, ctx context.Context) *runOutput {
	t.Helper()
	plan := compileFixture(t, "counter-outcome-matrix")
	rememberCases(plan)
	d, err := parseDecisions(readFixture(t, "counter-agent-decisions"), plan)
	if err != nil {
		t.Fatal(err)
	}
	e := &Engine{Phones: []Ports{{Runner: phone, Agent: phone}}, Decisions: d}
	out, err := e.Run(ctx, plan, filepath.Join(t.TempDir(), "run"))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestInterruptDuringDynamicSegmentCancelsTheSession(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	phone := &counterPhone{}
	phone.onAct = func(actx context.Context, req ActRequest) error {
		cancel() // SIGINT while the step is in flight
		return interrupted(actx)
	}
	out := runInterrupted(t, phone, ctx)
	r := out.Report
	if !r.Interrupted {
		t.Fatal("the report is not marked interrupted")
	}
	if !slices.Contains(phone.calls, "cancel session-1") {
		t.Errorf("the active session was not cancelled: %v", phone.calls)
	}
	for _, c := range phone.calls {
		if strings.HasPrefix(c, "end ") || strings.Contains(c, "cleanup") {
			t.Errorf("work started after the interrupt: %v", phone.calls)
		}
	}
	if len(r.Scenarios) != 5 || r.Scenarios[0].Checkpoints[0].Reason != verify.ReasonInterrupted {
		t.Fatalf("hybrid-success checkpoint = %+v", r.Scenarios[0].Checkpoints)
	}
	if r.Status != verify.NotTested || r.Scenarios[0].Failure.Category != verify.ReasonInterrupted {
		t.Errorf("status %s failure %+v", r.Status, r.Scenarios[0].Failure)
	}
	assertReportFile(t, out)
}

func TestInterruptDuringDeterministicSegmentStopsTheRun(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	phone := &counterPhone{}
	runs := 0
	phone.onRun = func(rctx context.Context, req RunRequest) error {
		runs++
		if strings.Contains(req.CaseName, "product-failure-test") {
			cancel() // the port cancels its replay and reports the interrupt
			return interrupted(rctx)
		}
		return nil
	}
	out := runInterrupted(t, phone, ctx)
	r := out.Report
	if !r.Interrupted {
		t.Fatal("the report is not marked interrupted")
	}
	if r.Scenarios[0].Status != verify.Passed {
		t.Errorf("hybrid-success finished before the interrupt and keeps its verdict, got %s", r.Scenarios[0].Status)
	}
	pf := r.Scenarios[1]
	if pf.Status != verify.NotTested || pf.Checkpoints[0].Reason != verify.ReasonInterrupted || pf.Cleanup.Status != verify.NotTested {
		t.Errorf("product-failure = %s %+v cleanup %s", pf.Status, pf.Checkpoints[0], pf.Cleanup.Status)
	}
	for _, s := range r.Scenarios[2:] {
		if len(s.Segments) != 0 {
			t.Errorf("scenario %s ran after the interrupt", s.ScenarioID)
		}
	}
	if runs != 3 { // hybrid test + cleanup, then the interrupted one
		t.Errorf("replays started: %d, want 3", runs)
	}
	assertReportFile(t, out)
}

func assertReportFile(t *testing.T, out *runOutput) {
	t.Helper()
	b, err := os.ReadFile(out.ReportPath)
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, "verification-report", b)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["interrupted"] != true || m["outcomeFingerprint"] != out.Report.OutcomeFingerprint {
		t.Errorf("report.json: interrupted=%v outcome=%v", m["interrupted"], m["outcomeFingerprint"])
	}
	ev, err := os.ReadFile(out.EventsPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(ev)), "\n")
	var last map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatal(err)
	}
	if last["type"] != "verification_finished" || last["interrupted"] != true {
		t.Errorf("last event = %v", last)
	}
}

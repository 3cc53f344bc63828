package execution

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/verify"
)

// BenchmarkRunMatrix is verify-run's host work per run of the matrix on a
// scripted phone that answers at once (plan copy, events, evidence files,
// hashing, judging): the host overhead on top of device time.
func BenchmarkRunMatrix(b *testing.B) {
	p := compileFixture(b, "counter-outcome-matrix")
	rememberCases(p)
	d, _ := parseDecisions(readFixture(b, "counter-agent-decisions"), p)
	dir := b.TempDir()
	i := 0
	for b.Loop() {
		i++
		phone := &counterPhone{}
		if _, err := (&Engine{Phones: []Ports{{Runner: phone, Agent: phone}}, Decisions: d}).Run(context.Background(), p, filepath.Join(dir, "run", strconv.Itoa(i))); err != nil {
			b.Fatal(err)
		}
	}
}

// timedModel measures the time spent inside the model client (request
// encoding, HTTP, the fake model's pixel reading, decoding).
type timedModel struct {
	chat.Model
	spent time.Duration
}

func (m *timedModel) Chat(ctx context.Context, req chat.Request) (*chat.Response, error) {
	start := time.Now()
	defer func() { m.spent += time.Since(start) }()
	return m.Model.Chat(ctx, req)
}

// BenchmarkVisionDecide is one vision-provider decision on the Counter
// screen with the fake model: the screenshot read through the session,
// the planner step (image resize and encoding, prompt, parse, contract
// mapping), the hit test, the receipt and the trajectory and screenshot
// written to the segment. model-ms/op is the time inside the model
// client; host-ms/op the rest.
func BenchmarkVisionDecide(b *testing.B) {
	cfg, _ := startVision(b, fakemodel.Options{Coords: fakemodel.CoordsRelative})
	tm := &timedModel{Model: cfg.Model}
	cfg.Model = tm
	phone := &counterPhone{sessions: 1}
	prov, err := NewVisionProvider(cfg)
	if err != nil {
		b.Fatal(err)
	}
	obs := phone.observation()
	dir := b.TempDir()
	start := time.Now()
	for b.Loop() {
		dec, err := prov.Decide(context.Background(), DecisionContext{ScenarioID: "s", StepID: "e", Goal: "increment the counter once",
			AllowedActions: []string{"click"}, Observation: obs, Session: phone, SessionID: "session-1", Budget: verify.Budget{MaxSteps: 3}, EvidenceDir: dir})
		if err != nil || dec["type"] != decisionAct {
			b.Fatalf("decision %v, %v", dec, err)
		}
	}
	total := time.Since(start)
	b.ReportMetric(float64(tm.spent.Microseconds())/1000/float64(b.N), "model-ms/op")
	b.ReportMetric(float64((total-tm.spent).Microseconds())/1000/float64(b.N), "host-ms/op")
}

// BenchmarkVisionReview is one vision checkpoint judged on a replay
// screenshot by the completion review (evidence file included).
func BenchmarkVisionReview(b *testing.B) {
	cfg, _ := startVision(b, fakemodel.Options{})
	tm := &timedModel{Model: cfg.Model}
	cfg.Model = tm
	judge, err := NewVisionReviewer(cfg)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	shot := filepath.Join(dir, "screen.png")
	if err := os.WriteFile(shot, counterPNG(1), 0o644); err != nil {
		b.Fatal(err)
	}
	ev, err := artifacts.Open(dir, artifacts.EvidenceOverwrite)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for b.Loop() {
		v, err := judge.Review(context.Background(), visionRequest{CheckpointID: "c", Assertion: "the counter shows 1", Screenshot: shot, Evidence: ev, EvidenceDir: dir})
		if err != nil || v.Status != verify.Passed {
			b.Fatalf("verdict %+v, %v", v, err)
		}
	}
	total := time.Since(start)
	b.ReportMetric(float64(tm.spent.Microseconds())/1000/float64(b.N), "model-ms/op")
	b.ReportMetric(float64((total-tm.spent).Microseconds())/1000/float64(b.N), "host-ms/op")
}

package execution

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
	"github.com/solopi-dev/solopi/report"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/verify"
)

// visionTestKey is the fake model's API key; no written file may hold it.
const visionTestKey = "sk-vision-test-5f1d0c9a7e"

// startVision starts the fake model and runs the planner preflight on it,
// as verify-run --decision-provider vision does before the phone is
// touched.
func startVision(t testing.TB, opts fakemodel.Options) (VisionConfig, *fakemodel.Server) {
	t.Helper()
	opts.APIKey = visionTestKey
	srv, err := fakemodel.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	mc := chat.DefaultConfig()
	mc.BaseURL, mc.Model, mc.APIKey, mc.Timeout, mc.Retries = srv.URL, "fake-vision", redact.NewSecret(visionTestKey), 20*time.Second, 0
	model, err := chat.NewClient(mc)
	if err != nil {
		t.Fatal(err)
	}
	key := agentloop.ProfileKey{Endpoint: mc.Endpoint(), Model: mc.Model, Thinking: chat.ThinkingAuto, Resize: coord.DefaultResizePolicy()}
	pre, err := agentloop.RunPreflight(context.Background(), agentloop.PreflightOptions{Model: model, Key: key,
		Policy: coord.DefaultResizePolicy(), Space: coord.SpaceAuto, Redact: mc.APIKey.Redact})
	if err != nil {
		t.Fatal(err)
	}
	return VisionConfig{Model: model, Preflight: pre, Runtime: agentloop.Config{Space: coord.SpaceAuto, ProfileKey: key}}, srv
}

// runVision runs plan through Prepare and Run with the vision provider deciding
// and the vision reviewer judging.
func runVision(t *testing.T, plan *verify.Plan, cfg VisionConfig, phone *counterPhone, edits ...func(*RunOptions, *Engine)) *RunSummary {
	t.Helper()
	rememberCases(plan)
	b, err := verify.MarshalPlan(plan)
	if err != nil {
		t.Fatal(err)
	}
	prov, err := NewVisionProvider(cfg)
	if err != nil {
		t.Fatal(err)
	}
	judge, err := NewVisionReviewer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o := RunOptions{Plan: b, Artifacts: filepath.Join(t.TempDir(), "run"),
		Provider: ProviderOptions{Name: ProviderVision, Vision: prov}}
	e := Engine{Phones: []Ports{{Runner: phone, Agent: phone}}, Vision: judge}
	for _, edit := range edits {
		edit(&o, &e)
	}
	s, err := runPlan(context.Background(), o, e)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := os.ReadFile(s.Report)
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, "verification-report", rb)
	noKeyWritten(t, filepath.Dir(s.Report))
	return s
}

func noKeyWritten(t *testing.T, root string) {
	t.Helper()
	eachFile(t, root, func(path string, b []byte) {
		if strings.Contains(string(b), visionTestKey) {
			t.Errorf("%s holds the API key", path)
		}
	})
}

func readReport(t *testing.T, s *RunSummary) *verify.Report {
	t.Helper()
	b, err := os.ReadFile(s.Report)
	if err != nil {
		t.Fatal(err)
	}
	var r verify.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func scenarioOf(t *testing.T, r *verify.Report, id string) verify.ScenarioResult {
	t.Helper()
	for _, s := range r.Scenarios {
		if s.ScenarioID == id {
			return s
		}
	}
	t.Fatalf("no scenario %s", id)
	return verify.ScenarioResult{}
}

// readTranscript returns the agent transcript of a scenario's segment.
func readTranscript(t *testing.T, s *RunSummary, seg verify.SegmentResult) (string, map[string]any) {
	t.Helper()
	dir := filepath.Join(filepath.Dir(s.Report), "segments", verify.EvidenceDirName(seg.SegmentID))
	b, err := os.ReadFile(filepath.Join(dir, "agent-transcript.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tr map[string]any
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatal(err)
	}
	return dir, tr
}

// The outcome matrix with the planner deciding every explore step: the
// hybrid scenario passes on the planner's click (hit-tested from the
// model's point on real pixels) and its confirmed done; every model
// exchange and the coordinate profile are in the transcript; the planner's
// trajectory and screenshots make the report's timeline.
func TestVisionProviderMatrix(t *testing.T) {
	t.Parallel()
	cfg, srv := startVision(t, fakemodel.Options{Coords: fakemodel.CoordsRelative})
	phone := &counterPhone{}
	s := runVision(t, compileFixture(t, "counter-outcome-matrix"), cfg, phone)
	r := readReport(t, s)
	for id, want := range map[string]string{
		"hybrid-success": verify.Passed, "product-failure": verify.Failed, "agent-false-done": verify.Passed,
		"uncovered-checkpoint": verify.Passed, "cleanup-failure": verify.Failed,
	} {
		if got := scenarioOf(t, r, id).Status; got != want {
			t.Errorf("scenario %s = %s, want %s", id, got, want)
		}
	}
	hybrid := scenarioOf(t, r, "hybrid-success")
	if cp := hybrid.Checkpoints[0]; cp.Status != verify.Passed || cp.Reason != verify.ReasonMatched {
		t.Errorf("hybrid checkpoint %s/%s, want passed/matched", cp.Status, cp.Reason)
	}
	seg := hybrid.Segments[1]
	if seg.State != verify.StateDone || !seg.AgentDone {
		t.Fatalf("explore segment %s/%s", seg.State, seg.Reason)
	}
	if !slices.Contains(phone.calls, "act explore-increment-001 click n4") {
		t.Errorf("the planner's tap did not become a click on the +1 node: %v", phone.calls)
	}
	dir, tr := readTranscript(t, s, seg)
	var acts, dones int
	for _, e := range tr["events"].([]any) {
		ev := e.(map[string]any)
		dec, _ := ev["decision"].(map[string]any)
		if dec == nil {
			continue
		}
		receipt, _ := dec["modelReceipt"].(map[string]any)
		if receipt == nil || receipt["coordinateProfile"] == nil || receipt["provider"] != ProviderVision {
			t.Fatalf("decision without a model receipt: %v", dec)
		}
		answers := 0
		for _, pe := range receipt["events"].([]any) {
			if pe.(map[string]any)["type"] == agentloop.EvModelResponse {
				answers++
			}
		}
		if answers == 0 {
			t.Errorf("a %s decision carries no model answer", ev["type"])
		}
		switch ev["type"] {
		case "act":
			acts++
		case "done":
			dones++
		}
	}
	if acts != 1 || dones != 1 {
		t.Errorf("%d acts and %d dones in the transcript", acts, dones)
	}
	shots, err := os.ReadDir(filepath.Join(dir, "screens"))
	if err != nil || len(shots) != 2 {
		t.Errorf("screens: %d, %v (want the screen before and after the click)", len(shots), err)
	}
	res, err := report.Write(filepath.Dir(s.Report), report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(res.Path)
	if err != nil {
		t.Fatal(err)
	}
	if want := `src="segments/` + filepath.Base(dir) + `/screens/`; !strings.Contains(string(html), want) {
		t.Errorf("the report shows no planner timeline (%s)", want)
	}
	for _, q := range srv.Requests() {
		if !q.Authorized {
			t.Fatalf("an unauthorized model request: %+v", q)
		}
	}
}

// A planner that claims done too early, confirmed by a gullible reviewer,
// still fails: the Result Judge's UI oracle reads the final observation.
func TestVisionProviderFalseDoneStillFails(t *testing.T) {
	t.Parallel()
	cfg, _ := startVision(t, fakemodel.Options{Coords: fakemodel.CoordsRelative, Quirk: fakemodel.QuirkFalseFinish, Review: fakemodel.ReviewApprove})
	phone := &counterPhone{}
	s := runVision(t, compileFixture(t, "counter-outcome-matrix"), cfg, phone)
	hybrid := scenarioOf(t, readReport(t, s), "hybrid-success")
	if seg := hybrid.Segments[1]; seg.State != verify.StateDone || !seg.AgentDone {
		t.Fatalf("explore segment %s/%s, want done", seg.State, seg.Reason)
	}
	if cp := hybrid.Checkpoints[0]; hybrid.Status != verify.Failed || cp.Status != verify.Failed || cp.Reason != verify.ReasonOracleMismatch {
		t.Errorf("scenario %s, checkpoint %s/%s: a false done must fail the oracle", hybrid.Status, cp.Status, cp.Reason)
	}
	for _, c := range phone.calls {
		if strings.HasPrefix(c, "act ") {
			t.Errorf("the planner acted before its false done: %v", phone.calls)
		}
	}
}

// exploreRequirement has two explore steps: one the planner may click
// in, judged by a UI and a vision oracle on its final screenshot, and one
// that only allows waiting.
const exploreRequirement = `{"id":"vision-explore","title":"t","targetAppPackage":"com.example.counter","acceptanceCriteria":["a"],
 "scenarios":[
  {"id":"clicks","acceptanceCriteria":["AC-001"],"steps":[
    {"id":"reset","action":{"type":"click","selector":{"resourceId":"com.example.counter:id/reset_button"}}},
    {"id":"explore","type":"explore","goal":"increment the counter once","allowedActions":["click","wait"],"budget":{"maxSteps":3}}],
   "checkpoints":[
    {"id":"ui-one","afterStep":"explore","oracle":{"type":"ui","selector":{"resourceId":"com.example.counter:id/counter_value"},"expected":"1"}},
    {"id":"looks-one","afterStep":"explore","oracle":{"type":"vision","assertion":"the counter shows 1"}}]},
  {"id":"waits","acceptanceCriteria":["AC-001"],"steps":[
    {"id":"wait-explore","type":"explore","goal":"increment the counter once","allowedActions":["wait"],"budget":{"maxSteps":2}}],
   "checkpoints":[
    {"id":"incremented-again","afterStep":"wait-explore","oracle":{"type":"ui","selector":{"resourceId":"com.example.counter:id/counter_value"},"expected":"2"}}]}]}`

// allowedActions are enforced before a decision leaves the provider: the
// planner's taps in a wait-only step are refused back to it, spend its
// budget and never reach the phone. A vision checkpoint after an explore
// step is judged on the final screenshot.
func TestVisionProviderAllowedActionsAndOracle(t *testing.T) {
	t.Parallel()
	plan := compileRequirement(t, []byte(exploreRequirement))
	cfg, _ := startVision(t, fakemodel.Options{Coords: fakemodel.CoordsImagePixels})
	phone := &counterPhone{}
	s := runVision(t, plan, cfg, phone)
	r := readReport(t, s)
	clicks := scenarioOf(t, r, "clicks")
	for _, cp := range clicks.Checkpoints {
		if cp.Status != verify.Passed {
			t.Errorf("checkpoint %s = %s/%s (%s)", cp.CheckpointID, cp.Status, cp.Reason, cp.Detail)
		}
		if cp.CheckpointID == "looks-one" && (cp.Judge != "vision" || cp.Detail == "") {
			t.Errorf("looks-one judged by %q with reason %q", cp.Judge, cp.Detail)
		}
	}
	waits := scenarioOf(t, r, "waits")
	seg := waits.Segments[0]
	if seg.State != verify.NotTested || seg.Reason != verify.ReasonCheckpointNotReached {
		t.Errorf("wait-only segment %s/%s", seg.State, seg.Reason)
	}
	var acts []string
	for _, c := range phone.calls {
		if strings.HasPrefix(c, "act ") {
			acts = append(acts, c)
		}
	}
	if len(acts) != 1 || !strings.HasPrefix(acts[0], "act explore-") {
		t.Errorf("acts %v: only the click step may act", acts)
	}
	_, tr := readTranscript(t, s, seg)
	b, _ := json.Marshal(tr)
	if !strings.Contains(string(b), fault.CodeActionNotAllowed) || !strings.Contains(string(b), `"type":"blocked"`) {
		t.Errorf("the transcript does not show the refused taps and the block: %s", b)
	}
}

// A model that goes away after the preflight leaves the explore step
// not_tested (model_decision_failed), never a verdict; with a cloud
// fallback every decision of the step falls back to it.
func TestVisionProviderModelGone(t *testing.T) {
	t.Parallel()
	cfg, srv := startVision(t, fakemodel.Options{Coords: fakemodel.CoordsRelative})
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	matrix := compileFixture(t, "counter-outcome-matrix")
	hybrid := scenarioOf(t, readReport(t, runVision(t, matrix, cfg, &counterPhone{})), "hybrid-success")
	if seg := hybrid.Segments[1]; seg.State != verify.NotTested || seg.Reason != verify.ReasonModelDecisionFailed {
		t.Errorf("explore segment %s/%s", seg.State, seg.Reason)
	}

	cloud := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in DecisionContext
		_ = json.NewDecoder(r.Body).Decode(&in)
		if in.StepIndex == 0 {
			_, _ = io.WriteString(w, `{"type":"act","action":{"type":"click","selector":{"resourceId":"com.example.counter:id/increment_button"}}}`)
			return
		}
		_, _ = io.WriteString(w, `{"type":"done","reason":"the cloud says so"}`)
	}))
	defer cloud.Close()
	s := runVision(t, matrix, cfg, &counterPhone{}, func(o *RunOptions, _ *Engine) { o.Provider.CloudFallbackEndpoint = cloud.URL })
	hybrid = scenarioOf(t, readReport(t, s), "hybrid-success")
	if hybrid.Status != verify.Passed {
		t.Fatalf("hybrid %s with the fallback", hybrid.Status)
	}
	_, tr := readTranscript(t, s, hybrid.Segments[1])
	used := 0
	for _, e := range tr["events"].([]any) {
		if dec, _ := e.(map[string]any)["decision"].(map[string]any); dec != nil && dec["fallback"] != nil {
			used++
		}
	}
	if used != 2 {
		t.Errorf("%d decisions fell back, want 2", used)
	}
}

// The provider refuses to start without a passed preflight, and a
// cancelled run is an interrupt.
func TestVisionProviderSetup(t *testing.T) {
	t.Parallel()
	phone := &counterPhone{}
	if _, err := NewVisionProvider(VisionConfig{Model: &chat.Client{}}); fault.CodeOf(err) != fault.CodeVisionPreflightMissing {
		t.Errorf("no preflight: %v", err)
	}
	if _, err := NewVisionReviewer(VisionConfig{}); fault.CodeOf(err) != fault.CodeInvalidProviderOptions {
		t.Errorf("no model: %v", err)
	}
	cfg, _ := startVision(t, fakemodel.Options{Coords: fakemodel.CoordsRelative})
	prov, err := NewVisionProvider(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	phone.sessions = 1
	obs := phone.observation()
	_, err = prov.Decide(ctx, DecisionContext{ScenarioID: "s", StepID: "e", Goal: "increment the counter once", AllowedActions: []string{"click"},
		Observation: obs, Session: phone, SessionID: "session-1", Budget: verify.Budget{MaxSteps: 2}})
	if !fault.IsInterrupt(err) {
		t.Errorf("cancelled decision: %v", err)
	}
}

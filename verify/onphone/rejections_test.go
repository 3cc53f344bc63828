package onphone

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/oracle"
	"github.com/solopi-dev/solopi/schemas/schematest"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/sim/android"
	"github.com/solopi-dev/solopi/verify"
	"github.com/solopi-dev/solopi/verify/execution"
)

// exploreRequirement is one scenario on the Counter app: reset, then an
// explore step with the given budget whose checkpoint wants the value 1,
// then a cleanup reset.
func exploreRequirement(budget string) []byte {
	return []byte(`{"id":"r","title":"t","targetAppPackage":"com.example.counter","acceptanceCriteria":["a"],
 "scenarios":[{"id":"s","acceptanceCriteria":["AC-001"],"steps":[
  {"id":"reset","action":{"type":"click","selector":{"resourceId":"com.example.counter:id/reset_button"}}},
  {"id":"explore","type":"explore","goal":"count to one","allowedActions":["click","input","wait","scroll"],"budget":` + budget + `}],
  "checkpoints":[{"id":"one","afterStep":"explore","oracle":{"type":"ui","selector":{"resourceId":"com.example.counter:id/counter_value"},"expected":"1"}}],
  "cleanup":[{"id":"c","action":{"type":"click","selector":{"resourceId":"com.example.counter:id/reset_button"}}}]}]}`)
}

const (
	clickIncrement = `{"type":"act","action":{"type":"click","selector":{"resourceId":"com.example.counter:id/increment_button"}}}`
	clickReset     = `{"type":"act","action":{"type":"click","selector":{"resourceId":"com.example.counter:id/reset_button"}}}`
	done           = `{"type":"done","reason":"the goal looks reached"}`
)

// hookedPhone is the real phone with a hook before each Agent action: a
// fault injected on the simulator at the moment the engine acts.
type hookedPhone struct {
	*Phone
	acts      int
	last      map[string]any // the observation the engine acts on
	beforeAct func(n int, obs map[string]any)
}

func (h *hookedPhone) Start(ctx context.Context, r execution.StartRequest) (*execution.StartResult, error) {
	res, err := h.Phone.Start(ctx, r)
	if res != nil {
		h.last = res.Observation
	}
	return res, err
}

func (h *hookedPhone) Act(ctx context.Context, r execution.ActRequest) (*execution.ActResult, error) {
	h.acts++
	if h.beforeAct != nil {
		h.beforeAct(h.acts, h.last)
	}
	res, err := h.Phone.Act(ctx, r)
	if res != nil && res.Settled != nil {
		h.last = res.Settled
	}
	return res, err
}

// tapNode taps the centre of the node a selector finds in an observation,
// behind the engine's back.
func tapNode(t *testing.T, d *sim.Device, obs map[string]any, resourceID string) {
	t.Helper()
	page, _ := obs["page"].(map[string]any)
	nodes := oracle.Match(page, oracle.Selector{"resourceId": resourceID})
	if len(nodes) != 1 {
		t.Fatalf("%d nodes %s", len(nodes), resourceID)
	}
	b, _ := nodes[0]["nodeBound"].(map[string]any)
	coord := func(k string) int {
		n, _ := b[k].(json.Number).Int64()
		return int(n)
	}
	if err := d.Phone.Tap((coord("left")+coord("right"))/2, (coord("top")+coord("bottom"))/2); err != nil {
		t.Fatal(err)
	}
}

// readReport reads a report.json, checked against its schema.
func readReport(t *testing.T, path string) *verify.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no report.json: %v", err)
	}
	schematest.Validate(t, "verification-report", b)
	var r verify.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// runOn prepares requirement with decisions and runs it on ports.
func runOn(t *testing.T, requirement []byte, decisions string, e execution.Engine) (*execution.RunSummary, error) {
	t.Helper()
	b, err := verify.MarshalPlan(compile(t, requirement))
	if err != nil {
		t.Fatal(err)
	}
	o := execution.RunOptions{Plan: b, Artifacts: filepath.Join(t.TempDir(), "run")}
	if decisions != "" {
		o.DecisionsJSON = []byte(decisions)
	}
	p, err := execution.Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	return p.Run(context.Background(), e)
}

// Every way the simulated phone refuses or fails an Agent step during a
// verify-run explore segment ends in a written report.json in which the
// segment and its checkpoint are not_tested with the reason solopi-ai gives
// and the scenario is not_tested (checkpoint_not_reached); the cleanup
// still runs and passes. Before, a refused step's typed receipt made the
// evidence unencodable and the run ended with no report at all.
func TestEveryAgentRejectionIsNotTested(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, budget string
		decisions    []string
		fault        func(t *testing.T, d *sim.Device, h *hookedPhone)
		reason       string // the checkpoint's (and segment's) reason
		// restarted: SoloPi restarts during the run, so whether the
		// cleanup's import finds it back depends on timing: the cleanup
		// is passed or not_tested, never failed.
		restarted bool
		// scale is the simulator's time scale, 20 unless set: a case that
		// waits out a budget runs faster.
		scale float64
	}{
		{name: "input on a button (the device fails the action)", budget: `{}`,
			decisions: []string{`{"type":"act","action":{"type":"input","selector":{"resourceId":"com.example.counter:id/reset_button"},"text":"x"}}`},
			reason:    verify.ReasonAgentActionFailed},
		{name: "a second step past maxSteps 1 (step_budget_exhausted)", budget: `{"maxSteps":1}`,
			decisions: []string{clickIncrement, clickIncrement}, reason: verify.ReasonAgentActionFailed},
		{name: "the same action past maxRepeatedActions (loop_detected)", budget: `{"maxSteps":5,"maxRepeatedActions":1}`,
			decisions: []string{clickIncrement, clickIncrement}, reason: verify.ReasonAgentActionFailed},
		{name: "the screen changed behind the engine (stale_observation)", budget: `{}`,
			decisions: []string{clickIncrement},
			fault: func(t *testing.T, d *sim.Device, h *hookedPhone) {
				h.beforeAct = func(_ int, obs map[string]any) { tapNode(t, d, obs, "com.example.counter:id/increment_button") }
			},
			reason: verify.ReasonAgentActionFailed},
		{name: "the session ran out of time while acting (terminal session)", budget: `{"maxDurationMs":60000}`,
			decisions: []string{clickIncrement, done},
			fault: func(t *testing.T, d *sim.Device, h *hookedPhone) {
				h.beforeAct = func(int, map[string]any) { d.App.SetSettleDelay(time.Hour) }
			},
			reason: verify.ReasonAgentActionFailed, scale: 100},
		{name: "the operation service is down (action_failed)", budget: `{}`,
			decisions: []string{clickIncrement},
			fault: func(t *testing.T, d *sim.Device, h *hookedPhone) {
				h.beforeAct = func(int, map[string]any) { d.App.SetOperationServiceAvailable(false) }
			},
			reason: verify.ReasonAgentActionFailed},
		{name: "the settle fails", budget: `{}`,
			decisions: []string{clickIncrement},
			fault: func(t *testing.T, d *sim.Device, h *hookedPhone) {
				h.beforeAct = func(int, map[string]any) { d.App.FailSettle(true) }
			},
			reason: verify.ReasonAgentActionFailed},
		{name: "the app under test left the foreground (no controllable root)", budget: `{}`,
			decisions: []string{clickIncrement},
			fault: func(t *testing.T, d *sim.Device, h *hookedPhone) {
				h.beforeAct = func(int, map[string]any) {
					if err := d.Phone.KeyEvent(android.KeycodeHome); err != nil {
						t.Error(err)
					}
				}
			},
			reason: verify.ReasonAgentActionFailed},
		{name: "a step that changes nothing past maxNoProgressSteps, then another (terminal_session)",
			budget: `{"maxNoProgressSteps":1}`, decisions: []string{clickReset, clickIncrement}, reason: verify.ReasonAgentActionFailed},
		{name: "a step that changes nothing past maxNoProgressSteps, then done (the session failed: end refused)",
			budget: `{"maxNoProgressSteps":1}`, decisions: []string{clickReset, done}, reason: verify.ReasonAgentCleanupFailed},
		{name: "SoloPi restarted between two steps (the session is lost)", budget: `{}`,
			decisions: []string{clickIncrement, clickIncrement},
			fault: func(t *testing.T, d *sim.Device, h *hookedPhone) {
				h.beforeAct = func(n int, _ map[string]any) {
					if n == 2 {
						d.App.Restart()
					}
				}
			},
			// The step fails on the lost session, then its cancel cannot
			// reach it: solopi-ai reports the cleanup.
			reason: verify.ReasonAgentCleanupFailed, restarted: true},
		{name: "arguments the Agent protocol refuses (wait 50 ms)", budget: `{}`,
			decisions: []string{`{"type":"act","action":{"type":"wait","durationMs":50}}`}, reason: verify.ReasonAgentExecutionFailed},
		{name: "a selector no node matches", budget: `{}`,
			decisions: []string{`{"type":"act","action":{"type":"click","selector":{"text":"nothing like this"}}}`}, reason: verify.ReasonAgentExecutionFailed},
		{name: "the touch service does not start (the session fails at once)", budget: `{}`,
			decisions: []string{clickIncrement},
			fault:     func(t *testing.T, d *sim.Device, h *hookedPhone) { d.App.SetTouchServiceAvailable(false) },
			reason:    verify.ReasonAgentStartFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d, phone := newPhone(t, cmp.Or(c.scale, 20))
			h := &hookedPhone{Phone: phone}
			if c.fault != nil {
				c.fault(t, d, h)
			}
			decisions := fmt.Sprintf(`{"s":{"explore":[%s]}}`, strings.Join(c.decisions, ","))
			s, err := runOn(t, exploreRequirement(c.budget), decisions, execution.Engine{Phones: []execution.Ports{{Runner: h, Agent: h}}})
			if err != nil {
				t.Fatalf("no verdict: %v", err)
			}
			r := readReport(t, s.Report)
			sc := r.Scenarios[0]
			if s.Status != verify.NotTested || r.Status != verify.NotTested || sc.Status != verify.NotTested {
				t.Fatalf("status %s/%s/%s, want not_tested", s.Status, r.Status, sc.Status)
			}
			if sc.Failure == nil || sc.Failure.Category != verify.ReasonCheckpointNotReached {
				t.Errorf("failure %+v, want category checkpoint_not_reached", sc.Failure)
			}
			if seg := sc.Segments[1]; seg.State != verify.NotTested || seg.Reason != c.reason {
				t.Errorf("explore segment %s/%s, want not_tested/%s", seg.State, seg.Reason, c.reason)
			}
			if cp := sc.Checkpoints[0]; cp.Status != verify.NotTested || cp.Reason != c.reason {
				t.Errorf("checkpoint %s/%s, want not_tested/%s", cp.Status, cp.Reason, c.reason)
			}
			if sc.Cleanup.Status != verify.Passed && !(c.restarted && sc.Cleanup.Status == verify.NotTested) {
				t.Errorf("cleanup %s", sc.Cleanup.Status)
			}
		})
	}
}

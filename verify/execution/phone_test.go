package execution

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/oracle"
	"github.com/solopi-dev/solopi/verify"
)

// counterPhone is a scripted phone running the Counter app (reset → 0,
// increment → +1, status "Counting" when the value is above 0). It
// implements CaseRunner and AgentSession the way the real commands
// behave, so the engine's verdicts can be checked without a device. Its
// screenshots are the simulator's Counter screen (the fake model reads
// their pixels) and its nodes carry that screen's bounds.
type counterPhone struct {
	mu       sync.Mutex
	value    int
	calls    []string
	sessions int
	obsSeq   int
	// shown is the counter value each observation showed.
	shown map[string]int
	// hooks let a test interfere with one call (an interrupt, an error).
	onRun    func(ctx context.Context, req RunRequest) error
	onImport func(c *verify.Case) (ImportResult, error)
	onAct    func(ctx context.Context, req ActRequest) error
	// tokens records the owner tokens the engine used.
	tokens []string
	// failFinish makes End and Cancel fail (a cleanup the device never
	// confirms).
	failFinish bool
}

const counterPkg = "com.example.counter"

func (p *counterPhone) record(s string) { p.calls = append(p.calls, s) }

func node(id, class, rid, text string, bounds image.Rectangle) map[string]any {
	return map[string]any{"nodeId": id, "className": class, "resourceId": counterPkg + ":id/" + rid, "packageName": counterPkg, "text": text,
		"nodeBound": rect(bounds), "children": []any{}}
}

func rect(r image.Rectangle) map[string]any {
	return map[string]any{"left": r.Min.X, "top": r.Min.Y, "right": r.Max.X, "bottom": r.Max.Y}
}

// observation is the Agent's view of the screen (bounds as
// fakemodel.CounterScreen draws it).
func (p *counterPhone) observation() map[string]any {
	p.obsSeq++
	status := "Idle"
	if p.value > 0 {
		status = "Counting"
	}
	id := fmt.Sprintf("obs-%d", p.obsSeq)
	if p.shown == nil {
		p.shown = map[string]int{}
	}
	p.shown[id] = p.value
	return map[string]any{
		"observationId":  id,
		"screenshotPath": fmt.Sprintf("/sdcard/solopi/agent-sessions/session-%d/observation-%d.png", p.sessions, p.obsSeq),
		"page": map[string]any{"nodeId": "n0", "className": "android.widget.FrameLayout", "nodeBound": rect(image.Rect(0, 0, 1080, 2340)), "children": []any{
			node("n1", "android.widget.TextView", "counter_value", strconv.Itoa(p.value), image.Rect(340, 640, 740, 880)),
			node("n2", "android.widget.TextView", "counter_status", status, image.Rect(240, 900, 840, 1000)),
			node("n3", "android.widget.Button", "reset_button", "Reset", image.Rect(120, 1120, 520, 1290)),
			node("n4", "android.widget.Button", "increment_button", "Increment", image.Rect(560, 1120, 960, 1290)),
		}},
	}
}

// counterPNGs caches the Counter screen's PNG by value.
var counterPNGs sync.Map

// counterPNG is the screenshot of the Counter app showing value.
func counterPNG(value int) []byte {
	if b, ok := counterPNGs.Load(value); ok {
		return b.([]byte)
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, fakemodel.CounterScreen(strconv.Itoa(value))); err != nil {
		panic(err)
	}
	counterPNGs.Store(value, buf.Bytes())
	return buf.Bytes()
}

func (p *counterPhone) tap(resourceID string) error {
	switch resourceID {
	case counterPkg + ":id/reset_button":
		p.value = 0
	case counterPkg + ":id/increment_button":
		p.value++
	default:
		return fmt.Errorf("nothing to tap at %s", resourceID)
	}
	return nil
}

func (p *counterPhone) ImportCase(ctx context.Context, c *verify.Case, file string) (ImportResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.record("import " + c.Name)
	if p.onImport != nil {
		return p.onImport(c)
	}
	if _, err := os.Stat(file); err != nil {
		return ImportResult{}, err
	}
	return ImportResult{OK: true, Receipt: map[string]any{"success": true, "caseName": c.Name, "state": "imported"}}, nil
}

// assertHolds runs a compiled ASSERT like SoloPi does (assert_regular is
// a full match, Java's String.matches).
func (p *counterPhone) assertHolds(st verify.CaseStep) bool {
	params := st.Params
	field := "text"
	if params["assertTarget"] == "description" {
		field = "description"
	}
	op := map[any]string{"assert_accurate": oracle.OpEquals, "assert_contain": oracle.OpContains, "assert_regular": oracle.OpMatches}[params["assertMode"]]
	expected := params["assertInputContent"].(string)
	if op == oracle.OpMatches {
		expected = `\A(?:` + expected + `)\Z`
	}
	o, err := oracle.NewUI(oracle.Selector(st.Node), field, op, expected)
	if err != nil {
		return false
	}
	return o.Evaluate(p.observation()).Status == oracle.Passed
}

func (p *counterPhone) RunCase(ctx context.Context, req RunRequest) (RunResult, error) {
	if p.onRun != nil {
		if err := p.onRun(ctx, req); err != nil {
			return RunResult{Response: map[string]any{"state": "cancelled"}}, err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.record("run " + req.CaseName)
	c := plannedCase(req.CaseName)
	state, failedAt := "passed", ""
	for _, st := range c.Steps {
		var err error
		switch st.ActionEnum {
		case "CLICK":
			err = p.tap(st.Node["resourceId"].(string))
		case "SLEEP":
		case "ASSERT":
			if !p.assertHolds(st) {
				err = fmt.Errorf("assert failed")
			}
		default:
			err = fmt.Errorf("unsupported %s", st.ActionEnum)
		}
		if err != nil {
			state, failedAt = "failed", st.StepID
			break
		}
	}
	if err := os.MkdirAll(req.ArtifactsDir, 0o755); err != nil {
		return RunResult{}, err
	}
	files := map[string]string{}
	for name, body := range map[string][]byte{
		"result": []byte(`{"state":"` + state + `"}`), "screenshot": counterPNG(p.value),
		"logcat": []byte("I/SoloPi: replay " + req.CaseName + " owner=" + lastToken(p.tokens) + "\n"),
	} {
		path := filepath.Join(req.ArtifactsDir, name+map[string]string{"result": ".json", "screenshot": ".png", "logcat": ".txt"}[name])
		if err := os.WriteFile(path, body, 0o644); err != nil {
			return RunResult{}, err
		}
		files[name] = path
	}
	resp := map[string]any{"success": state == "passed", "state": state, "runId": "run-1", "caseName": req.CaseName,
		"results": []any{map[string]any{"exceptionStepId": failedAt}}}
	var err error
	if state != "passed" {
		err = fault.New(fault.Failed, "run_failed", "the replay failed")
	}
	return RunResult{Response: resp, Files: files}, err
}

func lastToken(ts []string) string {
	if len(ts) == 0 {
		return "none"
	}
	return ts[len(ts)-1]
}

// plannedCases lets RunCase find a case by name, as the phone finds an
// imported case (a sync.Map: parallel tests remember their plans' cases
// while others replay theirs).
var plannedCases sync.Map

func rememberCases(p *verify.Plan) {
	for _, c := range p.Cases() {
		plannedCases.Store(c.Name, c)
	}
}

func plannedCase(name string) *verify.Case {
	c, _ := plannedCases.Load(name)
	cs, _ := c.(*verify.Case)
	return cs
}

func (p *counterPhone) LaunchTarget(ctx context.Context, pkg string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.record("launch " + pkg)
	return nil
}

func (p *counterPhone) Start(ctx context.Context, req StartRequest) (*StartResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sessions++
	p.tokens = append(p.tokens, req.OwnerToken.Reveal())
	id := fmt.Sprintf("session-%d", p.sessions)
	p.record("start " + id)
	obs := p.observation()
	return &StartResult{SessionID: id, Observation: obs, Response: map[string]any{
		"success": true, "ownerToken": req.OwnerToken.Reveal(), "session": map[string]any{"sessionId": id, "state": "active"},
		"observation": obs, "note": "owner " + req.OwnerToken.Reveal(),
	}}, nil
}

func (p *counterPhone) Act(ctx context.Context, req ActRequest) (*ActResult, error) {
	if p.onAct != nil {
		if err := p.onAct(ctx, req); err != nil {
			return nil, err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.record("act " + req.StepID + " " + req.Action + " " + req.NodeID)
	if req.Action == "click" {
		rid := map[string]string{"n3": counterPkg + ":id/reset_button", "n4": counterPkg + ":id/increment_button"}[req.NodeID]
		if err := p.tap(rid); err != nil {
			return &ActResult{Status: "failed", Response: map[string]any{"receipt": map[string]any{"status": "failed"}}},
				fault.New(fault.Failed, "action_failed", err.Error())
		}
	}
	settled := p.observation()
	return &ActResult{Status: "succeeded", Settled: settled, Response: map[string]any{
		"receipt": map[string]any{"stepId": req.StepID, "status": "succeeded", "settledObservation": settled},
	}}, nil
}

func (p *counterPhone) Screenshot(ctx context.Context, ref SessionRef, obs map[string]any, dest string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	id, _ := obs["observationId"].(string)
	value, ok := p.shown[id]
	if !ok {
		return fault.New(fault.Failed, "screenshot_failed", "no such observation: "+id)
	}
	return os.WriteFile(dest, counterPNG(value), 0o644)
}

func (p *counterPhone) Timeline(ctx context.Context, ref SessionRef) (map[string]any, error) {
	return map[string]any{"events": []any{map[string]any{"sequence": 1, "type": "started", "owner": ref.OwnerToken.Reveal()}}, "ownerToken": ref.OwnerToken.Reveal()}, nil
}

func (p *counterPhone) End(ctx context.Context, ref SessionRef) (map[string]any, error) {
	return p.finish("end", "ended", ref)
}

func (p *counterPhone) Cancel(ctx context.Context, ref SessionRef) (map[string]any, error) {
	return p.finish("cancel", "cancelled", ref)
}

func (p *counterPhone) finish(verb, state string, ref SessionRef) (map[string]any, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.record(verb + " " + ref.SessionID)
	if p.failFinish {
		return nil, fault.Wrap(fault.Timeout, "agent_control_timeout", "the session did not reach "+state, errFinish)
	}
	return map[string]any{"session": map[string]any{"sessionId": ref.SessionID, "state": state}}, nil
}

package verify

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
)

// checkStrict makes the checks solopi-ai leaves to run time (a plan it
// accepts after being edited and re-fingerprinted could still hold them):
// a dynamic segment outside the test phase, allowed actions outside the
// seven typed actions, budgets out of range, node steps without a grounded
// selector, a goal tree that disagrees with the intent, segment IDs and
// case names that do not hash their content, and anything else that is
// not exactly what the compiler writes. It returns the typed plan the
// engine runs.
func checkStrict(src map[string]any) (*Plan, error) {
	plan, err := parsePlan(src)
	if err != nil {
		return nil, err
	}
	if !sameJSON(src["goalTree"], goalTree(plan.Requirement, plan.Scenarios)) {
		return nil, invalid(fault.CodeGoalTreeMismatch, "the goal tree does not match the intent's acceptance criteria, scenarios and checkpoints")
	}
	for _, sc := range plan.Scenarios {
		if err := checkLinks(plan.Requirement.ID, sc); err != nil {
			return nil, err
		}
	}
	unsigned := make(map[string]any, len(src))
	for k, v := range src {
		if k != "planFingerprint" {
			unsigned[k] = v
		}
	}
	if !sameJSON(unsigned, plan.unsignedTree()) {
		return nil, invalid(fault.CodeInvalidPlan, "the plan is not in compiled form (unknown or missing fields)")
	}
	return plan, nil
}

func sameJSON(a, b any) bool {
	x, err1 := canonjson.Marshal(a)
	y, err2 := canonjson.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// checkLinks checks that segments, steps and checkpoints refer to each
// other consistently and that content-addressed names match content.
func checkLinks(requirementID string, sc *Scenario) error {
	owner := map[string]*Segment{}
	for i := range sc.Segments {
		seg := &sc.Segments[i]
		if seg.Case != nil {
			want := newCase(requirementID, sc, seg.Phase, caseOrdinal(sc, seg), seg.Case.Steps).Name
			if seg.Case.Name != want {
				return invalid(fault.CodeCaseNameMismatch, "the compiled case name does not hash its content", "segmentId", seg.ID, "caseName", seg.Case.Name)
			}
		}
		if seg.ID != segmentID(sc.ID, seg.Phase, caseOrdinal(sc, seg), seg.semantic()) {
			return invalid(fault.CodeSegmentIDMismatch, "the segment ID does not hash its content", "segmentId", seg.ID)
		}
		for _, id := range seg.CheckpointIDs {
			if seg.Phase != PhaseTest || sc.Checkpoint(id) == nil || owner[id] != nil {
				return invalid(fault.CodeInvalidPlan, "a checkpoint must belong to exactly one test segment", "segmentId", seg.ID, "checkpointId", id)
			}
			owner[id] = seg
		}
		if seg.DynamicStep != nil {
			i := slices.IndexFunc(sc.Steps, func(s Step) bool { return s.ID == seg.DynamicStep.ID })
			if i < 0 || !sameJSON(sc.Steps[i].tree(), seg.DynamicStep.tree()) {
				return invalid(fault.CodeInvalidPlan, "a dynamic segment's step must be one of the scenario's explore steps", "segmentId", seg.ID)
			}
		}
	}
	for i := range sc.Checkpoints {
		cp := &sc.Checkpoints[i]
		seg := owner[cp.ID]
		if seg == nil || seg.ID != cp.SegmentID {
			return invalid(fault.CodeInvalidPlan, "the checkpoint's segmentId is not the test segment that lists it", "checkpointId", cp.ID)
		}
		if seg.Deterministic() && cp.Oracle.UI != nil && seg.CheckpointOracleSteps[cp.ID] != cp.OracleStepID {
			return invalid(fault.CodeInvalidPlan, "the checkpoint's oracleStepId is not its segment's ASSERT step", "checkpointId", cp.ID)
		}
	}
	return nil
}

// caseOrdinal is a segment's ordinal: its position among the scenario's
// test segments, 1 for precondition and cleanup.
func caseOrdinal(sc *Scenario, seg *Segment) int {
	if seg.Phase != PhaseTest {
		return 1
	}
	n := 0
	for i := range sc.Segments {
		if sc.Segments[i].Phase == PhaseTest {
			n++
		}
		if &sc.Segments[i] == seg {
			break
		}
	}
	return n
}

// semantic is what a segment ID hashes.
func (s *Segment) semantic() map[string]any {
	switch {
	case s.Route == RouteDynamic:
		return map[string]any{"phase": s.Phase, "step": s.DynamicStep.tree(), "checkpoints": strs(s.CheckpointIDs)}
	case s.Phase == PhaseTest:
		return map[string]any{"phase": s.Phase, "case": s.Case.tree(), "checkpoints": strs(s.CheckpointIDs)}
	}
	return map[string]any{"phase": s.Phase, "case": s.Case.tree()}
}

func planError(format string, args ...any) error {
	return invalid(fault.CodeInvalidPlan, fmt.Sprintf(format, args...))
}

func parsePlan(src map[string]any) (*Plan, error) {
	p := &Plan{Fingerprint: src["planFingerprint"].(string)}
	sf, _ := src["sourceFingerprint"].(string)
	if !protocol.ValidHex(sf, 64, false) {
		return nil, planError("sourceFingerprint must be a SHA-256")
	}
	p.SourceFingerprint = sf
	intent := src["intent"].(map[string]any)
	req, err := want.Object(intent["requirement"], "intent requirement")
	if err != nil {
		return nil, err
	}
	if p.Requirement.ID, err = identifier(req["id"], "requirement id"); err != nil {
		return nil, err
	}
	if p.Requirement.Title, err = text(req["title"], "requirement title"); err != nil {
		return nil, err
	}
	var ok bool
	if p.Requirement.Description, ok = req["description"].(string); !ok {
		return nil, planError("the requirement description must be text")
	}
	if p.Requirement.AcceptanceCriteria, err = normalizeACs(req["acceptanceCriteria"]); err != nil {
		return nil, err
	}
	if p.Parameters, err = want.Object(intent["parameters"], "intent parameters"); err != nil {
		return nil, err
	}
	for _, id := range intent["executionOrder"].([]any) {
		p.ExecutionOrder = append(p.ExecutionOrder, id.(string))
	}
	for _, raw := range intent["scenarios"].([]any) {
		sc, err := parseScenario(raw.(map[string]any))
		if err != nil {
			return nil, err
		}
		p.Scenarios = append(p.Scenarios, sc)
	}
	return p, nil
}

func stringList(v any, label string) ([]string, error) {
	l, err := want.List(v, label, true)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(l))
	for i, x := range l {
		s, ok := x.(string)
		if !ok {
			return nil, planError("%s must hold text", label)
		}
		out[i] = s
	}
	return out, nil
}

func parseScenario(m map[string]any) (*Scenario, error) {
	sc := &Scenario{ID: m["id"].(string)}
	var err error
	var ok bool
	if sc.Title, ok = m["title"].(string); !ok {
		return nil, planError("scenario %s: title must be text", sc.ID)
	}
	if sc.AcceptanceCriteria, err = stringList(m["acceptanceCriteria"], "scenario acceptanceCriteria"); err != nil {
		return nil, err
	}
	if sc.DependsOn, err = stringList(m["dependsOn"], "scenario dependsOn"); err != nil {
		return nil, err
	}
	if sc.Bindings, err = want.Object(m["bindings"], "scenario bindings"); err != nil {
		return nil, err
	}
	if sc.TestData, err = want.Object(m["testData"], "scenario testData"); err != nil {
		return nil, err
	}
	if sc.Budget, err = normalizeBudget(m["budget"], "scenario budget"); err != nil {
		return nil, err
	}
	if sc.TargetAppPackage, ok = m["targetAppPackage"].(string); !ok || sc.TargetAppPackage == "" {
		return nil, planError("scenario %s: targetAppPackage must be text", sc.ID)
	}
	if l, isText := m["targetAppLabel"].(string); isText {
		sc.TargetAppLabel = &l
	} else if m["targetAppLabel"] != nil {
		return nil, planError("scenario %s: targetAppLabel must be text or null", sc.ID)
	}
	sc.Route, _ = m["route"].(string)
	pres, err := want.List(m["preconditions"], "scenario preconditions", true)
	if err != nil {
		return nil, err
	}
	for _, r := range pres {
		pm, err := want.Object(r, "precondition")
		if err != nil {
			return nil, err
		}
		var pre precondition
		if pre.ID, err = identifier(pm["id"], "precondition id"); err != nil {
			return nil, err
		}
		if pre.Oracle, err = normalizeOracle(pm["oracle"], "precondition "+pre.ID+" oracle", false); err != nil {
			return nil, err
		}
		sc.Preconditions = append(sc.Preconditions, pre)
	}
	steps, err := want.List(m["steps"], "scenario steps", false)
	if err != nil {
		return nil, err
	}
	for i, r := range steps {
		st, err := parseStep(r, i)
		if err != nil {
			return nil, err
		}
		sc.Steps = append(sc.Steps, *st)
	}
	cps, _ := m["checkpoints"].([]any)
	for _, r := range cps {
		cm := r.(map[string]any)
		var cp checkpoint
		if cp.ID, err = identifier(cm["id"], "checkpoint id"); err != nil {
			return nil, err
		}
		if cp.AfterStep, err = identifier(cm["afterStep"], "checkpoint afterStep"); err != nil {
			return nil, err
		}
		if cp.AcceptanceCriteria, err = stringList(cm["acceptanceCriteria"], "checkpoint acceptanceCriteria"); err != nil {
			return nil, err
		}
		if cp.Oracle, err = normalizeOracle(cm["oracle"], "checkpoint "+cp.ID+" oracle", true); err != nil {
			return nil, err
		}
		cp.SegmentID, _ = cm["segmentId"].(string)
		if v, present := cm["oracleStepId"]; present {
			if cp.OracleStepID, ok = v.(string); !ok || cp.OracleStepID == "" {
				return nil, planError("checkpoint %s: oracleStepId must be text", cp.ID)
			}
		}
		sc.Checkpoints = append(sc.Checkpoints, cp)
	}
	cleanup, err := want.List(m["cleanup"], "scenario cleanup", true)
	if err != nil {
		return nil, err
	}
	for _, r := range cleanup {
		cm, err := want.Object(r, "cleanup item")
		if err != nil {
			return nil, err
		}
		var c cleanupItem
		if c.ID, err = identifier(cm["id"], "cleanup id"); err != nil {
			return nil, err
		}
		if a, present := cm["action"]; present {
			if c.Action, err = normalizeAction(a, "cleanup "+c.ID+" action"); err != nil {
				return nil, err
			}
		} else {
			o, err := normalizeOracle(cm["oracle"], "cleanup "+c.ID+" oracle", false)
			if err != nil {
				return nil, err
			}
			c.Oracle = &o
		}
		sc.Cleanup = append(sc.Cleanup, c)
	}
	for _, r := range m["segments"].([]any) {
		seg, err := parseSegment(r.(map[string]any))
		if err != nil {
			return nil, err
		}
		sc.Segments = append(sc.Segments, *seg)
	}
	return sc, nil
}

// parseStep reads a normalized step back (an explore step carries
// stability "unknown", which a requirement's explore step may not).
func parseStep(raw any, i int) (*Step, error) {
	m, err := want.Object(raw, fmt.Sprintf("steps[%d]", i))
	if err != nil {
		return nil, err
	}
	if m["type"] == stepExplore {
		if m["stability"] != "unknown" {
			return nil, planError("explore step %v must have stability unknown", m["id"])
		}
		c := make(map[string]any, len(m))
		for k, v := range m {
			if k != "stability" {
				c[k] = v
			}
		}
		m = c
	}
	return normalizeStep(m, i)
}

func parseSegment(m map[string]any) (*Segment, error) {
	seg := &Segment{ID: m["segmentId"].(string), Route: m["route"].(string)}
	seg.Phase, _ = m["phase"].(string)
	switch seg.Phase {
	case PhasePrecondition, PhaseTest, PhaseCleanup:
	default:
		return nil, planError("segment %s: phase must be precondition, test or cleanup", seg.ID)
	}
	var err error
	if seg.SourceStepIDs, err = stringList(m["sourceStepIds"], "segment sourceStepIds"); err != nil {
		return nil, err
	}
	if seg.CheckpointIDs, err = stringList(m["checkpointIds"], "segment checkpointIds"); err != nil {
		return nil, err
	}
	if seg.Route == RouteDynamic {
		if seg.Phase != PhaseTest {
			return nil, invalid(fault.CodeDynamicSegmentOutsideTest, "only test segments may be dynamic: preconditions and cleanup must replay deterministically", "segmentId", seg.ID, "phase", seg.Phase)
		}
		if seg.DynamicStep, err = parseStep(m["dynamicStep"], 0); err != nil {
			return nil, err
		}
		if seg.DynamicStep.Type != stepExplore {
			return nil, planError("segment %s: a dynamic segment's step must be an explore step", seg.ID)
		}
		return seg, nil
	}
	if seg.Phase == PhaseTest {
		cos, _ := m["checkpointOracleSteps"].(map[string]any)
		seg.CheckpointOracleSteps = map[string]string{}
		for k, v := range cos {
			s, ok := v.(string)
			if !ok {
				return nil, planError("segment %s: checkpointOracleSteps values must be step IDs", seg.ID)
			}
			seg.CheckpointOracleSteps[k] = s
		}
	} else if seg.OracleStepIDs, err = stringList(m["oracleStepIds"], "segment oracleStepIds"); err != nil {
		return nil, err
	}
	if seg.Case, err = parseCase(m["case"].(map[string]any), seg.ID); err != nil {
		return nil, err
	}
	return seg, nil
}

func parseCase(m map[string]any, segID string) (*Case, error) {
	c := &Case{}
	var ok bool
	for _, f := range []struct {
		key string
		dst *string
	}{{"caseName", &c.Name}, {"caseDesc", &c.Desc}, {"targetAppPackage", &c.TargetAppPackage}, {"targetAppLabel", &c.TargetAppLabel}} {
		if *f.dst, ok = m[f.key].(string); !ok {
			return nil, planError("segment %s: case %s must be text", segID, f.key)
		}
	}
	for i, r := range m["operationLog"].(map[string]any)["steps"].([]any) {
		sm := r.(map[string]any)
		method := sm["operationMethod"].(map[string]any)
		st := CaseStep{Index: i, ActionEnum: method["actionEnum"].(string)}
		if st.StepID, ok = sm["stepId"].(string); !ok {
			return nil, planError("segment %s: step %d has no stepId", segID, i)
		}
		if st.OperationID, ok = sm["operationId"].(string); !ok {
			return nil, planError("segment %s: step %s has no operationId", segID, st.StepID)
		}
		if st.Params, ok = method["operationParam"].(map[string]any); !ok {
			return nil, planError("segment %s: step %s has no operationParam object", segID, st.StepID)
		}
		if node := sm["operationNode"]; node != nil {
			if st.Node, ok = node.(map[string]any); !ok {
				return nil, planError("segment %s: step %s's operationNode must be an object or null", segID, st.StepID)
			}
		}
		if nodeActions[st.ActionEnum] && !grounded(st.Node) {
			return nil, invalid(fault.CodeMissingSelector, "a node step needs a selector with resourceId, text, description or id (SoloPi's import refuses it otherwise)",
				"segmentId", segID, "stepId", st.StepID, "actionEnum", st.ActionEnum)
		}
		c.Steps = append(c.Steps, st)
	}
	return c, nil
}

func grounded(node map[string]any) bool {
	for _, k := range groundingKeys {
		if v, ok := node[k]; ok && v != nil && v != "" {
			return true
		}
	}
	return false
}

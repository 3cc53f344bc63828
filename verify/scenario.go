package verify

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
)

// Step kinds.
const (
	stepOperation = "operation"
	stepExplore   = "explore"
)

// Step is a normalized scenario step: a stable operation (one typed action,
// compiled into a SoloPi case) or an explore step (a goal for the Agent,
// with the actions it may use and its budget).
type Step struct {
	ID     string
	Type   string
	Action *action // operation
	// explore
	Goal           string
	AllowedActions []string
	Budget         Budget
}

func (s *Step) tree() map[string]any {
	if s.Type == stepExplore {
		return map[string]any{
			"id": s.ID, "type": stepExplore, "stability": "unknown", "goal": s.Goal,
			"allowedActions": strs(s.AllowedActions), "budget": s.Budget.tree(),
		}
	}
	return map[string]any{"id": s.ID, "type": stepOperation, "stability": "stable", "action": s.Action.tree()}
}

// checkpoint is an oracle checked after a step, covering some of the
// scenario's acceptance criteria. SegmentID and OracleStepID (the ASSERT
// step of a compiled case) are filled by compilation.
type checkpoint struct {
	ID                 string
	AfterStep          string
	AcceptanceCriteria []string
	Oracle             Oracle
	SegmentID          string
	OracleStepID       string
}

func (c *checkpoint) tree() map[string]any {
	m := map[string]any{
		"id": c.ID, "afterStep": c.AfterStep, "acceptanceCriteria": strs(c.AcceptanceCriteria),
		"oracle": c.Oracle.tree(), "segmentId": c.SegmentID,
	}
	if c.OracleStepID != "" {
		m["oracleStepId"] = c.OracleStepID
	}
	return m
}

// precondition is a UI oracle that must hold before the test steps run.
type precondition struct {
	ID     string
	Oracle Oracle
}

// cleanupItem is a required cleanup action or oracle.
type cleanupItem struct {
	ID     string
	Action *action
	Oracle *Oracle
}

func (c *cleanupItem) tree() map[string]any {
	m := map[string]any{"id": c.ID, "required": true}
	if c.Action != nil {
		m["action"] = c.Action.tree()
	} else {
		m["oracle"] = c.Oracle.tree()
	}
	return m
}

// Scenario is a compiled scenario of the plan's intent.
type Scenario struct {
	ID                 string
	Title              string
	AcceptanceCriteria []string
	DependsOn          []string
	// Bindings and TestData are the resolved binding maps.
	Bindings         map[string]any
	TestData         map[string]any
	Preconditions    []precondition
	Steps            []Step
	Checkpoints      []checkpoint
	Cleanup          []cleanupItem
	Budget           Budget
	TargetAppPackage string
	// TargetAppLabel is nil when the requirement names none.
	TargetAppLabel *string
	Route          string
	Segments       []Segment
}

// Checkpoint returns the checkpoint with id, or nil.
func (s *Scenario) Checkpoint(id string) *checkpoint {
	for i := range s.Checkpoints {
		if s.Checkpoints[i].ID == id {
			return &s.Checkpoints[i]
		}
	}
	return nil
}

func (s *Scenario) tree() map[string]any {
	pre := make([]any, len(s.Preconditions))
	for i, p := range s.Preconditions {
		pre[i] = map[string]any{"id": p.ID, "oracle": p.Oracle.tree()}
	}
	steps := make([]any, len(s.Steps))
	for i := range s.Steps {
		steps[i] = s.Steps[i].tree()
	}
	cps := make([]any, len(s.Checkpoints))
	for i := range s.Checkpoints {
		cps[i] = s.Checkpoints[i].tree()
	}
	cleanup := make([]any, len(s.Cleanup))
	for i := range s.Cleanup {
		cleanup[i] = s.Cleanup[i].tree()
	}
	segs := make([]any, len(s.Segments))
	for i := range s.Segments {
		segs[i] = s.Segments[i].tree()
	}
	var label any
	if s.TargetAppLabel != nil {
		label = *s.TargetAppLabel
	}
	return map[string]any{
		"id": s.ID, "title": s.Title, "acceptanceCriteria": strs(s.AcceptanceCriteria), "dependsOn": strs(s.DependsOn),
		"bindings": s.Bindings, "testData": s.TestData, "preconditions": pre, "steps": steps,
		"checkpoints": cps, "cleanup": cleanup, "budget": s.Budget.tree(),
		"targetAppPackage": s.TargetAppPackage, "targetAppLabel": label, "route": s.Route, "segments": segs,
	}
}

// resolveScenario resolves a scenario's bindings, expands its flow uses and
// checks every step, checkpoint, precondition and cleanup item. The route
// and segments are left to compileScenario.
func (n *normalized) resolveScenario(src *scenarioSource, acIDs map[string]bool) (*Scenario, error) {
	var missing []string
	for _, ac := range src.AcceptanceCriteria {
		if !acIDs[ac] {
			missing = append(missing, ac)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, invalid(fault.CodeUnknownAcceptanceCriterion, "the scenario refers to unknown acceptance criteria", "scenarioId", src.ID, "acceptanceCriteria", missing)
	}
	params, err := resolveMap(n.parameters, scope{}, "parameters")
	if err != nil {
		return nil, err
	}
	bindings := scope(params)
	testData, err := resolveMap(src.testData, bindings, src.ID+".testData")
	if err != nil {
		return nil, err
	}
	bindings = bindings.with(testData)
	explicit, err := resolveMap(src.bindings, bindings, src.ID+".bindings")
	if err != nil {
		return nil, err
	}
	bindings = bindings.with(explicit)

	sc := &Scenario{
		ID: src.ID, Title: src.Title, AcceptanceCriteria: src.AcceptanceCriteria, DependsOn: src.DependsOn,
		Bindings: explicit, TestData: testData, Budget: src.Budget,
	}
	pkg, err := resolve(src.targetAppPackage, bindings, src.ID+".targetAppPackage")
	if err != nil {
		return nil, err
	}
	pkgText, ok := pkg.(string)
	if !ok || pyStrip(pkgText) == "" {
		return nil, invalid(fault.CodeInvalidContract, "the scenario needs a targetAppPackage", "scenarioId", src.ID)
	}
	sc.TargetAppPackage = pyStrip(pkgText)
	label, err := resolve(src.targetAppLabel, bindings, src.ID+".targetAppLabel")
	if err != nil {
		return nil, err
	}
	if label != nil {
		l, ok := label.(string)
		if !ok {
			return nil, invalid(fault.CodeInvalidContract, "the scenario's targetAppLabel must be text")
		}
		sc.TargetAppLabel = &l
	}

	rawSteps, paths, err := n.expandSteps(src, bindings)
	if err != nil {
		return nil, err
	}
	stepIDs := map[string]bool{}
	ids := make([]string, 0, len(rawSteps))
	for i, raw := range rawSteps {
		st, err := normalizeStep(raw, i)
		if err != nil {
			return nil, at(err, paths[i])
		}
		sc.Steps = append(sc.Steps, *st)
		ids = append(ids, st.ID)
		stepIDs[st.ID] = true
	}
	if err := uniqueIDs(ids, "scenario steps"); err != nil {
		return nil, at(err, src.path+".steps")
	}
	if err := sc.resolveCheckpoints(src, bindings, stepIDs); err != nil {
		return nil, at(err, src.path)
	}
	if err := sc.resolvePreconditions(src, bindings); err != nil {
		return nil, at(err, src.path)
	}
	if err := sc.resolveCleanup(src, bindings); err != nil {
		return nil, at(err, src.path)
	}
	return sc, nil
}

// expandSteps replaces each flow use with the flow's steps, resolved with
// the scenario's bindings, then the flow's defaults, then the call site's
// bindings. Step IDs may themselves be parameterised (tap-${n}), which is
// how one flow can be used twice in a scenario.
//
// paths are the steps' places in the document, for errors: a flow's steps
// are where the flow declares them.
func (n *normalized) expandSteps(src *scenarioSource, bindings scope) (out []any, paths []string, err error) {
	flows := make(map[string]*flow, len(n.Flows))
	for i := range n.Flows {
		flows[n.Flows[i].ID] = &n.Flows[i]
	}
	for i, raw := range src.steps {
		out, paths, err = n.expandStep(src, bindings, flows, i, raw, out, paths)
		if err != nil {
			return nil, nil, at(err, fmt.Sprintf("%s.steps[%d]", src.path, i))
		}
	}
	return out, paths, nil
}

// expandStep appends step i of the scenario, or the steps of the flow it
// uses, to out (and their paths to paths).
func (n *normalized) expandStep(src *scenarioSource, bindings scope, flows map[string]*flow, i int, raw any, out []any, paths []string) ([]any, []string, error) {
	step, err := want.Object(raw, "scenario step")
	if err != nil {
		return nil, nil, err
	}
	use, isUse := step["use"]
	if !isUse {
		r, err := resolve(step, bindings, fmt.Sprintf("steps[%d]", i))
		if err != nil {
			return nil, nil, err
		}
		return append(out, r), append(paths, fmt.Sprintf("%s.steps[%d]", src.path, i)), nil
	}
	if unknown := canonjson.UnknownKeys(step, "use", "bindings"); len(unknown) > 0 {
		return nil, nil, invalid(fault.CodeInvalidFlowUse, "the flow use has unknown fields", "fields", unknown)
	}
	flowID, err := identifier(use, "flow reference")
	if err != nil {
		return nil, nil, at(err, ".use")
	}
	flow := flows[flowID]
	if flow == nil {
		return nil, nil, at(invalid(fault.CodeUnknownFlow, "the scenario uses an unknown reusable flow", "flowId", flowID), ".use")
	}
	defaults, err := resolveMap(flow.defaults, bindings, "flow defaults")
	if err != nil {
		return nil, nil, err
	}
	call := bindings.with(defaults)
	supplied, err := want.Object(canonjson.Get(step, "bindings", map[string]any{}), "flow bindings")
	if err != nil {
		return nil, nil, at(err, ".bindings")
	}
	resolvedSupplied, err := resolveMap(n.doc.bindingMap(src.pointer+"/steps/"+strconv.Itoa(i)+"/bindings", supplied), call, "flow bindings")
	if err != nil {
		return nil, nil, at(err, ".bindings")
	}
	call = call.with(resolvedSupplied)
	for j, fs := range flow.steps {
		r, err := resolve(fs, call, fmt.Sprintf("flow %s steps[%d]", flowID, j))
		if err != nil {
			return nil, nil, err
		}
		out = append(out, r)
		paths = append(paths, fmt.Sprintf("%s.steps[%d]", flow.path, j))
	}
	return out, paths, nil
}

func normalizeStep(raw any, i int) (*Step, error) {
	m, err := want.Object(raw, fmt.Sprintf("steps[%d]", i))
	if err != nil {
		return nil, err
	}
	id, err := identifier(m["id"], "step id")
	if err != nil {
		return nil, at(err, ".id")
	}
	switch canonjson.Get(m, "type", stepOperation) {
	case stepOperation:
		if unknown := canonjson.UnknownKeys(m, "id", "type", "action", "description", "stability"); len(unknown) > 0 {
			return nil, invalid(fault.CodeInvalidStep, "the operation step has unknown fields", "fields", unknown)
		}
		if canonjson.Get(m, "stability", "stable") != "stable" {
			return nil, at(allowed(invalid(fault.CodeInvalidStep, "unknown work must use an explore step", "stepId", id), "stable"), ".stability")
		}
		a, err := normalizeAction(m["action"], "step "+id+" action")
		if err != nil {
			return nil, at(err, ".action")
		}
		return &Step{ID: id, Type: stepOperation, Action: a}, nil
	case stepExplore:
		if unknown := canonjson.UnknownKeys(m, "id", "type", "goal", "allowedActions", "budget", "description"); len(unknown) > 0 {
			return nil, invalid(fault.CodeInvalidStep, "the explore step has unknown fields", "fields", unknown)
		}
		actions, err := normalizeAllowedActions(m["allowedActions"])
		if err != nil {
			return nil, at(err, ".allowedActions")
		}
		goal, err := text(m["goal"], "explore goal")
		if err != nil {
			return nil, at(err, ".goal")
		}
		b, err := normalizeBudget(m["budget"], "explore budget")
		if err != nil {
			return nil, at(err, ".budget")
		}
		return &Step{ID: id, Type: stepExplore, Goal: goal, AllowedActions: actions, Budget: b}, nil
	}
	return nil, at(allowed(invalid(fault.CodeInvalidStep, "the step type must be operation or explore", "stepId", id), stepOperation, stepExplore), ".type")
}

func normalizeAllowedActions(v any) ([]string, error) {
	items, err := want.List(v, "explore allowedActions", false)
	if err != nil {
		return nil, err
	}
	actions := make([]string, 0, len(items))
	for _, it := range items {
		s, err := text(it, "allowed action")
		if err != nil {
			return nil, at(err, fmt.Sprintf("[%d]", len(actions)))
		}
		actions = append(actions, s)
	}
	var unsupported []string
	for _, s := range actions {
		if !slices.Contains(TypedActions, s) && !slices.Contains(unsupported, s) {
			unsupported = append(unsupported, s)
		}
	}
	if len(unsupported) > 0 {
		slices.Sort(unsupported)
		return nil, allowed(invalid(fault.CodeUnsupportedAction, "the explore step allows unsupported actions", "actions", unsupported), TypedActions...)
	}
	seen := map[string]bool{}
	for _, s := range actions {
		if seen[s] {
			return nil, invalid(fault.CodeDuplicateAction, "the explore step's allowedActions must be unique")
		}
		seen[s] = true
	}
	return actions, nil
}

// resolveItem resolves one raw checkpoint, precondition or cleanup item
// with the scenario's bindings and reads its id.
func (sc *Scenario) resolveItem(raw any, bindings scope, kind string, i int) (map[string]any, string, error) {
	list := kind + "s"
	if kind == "cleanup" {
		list = kind
	}
	r, err := resolve(raw, bindings, fmt.Sprintf("%s.%s[%d]", sc.ID, list, i))
	if err != nil {
		return nil, "", err
	}
	m, err := want.Object(r, kind)
	if err != nil {
		return nil, "", err
	}
	id, err := identifier(m["id"], kind+" id")
	return m, id, err
}

func (sc *Scenario) resolveCheckpoints(src *scenarioSource, bindings scope, stepIDs map[string]bool) error {
	ids := make([]string, 0, len(src.checkpoints))
	scenarioACs := map[string]bool{}
	for _, ac := range sc.AcceptanceCriteria {
		scenarioACs[ac] = true
	}
	for i, raw := range src.checkpoints {
		m, id, err := sc.resolveItem(raw, bindings, "checkpoint", i)
		if err != nil {
			return at(err, fmt.Sprintf(".checkpoints[%d]", i))
		}
		cp := checkpoint{ID: id}
		if cp.AfterStep, err = identifier(m["afterStep"], "checkpoint afterStep"); err != nil {
			return at(err, fmt.Sprintf(".checkpoints[%d].afterStep", i))
		}
		if !stepIDs[cp.AfterStep] {
			return at(invalid(fault.CodeUnknownStep, "the checkpoint refers to an unknown step", "checkpointId", cp.ID, "afterStep", cp.AfterStep), fmt.Sprintf(".checkpoints[%d].afterStep", i))
		}
		acs, err := want.List(canonjson.Get(m, "acceptanceCriteria", strs(sc.AcceptanceCriteria)), "checkpoint acceptanceCriteria", false)
		if err != nil {
			return at(err, fmt.Sprintf(".checkpoints[%d].acceptanceCriteria", i))
		}
		if cp.AcceptanceCriteria, err = identifiers(acs, "checkpoint AC reference"); err != nil {
			return at(err, fmt.Sprintf(".checkpoints[%d].acceptanceCriteria", i))
		}
		for _, ac := range cp.AcceptanceCriteria {
			if !scenarioACs[ac] {
				return at(invalid(fault.CodeUnknownAcceptanceCriterion, "a checkpoint's acceptance criteria must belong to its scenario", "checkpointId", cp.ID), fmt.Sprintf(".checkpoints[%d].acceptanceCriteria", i))
			}
		}
		if cp.Oracle, err = normalizeOracle(m["oracle"], "checkpoint "+cp.ID+" oracle", true); err != nil {
			return at(err, fmt.Sprintf(".checkpoints[%d].oracle", i))
		}
		sc.Checkpoints = append(sc.Checkpoints, cp)
		ids = append(ids, cp.ID)
	}
	if err := uniqueIDs(ids, "scenario checkpoints"); err != nil {
		return at(err, ".checkpoints")
	}
	covered := map[string]bool{}
	for _, cp := range sc.Checkpoints {
		for _, ac := range cp.AcceptanceCriteria {
			covered[ac] = true
		}
	}
	var uncovered []string
	for _, ac := range sc.AcceptanceCriteria {
		if !covered[ac] && !slices.Contains(uncovered, ac) {
			uncovered = append(uncovered, ac)
		}
	}
	if len(uncovered) > 0 {
		slices.Sort(uncovered)
		return at(invalid(fault.CodeUncoveredAcceptanceCriterion, "an acceptance criterion of the scenario has no checkpoint", "scenarioId", sc.ID, "acceptanceCriteria", uncovered), ".acceptanceCriteria")
	}
	return nil
}

func (sc *Scenario) resolvePreconditions(src *scenarioSource, bindings scope) error {
	ids := make([]string, 0, len(src.preconditions))
	for i, raw := range src.preconditions {
		m, id, err := sc.resolveItem(raw, bindings, "precondition", i)
		if err != nil {
			return at(err, fmt.Sprintf(".preconditions[%d]", i))
		}
		p := precondition{ID: id}
		if p.Oracle, err = normalizeOracle(m["oracle"], "precondition "+p.ID+" oracle", false); err != nil {
			return at(err, fmt.Sprintf(".preconditions[%d].oracle", i))
		}
		sc.Preconditions = append(sc.Preconditions, p)
		ids = append(ids, p.ID)
	}
	return uniqueIDs(ids, "scenario preconditions")
}

func (sc *Scenario) resolveCleanup(src *scenarioSource, bindings scope) error {
	ids := make([]string, 0, len(src.cleanup))
	for i, raw := range src.cleanup {
		m, id, err := sc.resolveItem(raw, bindings, "cleanup", i)
		if err != nil {
			return at(err, fmt.Sprintf(".cleanup[%d]", i))
		}
		c := cleanupItem{ID: id}
		_, hasAction := m["action"]
		_, hasOracle := m["oracle"]
		if hasAction == hasOracle {
			return at(invalid(fault.CodeInvalidCleanup, "a cleanup item has exactly one of action and oracle", "cleanupId", c.ID), fmt.Sprintf(".cleanup[%d]", i))
		}
		if hasAction {
			if c.Action, err = normalizeAction(m["action"], "cleanup "+c.ID+" action"); err != nil {
				return at(err, fmt.Sprintf(".cleanup[%d].action", i))
			}
		} else {
			o, err := normalizeOracle(m["oracle"], "cleanup "+c.ID+" oracle", false)
			if err != nil {
				return at(err, fmt.Sprintf(".cleanup[%d].oracle", i))
			}
			c.Oracle = &o
		}
		sc.Cleanup = append(sc.Cleanup, c)
		ids = append(ids, c.ID)
	}
	return uniqueIDs(ids, "scenario cleanup")
}

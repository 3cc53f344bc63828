package verify

import (
	"github.com/solopi-dev/solopi/fault"
	"slices"
	"sort"
)

// Plan is a compiled verification plan (solopi.ai.verification-plan/v1).
type Plan struct {
	SourceFingerprint string
	Requirement       requirement
	// Parameters are the requirement's parameters as written (unresolved).
	Parameters     map[string]any
	ExecutionOrder []string
	// Scenarios are in execution order.
	Scenarios []*Scenario
	// Fingerprint is the canonical SHA-256 of the plan without it.
	Fingerprint string
	// Warnings are compile-time notes that do not make the plan invalid
	// (not part of the plan or its fingerprint).
	Warnings []Warning
}

// Scenario returns the scenario with id, or nil.
func (p *Plan) Scenario(id string) *Scenario {
	for _, s := range p.Scenarios {
		if s.ID == id {
			return s
		}
	}
	return nil
}

// Tree is the plan's JSON (with planFingerprint).
func (p *Plan) Tree() map[string]any {
	t := p.unsignedTree()
	t["planFingerprint"] = p.Fingerprint
	return t
}

func (p *Plan) unsignedTree() map[string]any {
	scenarios := make([]any, len(p.Scenarios))
	for i, s := range p.Scenarios {
		scenarios[i] = s.tree()
	}
	params := p.Parameters
	if params == nil {
		params = map[string]any{}
	}
	return map[string]any{
		"schemaVersion":     planSchema,
		"sourceFingerprint": p.SourceFingerprint,
		"goalTree":          goalTree(p.Requirement, p.Scenarios),
		"intent": map[string]any{
			"schemaVersion":  intentSchema,
			"requirement":    p.Requirement.tree(),
			"parameters":     params,
			"executionOrder": strs(p.ExecutionOrder),
			"scenarios":      scenarios,
		},
	}
}

// CaseCount is the number of deterministic segments (one compiled case
// each; identical cases count once per segment, as solopi-ai counts).
func (p *Plan) CaseCount() int {
	n := 0
	for _, s := range p.Scenarios {
		for i := range s.Segments {
			if s.Segments[i].Case != nil {
				n++
			}
		}
	}
	return n
}

// Cases lists the distinct compiled cases in plan order.
func (p *Plan) Cases() []*Case {
	var out []*Case
	seen := map[string]bool{}
	for _, s := range p.Scenarios {
		for i := range s.Segments {
			c := s.Segments[i].Case
			if c != nil && !seen[c.Name] {
				seen[c.Name] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// Compile turns a requirement into a plan: normalize, resolve every
// scenario, order them by dependencies, cut them into segments, build the
// goal tree and fingerprint the result. The plan is validated before it is
// returned.
func Compile(doc *Document) (*Plan, error) {
	n, err := Normalize(doc)
	if err != nil {
		return nil, err
	}
	return n.Compile()
}

// Compile compiles a normalized requirement.
func (n *normalized) Compile() (*Plan, error) {
	acIDs := map[string]bool{}
	for _, ac := range n.Requirement.AcceptanceCriteria {
		acIDs[ac.ID] = true
	}
	resolved := make([]*Scenario, 0, len(n.Scenarios))
	for i := range n.Scenarios {
		sc, err := n.resolveScenario(&n.Scenarios[i], acIDs)
		if err != nil {
			return nil, within(err, n.Scenarios[i].path)
		}
		resolved = append(resolved, sc)
	}
	order, err := executionOrder(resolved)
	if err != nil {
		return nil, within(err, ".scenarios")
	}
	byID := map[string]*Scenario{}
	for i, sc := range resolved {
		if err := compileScenario(n.Requirement.ID, sc, n.Scenarios[i].requestedRoute); err != nil {
			return nil, within(err, n.Scenarios[i].path)
		}
		byID[sc.ID] = sc
	}
	plan := &Plan{
		SourceFingerprint: n.SourceFingerprint(),
		Requirement:       n.Requirement,
		Parameters:        n.parameters.values,
		ExecutionOrder:    order,
	}
	for _, id := range order {
		plan.Scenarios = append(plan.Scenarios, byID[id])
	}
	plan.Fingerprint = fingerprint(plan.unsignedTree())
	if _, err := validateTree(plan.Tree()); err != nil {
		return nil, err
	}
	plan.Warnings = planWarnings(plan)
	return plan, nil
}

// executionOrder is Kahn's topological order of the scenarios, ties broken
// by declaration order.
func executionOrder(scenarios []*Scenario) ([]string, error) {
	pos := make(map[string]int, len(scenarios))
	for i, s := range scenarios {
		pos[s.ID] = i
	}
	waiting := make(map[string]map[string]bool, len(scenarios))
	consumers := make(map[string][]string, len(scenarios))
	for _, s := range scenarios {
		deps := map[string]bool{}
		for _, d := range s.DependsOn {
			deps[d] = true
		}
		if deps[s.ID] {
			return nil, invalid(fault.CodeDependencyCycle, "a scenario cannot depend on itself", "scenarioId", s.ID)
		}
		var missing []string
		for d := range deps {
			if _, ok := pos[d]; !ok {
				missing = append(missing, d)
			}
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			return nil, invalid(fault.CodeUnknownDependency, "the scenario depends on an unknown scenario", "scenarioId", s.ID, "dependencies", missing)
		}
		waiting[s.ID] = deps
		for d := range deps {
			consumers[d] = append(consumers[d], s.ID)
		}
	}
	byPos := func(ids []string) { sort.Slice(ids, func(i, j int) bool { return pos[ids[i]] < pos[ids[j]] }) }
	var ready, out []string
	for _, s := range scenarios {
		if len(waiting[s.ID]) == 0 {
			ready = append(ready, s.ID)
		}
	}
	done := map[string]bool{}
	for len(ready) > 0 {
		id := ready[0]
		ready = ready[1:]
		out = append(out, id)
		done[id] = true
		cs := slices.Clone(consumers[id])
		byPos(cs)
		for _, c := range cs {
			delete(waiting[c], id)
			if len(waiting[c]) == 0 && !done[c] && !slices.Contains(ready, c) {
				ready = append(ready, c)
				byPos(ready)
			}
		}
	}
	if len(out) != len(scenarios) {
		var blocked []string
		for _, s := range scenarios {
			if !done[s.ID] {
				blocked = append(blocked, s.ID)
			}
		}
		return nil, invalid(fault.CodeDependencyCycle, "the scenario dependency graph has a cycle", "scenarios", blocked)
	}
	return out, nil
}

// compileScenario cuts a resolved scenario into segments (precondition,
// test runs, cleanup), sets its route and links each checkpoint to its
// segment and ASSERT step.
func compileScenario(requirementID string, sc *Scenario, requested any) error {
	if len(sc.Preconditions) > 0 {
		sc.Segments = append(sc.Segments, preconditionSegment(requirementID, sc))
	}
	byStep := map[string][]*checkpoint{}
	for i := range sc.Checkpoints {
		cp := &sc.Checkpoints[i]
		byStep[cp.AfterStep] = append(byStep[cp.AfterStep], cp)
	}
	var tests []Segment
	var stable []*Step
	flush := func() {
		if len(stable) > 0 {
			tests = append(tests, fixedSegment(requirementID, sc, len(tests)+1, stable, byStep))
			stable = nil
		}
	}
	for i := range sc.Steps {
		st := &sc.Steps[i]
		if st.Type == stepOperation {
			stable = append(stable, st)
			// A vision checkpoint is judged on the replay's final
			// screenshot, so the compiled case must end at its step.
			if hasVision(byStep[st.ID]) {
				flush()
			}
			continue
		}
		flush()
		var ids []string
		for _, cp := range byStep[st.ID] {
			ids = append(ids, cp.ID)
		}
		step := *st
		seg := Segment{Phase: PhaseTest, Route: RouteDynamic, SourceStepIDs: []string{st.ID}, CheckpointIDs: ids, DynamicStep: &step}
		seg.ID = segmentID(sc.ID, PhaseTest, len(tests)+1, seg.semantic())
		tests = append(tests, seg)
	}
	flush()
	sc.Segments = append(sc.Segments, tests...)
	if len(sc.Cleanup) > 0 {
		sc.Segments = append(sc.Segments, cleanupSegment(requirementID, sc))
	}

	sc.Route = testRoute(tests)
	switch requested {
	case "auto", routeDeterministic, RouteDynamic, routeHybrid:
	default:
		return invalid(fault.CodeInvalidRoute, "the scenario route must be auto, deterministic, dynamic or hybrid", "route", requested)
	}
	if requested != "auto" && requested != sc.Route {
		return invalid(fault.CodeRouteMismatch, "the requested route does not match the compiled work", "scenarioId", sc.ID, "requested", requested, "compiled", sc.Route)
	}
	for i := range tests {
		seg := &tests[i]
		for _, id := range seg.CheckpointIDs {
			cp := sc.Checkpoint(id)
			cp.SegmentID = seg.ID
			if seg.Route == routeDeterministic {
				cp.OracleStepID = seg.CheckpointOracleSteps[id]
			}
		}
	}
	return nil
}

// HasVision reports whether any checkpoint of the plan has a vision
// oracle (verify-run then needs a vision judge).
func (p *Plan) HasVision() bool {
	for _, sc := range p.Scenarios {
		for i := range sc.Checkpoints {
			if sc.Checkpoints[i].Oracle.Vision != nil {
				return true
			}
		}
	}
	return false
}

func hasVision(cps []*checkpoint) bool {
	for _, cp := range cps {
		if cp.Oracle.Vision != nil {
			return true
		}
	}
	return false
}

// testRoute is the scenario route its test segments imply.
func testRoute[S ~[]Segment](tests S) string {
	route := ""
	for _, s := range tests {
		if route != "" && route != s.Route {
			return routeHybrid
		}
		route = s.Route
	}
	return route
}

// fixedSegment compiles a run of stable steps, each followed by the ASSERT
// steps of the UI checkpoints after it.
func fixedSegment(requirementID string, sc *Scenario, ordinal int, steps []*Step, byStep map[string][]*checkpoint) Segment {
	opID := operationID(sc.ID, PhaseTest)
	var compiled []CaseStep
	seg := Segment{Phase: PhaseTest, Route: routeDeterministic, CheckpointOracleSteps: map[string]string{}}
	for _, st := range steps {
		compiled = append(compiled, compileAction(st.ID, st.Action, opID, len(compiled)))
		seg.SourceStepIDs = append(seg.SourceStepIDs, st.ID)
		for _, cp := range byStep[st.ID] {
			seg.CheckpointIDs = append(seg.CheckpointIDs, cp.ID)
			if cp.Oracle.UI == nil {
				continue
			}
			stepID := "oracle-" + cp.ID
			compiled = append(compiled, compileOracle(stepID, cp.Oracle, opID, len(compiled)))
			seg.CheckpointOracleSteps[cp.ID] = stepID
		}
	}
	seg.Case = newCase(requirementID, sc, PhaseTest, ordinal, compiled)
	seg.ID = segmentID(sc.ID, PhaseTest, ordinal, seg.semantic())
	return seg
}

func preconditionSegment(requirementID string, sc *Scenario) Segment {
	opID := operationID(sc.ID, PhasePrecondition)
	seg := Segment{Phase: PhasePrecondition, Route: routeDeterministic}
	var steps []CaseStep
	for i, p := range sc.Preconditions {
		id := PhasePrecondition + "-" + p.ID
		steps = append(steps, compileOracle(id, p.Oracle, opID, i))
		seg.OracleStepIDs = append(seg.OracleStepIDs, id)
	}
	seg.Case = newCase(requirementID, sc, PhasePrecondition, 1, steps)
	seg.ID = segmentID(sc.ID, PhasePrecondition, 1, seg.semantic())
	return seg
}

func cleanupSegment(requirementID string, sc *Scenario) Segment {
	opID := operationID(sc.ID, PhaseCleanup)
	seg := Segment{Phase: PhaseCleanup, Route: routeDeterministic}
	var steps []CaseStep
	for _, c := range sc.Cleanup {
		seg.SourceStepIDs = append(seg.SourceStepIDs, c.ID)
		if c.Action != nil {
			steps = append(steps, compileAction(c.ID, c.Action, opID, len(steps)))
			continue
		}
		id := "cleanup-oracle-" + c.ID
		steps = append(steps, compileOracle(id, *c.Oracle, opID, len(steps)))
		seg.OracleStepIDs = append(seg.OracleStepIDs, id)
	}
	seg.Case = newCase(requirementID, sc, PhaseCleanup, 1, steps)
	seg.ID = segmentID(sc.ID, PhaseCleanup, 1, seg.semantic())
	return seg
}

// goalTree links requirement → acceptance criteria → scenarios (in
// execution order) → checkpoints.
func goalTree(req requirement, scenarios []*Scenario) map[string]any {
	acs := make([]any, 0, len(req.AcceptanceCriteria))
	for _, ac := range req.AcceptanceCriteria {
		var scNodes []any
		for _, sc := range scenarios {
			if !slices.Contains(sc.AcceptanceCriteria, ac.ID) {
				continue
			}
			cpNodes := []any{}
			for _, cp := range sc.Checkpoints {
				if slices.Contains(cp.AcceptanceCriteria, ac.ID) {
					cpNodes = append(cpNodes, map[string]any{"id": cp.ID, "type": "checkpoint", "afterStep": cp.AfterStep})
				}
			}
			scNodes = append(scNodes, map[string]any{"id": sc.ID, "type": "scenario", "dependsOn": strs(sc.DependsOn), "children": cpNodes})
		}
		if scNodes == nil {
			scNodes = []any{}
		}
		acs = append(acs, map[string]any{"id": ac.ID, "type": "acceptance_criterion", "text": ac.Text, "children": scNodes})
	}
	return map[string]any{"id": req.ID, "type": "requirement", "title": req.Title, "children": acs}
}

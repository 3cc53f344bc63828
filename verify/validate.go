package verify

import (
	"encoding/json"
	"math/big"

	"slices"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/oracle"
	"github.com/solopi-dev/solopi/protocol"
)

// Summary is what verify-validate reports for a valid plan.
type Summary struct {
	Valid           bool   `json:"valid"`
	PlanFingerprint string `json:"planFingerprint"`
	ScenarioCount   int    `json:"scenarioCount"`
	SegmentCount    int    `json:"segmentCount"`
	CheckpointCount int    `json:"checkpointCount"`
}

// LoadPlan parses and validates a plan file's bytes.
func LoadPlan(data []byte) (*Plan, *Summary, error) {
	if err := CheckEncoding(data, "plan", fault.CodeInvalidUTF8); err != nil {
		return nil, nil, err
	}
	tree, err := canonjson.Decode(data)
	if err != nil {
		return nil, nil, fault.Wrap(fault.Invalid, fault.CodeInvalidJSON, "the plan is not valid JSON", err)
	}
	if _, err := canonjson.Marshal(tree); err != nil {
		return nil, nil, fault.Wrap(fault.Invalid, fault.CodeInvalidJSON, "the plan has a value canonical JSON cannot represent", err)
	}
	return validate(tree)
}

// validateTree runs every check on a decoded plan: first solopi-ai's, in
// its order and with its error codes, then ours (see checkStrict).
func validateTree(tree any) (*Summary, error) {
	_, s, err := validate(tree)
	return s, err
}

func validate(tree any) (*Plan, *Summary, error) {
	sum, err := checkCompatible(tree)
	if err != nil {
		return nil, nil, err
	}
	plan, err := checkStrict(tree.(map[string]any))
	if err != nil {
		return nil, nil, err
	}
	return plan, sum, nil
}

// checkCompatible makes solopi-ai's plan checks, in its order.
func checkCompatible(tree any) (*Summary, error) {
	src, err := want.Object(tree, "verification plan")
	if err != nil {
		return nil, err
	}
	if src["schemaVersion"] != planSchema {
		return nil, invalid(fault.CodeUnsupportedSchema, "unsupported verification plan schema")
	}
	fp, ok := src["planFingerprint"].(string)
	if !ok || !protocol.ValidHex(fp, 64, false) {
		return nil, invalid(fault.CodeInvalidFingerprint, "the plan fingerprint is missing or invalid")
	}
	unsigned := make(map[string]any, len(src))
	for k, v := range src {
		if k != "planFingerprint" {
			unsigned[k] = v
		}
	}
	if fingerprint(unsigned) != fp {
		return nil, invalid(fault.CodeFingerprintMismatch, "the plan's content does not match its fingerprint")
	}
	intent, err := want.Object(src["intent"], "intent")
	if err != nil {
		return nil, err
	}
	if intent["schemaVersion"] != intentSchema {
		return nil, invalid(fault.CodeUnsupportedSchema, "unsupported test intent schema")
	}
	rawScenarios, err := want.List(intent["scenarios"], "intent scenarios", false)
	if err != nil {
		return nil, err
	}
	scenarios := make([]map[string]any, len(rawScenarios))
	ids := make([]string, len(rawScenarios))
	for i, r := range rawScenarios {
		m, err := want.Object(r, "intent scenario")
		if err != nil {
			return nil, err
		}
		id, ok := m["id"].(string)
		if !ok {
			return nil, invalid(fault.CodeInvalidID, "every intent scenario needs an id")
		}
		scenarios[i], ids[i] = m, id
	}
	if err := uniqueIDs(ids, "intent scenarios"); err != nil {
		return nil, err
	}
	order, err := want.List(intent["executionOrder"], "executionOrder", false)
	if err != nil {
		return nil, err
	}
	if len(order) != len(ids) {
		return nil, invalid(fault.CodeInvalidExecutionOrder, "the scenario order does not match the compiled DAG")
	}
	for i := range order {
		if order[i] != ids[i] {
			return nil, invalid(fault.CodeInvalidExecutionOrder, "the scenario order does not match the compiled DAG")
		}
	}
	if err := checkDAG(scenarios); err != nil {
		return nil, err
	}
	req, _ := intent["requirement"].(map[string]any)
	rawACs, err := want.List(req["acceptanceCriteria"], "plan ACs", false)
	if err != nil {
		return nil, err
	}
	acIDs := map[string]bool{}
	for _, r := range rawACs {
		m, _ := r.(map[string]any)
		id, ok := m["id"].(string)
		if !ok {
			return nil, invalid(fault.CodeInvalidID, "every plan acceptance criterion needs an id")
		}
		acIDs[id] = true
	}
	sum := &Summary{Valid: true, PlanFingerprint: fp, ScenarioCount: len(scenarios)}
	covered := map[string]bool{}
	for _, sc := range scenarios {
		segIDs, err := checkSegments(sc, sum)
		if err != nil {
			return nil, err
		}
		cps, err := want.List(sc["checkpoints"], "scenario checkpoints", false)
		if err != nil {
			return nil, err
		}
		for _, r := range cps {
			cp, _ := r.(map[string]any)
			if _, err := normalizeOracle(cp["oracle"], "compiled checkpoint oracle", true); err != nil {
				return nil, err
			}
			segID, _ := cp["segmentId"].(string)
			if !segIDs[segID] {
				return nil, invalid(fault.CodeUnknownSegment, "the checkpoint refers to an unknown segment")
			}
			refs, _ := canonjson.Get(cp, "acceptanceCriteria", []any{}).([]any)
			if len(refs) == 0 {
				return nil, invalid(fault.CodeUnknownAcceptanceCriterion, "the checkpoint's acceptance criteria mapping is invalid")
			}
			for _, ref := range refs {
				s, ok := ref.(string)
				if !ok || !acIDs[s] {
					return nil, invalid(fault.CodeUnknownAcceptanceCriterion, "the checkpoint's acceptance criteria mapping is invalid")
				}
				covered[s] = true
			}
			sum.CheckpointCount++
		}
	}
	var missing []string
	for id := range acIDs {
		if !covered[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, invalid(fault.CodeUncoveredAcceptanceCriterion, "an acceptance criterion of the plan has no checkpoint", "acceptanceCriteria", missing)
	}
	return sum, nil
}

// checkDAG re-checks the scenario dependencies of a plan.
func checkDAG(scenarios []map[string]any) error {
	parsed := make([]*Scenario, len(scenarios))
	for i, m := range scenarios {
		deps, ok := m["dependsOn"].([]any)
		if !ok {
			return invalid(fault.CodeInvalidContract, "every intent scenario needs a dependsOn list")
		}
		sc := &Scenario{ID: m["id"].(string)}
		for _, d := range deps {
			s, ok := d.(string)
			if !ok {
				return invalid(fault.CodeUnknownDependency, "a scenario dependency must be a scenario id", "scenarioId", sc.ID)
			}
			sc.DependsOn = append(sc.DependsOn, s)
		}
		parsed[i] = sc
	}
	_, err := executionOrder(parsed)
	return err
}

// checkSegments makes solopi-ai's per-segment checks of one scenario and
// returns its segment IDs.
func checkSegments(sc map[string]any, sum *Summary) (map[string]bool, error) {
	segs, err := want.List(sc["segments"], "scenario segments", false)
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	testRoutes := map[any]bool{}
	var firstRoute any
	for _, r := range segs {
		seg, _ := r.(map[string]any)
		id, err := identifier(seg["segmentId"], "segment id")
		if err != nil {
			return nil, err
		}
		if ids[id] {
			return nil, invalid(fault.CodeDuplicateID, "the scenario has a duplicate segment ID", "segmentId", id)
		}
		ids[id] = true
		if seg["phase"] == PhaseTest {
			route := seg["route"]
			if isContainer(route) {
				return nil, invalid(fault.CodeInvalidRoute, "invalid segment route")
			}
			if len(testRoutes) == 0 {
				firstRoute = route
			}
			testRoutes[route] = true
		}
		switch seg["route"] {
		case RouteDynamic:
			step, err := want.Object(seg["dynamicStep"], "dynamic step")
			if err != nil {
				return nil, err
			}
			if !truthy(step["allowedActions"]) || !truthy(step["budget"]) {
				return nil, invalid(fault.CodeInvalidStep, "a dynamic segment must stay bounded (allowedActions and budget)")
			}
		case routeDeterministic:
			if err := checkCase(seg, sc, id); err != nil {
				return nil, err
			}
		default:
			return nil, invalid(fault.CodeInvalidRoute, "invalid segment route", "segmentId", id)
		}
		sum.SegmentCount++
	}
	want := firstRoute
	switch {
	case len(testRoutes) > 1:
		want = routeHybrid
	case len(testRoutes) == 0:
		return nil, invalid(fault.CodeRouteMismatch, "the scenario has no test segment")
	}
	if sc["route"] != want {
		return nil, invalid(fault.CodeRouteMismatch, "the scenario route does not match its segments")
	}
	return ids, nil
}

func checkCase(seg map[string]any, sc map[string]any, segID string) error {
	c, err := want.Object(seg["case"], "compiled SoloPi case")
	if err != nil {
		return err
	}
	if !oracle.PyEqual(c["targetAppPackage"], sc["targetAppPackage"]) {
		return invalid(fault.CodeCompiledCaseMismatch, "the compiled case's target does not match its scenario", "segmentId", segID)
	}
	log, err := want.Object(c["operationLog"], "compiled operationLog")
	if err != nil {
		return err
	}
	steps, err := want.List(log["steps"], "compiled case steps", false)
	if err != nil {
		return err
	}
	stepIDs := map[string]bool{}
	for i, r := range steps {
		st, err := want.Object(r, "compiled case step")
		if err != nil {
			return err
		}
		if !oracle.PyEqual(st["operationIndex"], int64(i)) {
			return invalid(fault.CodeCompiledCaseMismatch, "the compiled case's operation indexes must be contiguous", "segmentId", segID, "stepIndex", i)
		}
		id, err := identifier(st["stepId"], "compiled case stepId")
		if err != nil {
			return err
		}
		if stepIDs[id] {
			return invalid(fault.CodeCompiledCaseMismatch, "the compiled case's stepIds must be unique", "segmentId", segID, "stepId", id)
		}
		stepIDs[id] = true
		method, err := want.Object(st["operationMethod"], "compiled operation method")
		if err != nil {
			return err
		}
		enum, _ := method["actionEnum"].(string)
		if !compiledActions[enum] {
			return invalid(fault.CodeUnsafeCompiledAction, "the compiled verification case holds an action that is not allowed",
				"segmentId", segID, "stepId", id, "actionEnum", method["actionEnum"])
		}
	}
	cos, ok := canonjson.Get(seg, "checkpointOracleSteps", map[string]any{}).(map[string]any)
	if !ok {
		return invalid(fault.CodeCompiledCaseMismatch, "checkpointOracleSteps must be an object", "segmentId", segID)
	}
	for cpID, want := range cos {
		n, isAssert := 0, false
		for _, r := range steps {
			st := r.(map[string]any)
			if oracle.PyEqual(st["stepId"], want) {
				n++
				m, _ := st["operationMethod"].(map[string]any)
				isAssert = m["actionEnum"] == "ASSERT"
			}
		}
		if n != 1 || !isAssert {
			return invalid(fault.CodeCompiledCaseMismatch, "a checkpoint must map to exactly one compiled ASSERT step", "segmentId", segID, "checkpointId", cpID)
		}
	}
	return nil
}

// truthy is Python's bool() of a JSON value.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	case json.Number:
		r, ok := new(big.Rat).SetString(string(x))
		return !ok || r.Sign() != 0
	}
	return true
}

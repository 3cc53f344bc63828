package execution

import (
	"errors"
	"fmt"
	"slices"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/oracle"
	"github.com/solopi-dev/solopi/verify"
)

// decisions is a static decisions file:
// {"<scenarioId>": {"<exploreStepId>": [decision, …]}}.
type decisions map[string]map[string][]map[string]any

// parseDecisions reads a decisions file and checks its shape against the
// plan before anything runs: a scenario's value must be an object and an
// explore step's value a list of objects (invalid_decisions, exit 3).
// Entries for scenarios or steps the plan does not have are ignored, as
// solopi-ai ignores them.
func parseDecisions(data []byte, plan *verify.Plan) (decisions, error) {
	if err := verify.CheckEncoding(data, "decisions file", fault.CodeInvalidDecisions); err != nil {
		return nil, err
	}
	tree, err := canonjson.Decode(data)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, fault.CodeInvalidDecisions, "the decisions file is not valid JSON", err)
	}
	top, ok := tree.(map[string]any)
	if !ok {
		return nil, usage(fault.CodeInvalidDecisions, "the decisions file must hold an object")
	}
	out := decisions{}
	for _, sc := range plan.Scenarios {
		raw, present := top[sc.ID]
		if !present {
			continue
		}
		steps, ok := raw.(map[string]any)
		if !ok {
			return nil, usage(fault.CodeInvalidDecisions, "a scenario's decisions must be an object", "scenarioId", sc.ID)
		}
		for _, seg := range sc.Segments {
			if seg.DynamicStep == nil {
				continue
			}
			id := seg.DynamicStep.ID
			raw, present := steps[id]
			if !present {
				continue
			}
			items, ok := raw.([]any)
			if !ok {
				return nil, usage(fault.CodeInvalidDecisions, "an explore step's decisions must be a list", "scenarioId", sc.ID, "stepId", id)
			}
			list := make([]map[string]any, len(items))
			for i, it := range items {
				if list[i], ok = it.(map[string]any); !ok {
					return nil, usage(fault.CodeInvalidDecisions, "every Agent decision must be an object", "scenarioId", sc.ID, "stepId", id, "index", i)
				}
			}
			if out[sc.ID] == nil {
				out[sc.ID] = map[string][]map[string]any{}
			}
			out[sc.ID][id] = list
		}
	}
	return out, nil
}

// Decision kinds.
const (
	decisionAct     = "act"
	decisionDone    = "done"
	decisionBlocked = "blocked"
)

// errDecision is a decision the engine refuses (the segment becomes
// not_tested, agent_execution_failed).
var errDecision = errors.New("invalid Agent decision")

// usage is a decisions-file error (exit 3) with detail fields as key,
// value pairs.
func usage(code, msg string, kv ...any) error {
	e := fault.Usage(code, msg)
	for i := 0; i+1 < len(kv); i += 2 {
		e.With(kv[i].(string), kv[i+1])
	}
	return e
}

func decisionError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errDecision, fmt.Sprintf(format, args...))
}

// checkKeys refuses keys outside allowed.
func checkKeys(m map[string]any, what string, allowed ...string) error {
	if unknown := canonjson.UnknownKeys(m, allowed...); len(unknown) > 0 {
		return decisionError("%s has unknown fields %v", what, unknown)
	}
	return nil
}

// decisionActionFields are the keys a decision's action may carry: the
// requirement's, plus an explicit nodeId for node actions.
var decisionActionFields = map[string][]string{
	verify.ActionClick:     {"type", "nodeId", "selector"},
	verify.ActionLongClick: {"type", "nodeId", "selector", "durationMs"},
	verify.ActionInput:     {"type", "nodeId", "selector", "text"},
	verify.ActionBack:      {"type"},
	verify.ActionHome:      {"type"},
	verify.ActionScroll:    {"type", "nodeId", "selector", "direction", "distance"},
	verify.ActionWait:      {"type", "durationMs"},
}

// targetNode resolves a decision's action target against the observation:
// an explicit nodeId must exist, a selector must match exactly one node
// (equality over the six selector keys) with a nodeId; never both. Global
// actions have none; a scroll may have none.
func targetNode(action map[string]any, observation map[string]any) (string, error) {
	t, _ := action["type"].(string)
	fields, ok := decisionActionFields[t]
	if !ok {
		return "", decisionError("unsupported dynamic action type %v", action["type"])
	}
	if err := checkKeys(action, "the dynamic action", fields...); err != nil {
		return "", err
	}
	switch t {
	case verify.ActionClick, verify.ActionLongClick, verify.ActionInput, verify.ActionScroll:
	default:
		return "", nil
	}
	explicit, hasNode := action["nodeId"]
	sel, hasSel := action["selector"]
	if hasNode && explicit != nil && hasSel && sel != nil {
		return "", decisionError("a dynamic action cannot have both nodeId and selector")
	}
	page, _ := observation["page"].(map[string]any)
	if hasNode && explicit != nil {
		id, ok := explicit.(string)
		if !ok || id == "" {
			return "", decisionError("a dynamic action's nodeId must be non-empty text")
		}
		found := false
		oracle.Walk(page, func(n map[string]any) { found = found || n["nodeId"] == id })
		if !found {
			return "", decisionError("nodeId %q is not in the current observation", id)
		}
		return id, nil
	}
	if !hasSel || sel == nil {
		if t == verify.ActionScroll {
			return "", nil
		}
		return "", decisionError("a node action needs a nodeId or a selector")
	}
	m, ok := sel.(map[string]any)
	if !ok || len(m) == 0 {
		return "", decisionError("a dynamic action's selector must be a non-empty object")
	}
	if unknown := canonjson.UnknownKeys(m, oracle.SelectorKeys...); len(unknown) > 0 {
		return "", decisionError("the selector has unsupported fields %v", unknown)
	}
	matches := oracle.Match(page, oracle.Selector(m))
	if len(matches) != 1 {
		return "", decisionError("the selector must match exactly one node of the current observation (matched %d)", len(matches))
	}
	id, ok := matches[0]["nodeId"].(string)
	if !ok {
		return "", decisionError("the node the selector matched has no nodeId")
	}
	return id, nil
}

// checked is a decision the engine accepted: its kind and, for an act,
// the request to send (all but the session).
type checked struct {
	kind string
	act  ActRequest
}

// errNoObservation is an act decision with no observation to act on.
var errNoObservation = errors.New("no observation to act on")

// checkDecision is every check the engine makes of decision i of an
// explore step before it sends anything, on the observation it would act
// on: the one path of a decision from a file or a provider to the phone.
// An error is a refused decision (the segment is not_tested,
// agent_execution_failed) or errNoObservation.
func checkDecision(step *verify.Step, i int, dec, obs map[string]any) (checked, error) {
	switch dec["type"] {
	case decisionDone:
		return checked{kind: decisionDone}, checkKeys(dec, "an Agent done decision", "type", "reason", "modelReceipt", "fallback")
	case decisionBlocked:
		return checked{kind: decisionBlocked}, nil
	case decisionAct:
		req, err := checkAct(step, i, dec, obs)
		return checked{kind: decisionAct, act: req}, err
	}
	return checked{}, decisionError("the decision type must be act, done or blocked")
}

// checkAct checks an act decision (its keys, an allowed typed action, the
// action's fields and target against the observation) and builds its
// request; stepId defaults to <exploreId>-NNN.
func checkAct(step *verify.Step, i int, dec, obs map[string]any) (ActRequest, error) {
	if err := checkKeys(dec, "an Agent act decision", "type", "stepId", "action", "modelReceipt", "fallback"); err != nil {
		return ActRequest{}, err
	}
	action, ok := dec["action"].(map[string]any)
	if !ok {
		return ActRequest{}, decisionError("an act decision needs a typed action object")
	}
	if !allowedAction(step, action["type"]) {
		return ActRequest{}, decisionError("action %v is not in the step's allowedActions", action["type"])
	}
	if obs == nil {
		return ActRequest{}, errNoObservation
	}
	nodeID, err := targetNode(action, obs)
	if err != nil {
		return ActRequest{}, err
	}
	req, err := actRequest(action, nodeID)
	if err != nil {
		return ActRequest{}, err
	}
	req.StepID = fmt.Sprintf("%s-%03d", step.ID, i+1)
	if v, ok := dec["stepId"]; ok {
		s, ok := v.(string)
		if !ok || s == "" {
			return ActRequest{}, decisionError("stepId must be non-empty text")
		}
		req.StepID = s
	}
	req.ObservationID, _ = obs["observationId"].(string)
	return req, nil
}

// actRequest builds the act request of a checked action (targetNode
// accepted its type and fields); argument types are checked here, their
// ranges by the Agent client.
func actRequest(action map[string]any, nodeID string) (ActRequest, error) {
	t, _ := action["type"].(string)
	req := ActRequest{Action: t, NodeID: nodeID}
	if v, ok := action["text"]; ok && v != nil {
		s, ok := v.(string)
		if !ok {
			return req, decisionError("text must be text")
		}
		req.Text = &s
	}
	if v, ok := action["direction"]; ok && v != nil {
		s, ok := v.(string)
		if !ok {
			return req, decisionError("direction must be text")
		}
		req.Direction = s
	}
	for key, dst := range map[string]**int64{"durationMs": &req.DurationMs, "distance": &req.Distance} {
		if v, ok := action[key]; ok && v != nil {
			if !canonjson.IsInt(v) {
				return req, decisionError("%s must be an integer", key)
			}
			n, _ := canonjson.Integer(v) // clamped to int64: out of every range
			*dst = &n
		}
	}
	return req, nil
}

func allowedAction(step *verify.Step, t any) bool {
	s, ok := t.(string)
	return ok && slices.Contains(step.AllowedActions, s) && slices.Contains(verify.TypedActions, s)
}

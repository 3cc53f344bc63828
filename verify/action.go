package verify

import (
	"errors"
	"slices"
	"strconv"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/oracle"
)

// The seven typed actions, shared by stable steps and Agent decisions.
const (
	ActionClick     = "click"
	ActionLongClick = "longClick"
	ActionInput     = "input"
	ActionBack      = "back"
	ActionHome      = "home"
	ActionScroll    = "scroll"
	ActionWait      = "wait"
)

// TypedActions lists the seven typed actions.
var TypedActions = []string{ActionClick, ActionLongClick, ActionInput, ActionBack, ActionHome, ActionScroll, ActionWait}

// actionFields are the keys each typed action may carry in a requirement.
var actionFields = map[string][]string{
	ActionClick:     {"type", "selector"},
	ActionLongClick: {"type", "selector", "durationMs"},
	ActionInput:     {"type", "selector", "text"},
	ActionBack:      {"type"},
	ActionHome:      {"type"},
	ActionScroll:    {"type", "selector", "direction", "distance"},
	ActionWait:      {"type", "durationMs"},
}

// action is a normalized typed action of a stable step or cleanup item.
type action struct {
	Type       string
	Selector   oracle.Selector // click, longClick, input; optional for scroll
	Text       string          // input
	DurationMs int64           // longClick, wait
	Direction  string          // scroll
	Distance   int64           // scroll
}

func isTypedAction(s any) bool {
	str, ok := s.(string)
	return ok && slices.Contains(TypedActions, str)
}

// normalizeAction checks one typed action and fills its defaults
// (durationMs 1000, distance 50).
func normalizeAction(v any, location string) (*action, error) {
	m, err := want.Object(v, location)
	if err != nil {
		return nil, err
	}
	t := m["type"]
	if !isTypedAction(t) {
		return nil, at(allowed(invalid(fault.CodeUnsupportedAction, "the step uses an unsupported typed action", "action", t), TypedActions...), ".type")
	}
	a := &action{Type: t.(string)}
	if unknown := canonjson.UnknownKeys(m, actionFields[a.Type]...); len(unknown) > 0 {
		return nil, invalid(fault.CodeInvalidAction, "the typed action has unknown fields", "action", a.Type, "fields", unknown)
	}
	switch a.Type {
	case ActionClick, ActionLongClick, ActionInput:
		if a.Selector, err = normalizeSelector(m["selector"], location+".selector"); err != nil {
			return nil, at(err, ".selector")
		}
	case ActionScroll:
		if sel := m["selector"]; sel != nil {
			if a.Selector, err = normalizeSelector(sel, location+".selector"); err != nil {
				return nil, at(err, ".selector")
			}
		}
	}
	if a.Type == ActionInput {
		if a.Text, err = text(m["text"], location+".text"); err != nil {
			return nil, at(err, ".text")
		}
	}
	if a.Type == ActionLongClick || a.Type == ActionWait {
		d, ok := canonjson.Integer(canonjson.Get(m, "durationMs", int64(1000)))
		if !ok || d < 100 || d > 5000 {
			return nil, at(invalid(fault.CodeInvalidAction, "durationMs must be an integer between 100 and 5000"), ".durationMs")
		}
		a.DurationMs = d
	}
	if a.Type == ActionScroll {
		dir, _ := m["direction"].(string)
		switch dir {
		case "up", "down", "left", "right":
		default:
			return nil, at(allowed(invalid(fault.CodeInvalidAction, "scroll direction must be up, down, left or right"), "up", "down", "left", "right"), ".direction")
		}
		d, ok := canonjson.Integer(canonjson.Get(m, "distance", int64(50)))
		if !ok || d < 1 || d > 90 {
			return nil, at(invalid(fault.CodeInvalidAction, "scroll distance must be an integer between 1 and 90"), ".distance")
		}
		a.Direction, a.Distance = dir, d
	}
	return a, nil
}

func (a *action) tree() map[string]any {
	m := map[string]any{"type": a.Type}
	if a.Selector != nil {
		m["selector"] = map[string]any(a.Selector)
	}
	switch a.Type {
	case ActionInput:
		m["text"] = a.Text
	case ActionLongClick, ActionWait:
		m["durationMs"] = a.DurationMs
	case ActionScroll:
		m["direction"], m["distance"] = a.Direction, a.Distance
	}
	return m
}

// normalizeSelector keeps the known keys with non-null values; at least
// one must remain and every value must be a string or an integer (a JSON
// boolean counts, as Python's bool is an int).
func normalizeSelector(v any, location string) (oracle.Selector, error) {
	m, err := want.Object(v, location)
	if err != nil {
		return nil, err
	}
	if unknown := canonjson.UnknownKeys(m, oracle.SelectorKeys...); len(unknown) > 0 {
		return nil, invalid(fault.CodeInvalidSelector, "the selector has unsupported fields", "fields", unknown, "location", location)
	}
	sel := oracle.Selector{}
	for _, k := range oracle.SelectorKeys {
		if val := m[k]; val != nil {
			sel[k] = val
		}
	}
	scalar := func(val any) bool {
		if _, ok := val.(string); ok {
			return true
		}
		if _, ok := val.(bool); ok {
			return true
		}
		return canonjson.IsInt(val)
	}
	for _, val := range sel {
		if !scalar(val) {
			return nil, invalid(fault.CodeInvalidSelector, "selector values must be observed scalar fields (text or integer)", "location", location)
		}
	}
	if len(sel) == 0 {
		return nil, invalid(fault.CodeInvalidSelector, "the selector must name at least one observed field", "location", location)
	}
	return sel, nil
}

// Oracle is what a checkpoint, precondition or cleanup item asserts:
// a deterministic UI oracle, or (checkpoints only) a vision assertion
// judged by the planner's completion review on the final screenshot.
type Oracle struct {
	UI     *oracle.UI
	Vision *visionOracle
}

// visionOracle asks the vision model whether the final screen shows
// Assertion.
type visionOracle struct{ Assertion string }

func (o Oracle) tree() map[string]any {
	if o.Vision != nil {
		return map[string]any{"type": "vision", "assertion": o.Vision.Assertion}
	}
	return o.UI.Tree()
}

// normalizeOracle checks an oracle. allowVision is true for checkpoints:
// preconditions and cleanup compile into ASSERT steps on the phone, which
// only a UI oracle can be.
func normalizeOracle(v any, location string, allowVision bool) (Oracle, error) {
	m, err := want.Object(v, location)
	if err != nil {
		return Oracle{}, err
	}
	switch t := m["type"]; {
	case t == "vision" && allowVision:
		return normalizeVisionOracle(m, location)
	case t != "ui":
		kinds := []string{"ui"}
		if allowVision {
			kinds = append(kinds, "vision")
		}
		return Oracle{}, at(allowed(invalid(fault.CodeUnsupportedOracle, "only deterministic UI oracles (and vision oracles on checkpoints) are supported", "oracleType", t, "location", location), kinds...), ".type")
	}
	if unknown := canonjson.UnknownKeys(m, "type", "selector", "field", "operator", "expected"); len(unknown) > 0 {
		return Oracle{}, invalid(fault.CodeInvalidOracle, "the UI oracle has unknown fields", "fields", unknown, "location", location)
	}
	field, _ := canonjson.Get(m, "field", oracle.FieldText).(string)
	op, _ := canonjson.Get(m, "operator", oracle.OpEquals).(string)
	expected, ok := m["expected"].(string)
	contract := func(key string, values ...string) error {
		e := invalid(fault.CodeInvalidOracle, "the UI oracle contract is invalid (field text|description, operator equals|contains|matches, expected text)", "location", location)
		if len(values) > 0 {
			allowed(e, values...)
		}
		return at(e, "."+key)
	}
	switch {
	case field != oracle.FieldText && field != oracle.FieldDescription:
		return Oracle{}, contract("field", oracle.FieldText, oracle.FieldDescription)
	case op != oracle.OpEquals && op != oracle.OpContains && op != oracle.OpMatches:
		return Oracle{}, contract("operator", oracle.OpEquals, oracle.OpContains, oracle.OpMatches)
	case !ok:
		return Oracle{}, contract("expected")
	}
	if op == oracle.OpMatches {
		_, err := oracle.CompilePattern(expected)
		if errors.Is(err, oracle.ErrUnsupportedPattern) {
			return Oracle{}, at(invalid(fault.CodeUnsupportedOracle, "the UI oracle's regular expression is valid in Python 3.11 but cannot be evaluated exactly: "+err.Error(), "location", location), ".expected")
		}
		if err != nil {
			return Oracle{}, at(invalid(fault.CodeInvalidOracle, "the UI oracle's regular expression is invalid: "+err.Error(), "location", location), ".expected")
		}
	}
	sel, err := normalizeSelector(m["selector"], location+".selector")
	if err != nil {
		return Oracle{}, at(err, ".selector")
	}
	ui, err := oracle.NewUI(sel, field, op, expected)
	if err != nil {
		return Oracle{}, invalid(fault.CodeInvalidOracle, err.Error(), "location", location)
	}
	return Oracle{UI: ui}, nil
}

func normalizeVisionOracle(m map[string]any, location string) (Oracle, error) {
	if unknown := canonjson.UnknownKeys(m, "type", "assertion"); len(unknown) > 0 {
		return Oracle{}, invalid(fault.CodeInvalidOracle, "the vision oracle has unknown fields", "fields", unknown, "location", location)
	}
	a, err := text(m["assertion"], location+".assertion")
	if err != nil {
		return Oracle{}, at(invalid(fault.CodeInvalidOracle, "a vision oracle needs a non-empty assertion", "location", location), ".assertion")
	}
	return Oracle{Vision: &visionOracle{Assertion: a}}, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

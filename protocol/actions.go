package protocol

import (
	"fmt"
	"slices"
)

// The seven typed Agent actions of protocol 1.0
// (docs/device-protocol.md#acting).
const (
	ActClick     = "click"
	ActLongClick = "longClick"
	ActInput     = "input"
	ActBack      = "back"
	ActHome      = "home"
	ActScroll    = "scroll"
	ActWait      = "wait"
)

// presence says whether an action argument must, may or must not be present.
type presence string

// Argument presence values.
const (
	required  presence = "required"
	optional  presence = "optional"
	forbidden presence = "forbidden"
)

// argRule is the rule for one argument of a typed action.
type argRule struct {
	Name     string   `json:"name"`
	Presence presence `json:"presence"`
	Type     string   `json:"type"`
	Min      *int64   `json:"min,omitempty"`
	Max      *int64   `json:"max,omitempty"`
	Enum     []string `json:"enum,omitempty"`
	// NonEmpty means a present string must not be empty.
	NonEmpty bool `json:"nonEmpty,omitempty"`
}

// TypedAction describes one typed action: its arguments and the device
// operation it maps to.
type TypedAction struct {
	Name      string    `json:"name"`
	Operation string    `json:"operation"`
	Args      []argRule `json:"arguments"`
}

// ActionArgs are the arguments of one act request as they travel on the
// wire: nil means absent.
type ActionArgs struct {
	NodeID     *string
	Text       *string
	Direction  *string
	DurationMs *int64
	Distance   *int64
}

// scrollDirections are the allowed scroll directions.
func scrollDirections() []string { return []string{"up", "down", "left", "right"} }

func i64(v int64) *int64 { return &v }

// TypedActions returns the seven actions and their argument rules, in the
// device's order. Every argument not listed for an action is forbidden.
func TypedActions() []TypedAction {
	str := func(name string, p presence, nonEmpty bool) argRule {
		return argRule{Name: name, Presence: p, Type: "string", NonEmpty: nonEmpty}
	}
	num := func(name string, p presence, lo, hi int64) argRule {
		return argRule{Name: name, Presence: p, Type: "integer", Min: i64(lo), Max: i64(hi)}
	}
	return []TypedAction{
		{Name: ActClick, Operation: "CLICK", Args: []argRule{str(ParamNodeID, required, true)}},
		{Name: ActLongClick, Operation: "LONG_CLICK", Args: []argRule{str(ParamNodeID, required, true), num(ParamDurationMs, optional, 100, 5000)}},
		{Name: ActInput, Operation: "INPUT", Args: []argRule{str(ParamNodeID, required, true), str(ParamText, required, false)}},
		{Name: ActBack, Operation: "GLOBAL_BACK"},
		{Name: ActHome, Operation: "GLOBAL_HOME"},
		{Name: ActScroll, Operation: "SCROLL_TO_* / GLOBAL_SCROLL_TO_*", Args: []argRule{
			str(ParamNodeID, optional, true),
			{Name: ParamDirection, Presence: required, Type: "string", Enum: scrollDirections()},
			num(ParamDistance, optional, 1, 90),
		}},
		{Name: ActWait, Operation: "SLEEP", Args: []argRule{num(ParamDurationMs, required, 100, 5000)}},
	}
}

// IsTypedAction reports whether name is one of the seven actions.
func IsTypedAction(name string) bool {
	return slices.ContainsFunc(TypedActions(), func(a TypedAction) bool { return a.Name == name })
}

// ValidateAction applies the device's argument checks of an act step in its
// order and returns the exact device message on failure ("" when valid). The
// host pre-validates with the same function before sending.
func ValidateAction(action string, a ActionArgs) string {
	if !IsTypedAction(action) {
		return "Only phase-one typed actions are allowed"
	}
	present := map[string]bool{
		ParamNodeID: a.NodeID != nil, ParamText: a.Text != nil, ParamDirection: a.Direction != nil,
		ParamDurationMs: a.DurationMs != nil, ParamDistance: a.Distance != nil,
	}
	allowed := map[string]map[string]bool{
		ActClick:     {ParamNodeID: true},
		ActLongClick: {ParamNodeID: true, ParamDurationMs: true},
		ActInput:     {ParamNodeID: true, ParamText: true},
		ActBack:      {},
		ActHome:      {},
		ActScroll:    {ParamNodeID: true, ParamDirection: true, ParamDistance: true},
		ActWait:      {ParamDurationMs: true},
	}[action]
	for _, k := range []string{ParamNodeID, ParamText, ParamDirection, ParamDurationMs, ParamDistance} {
		if present[k] && !allowed[k] {
			return "Unexpected action field: " + k
		}
	}
	nonEmpty := func(p *string) bool { return p != nil && *p != "" }
	switch action {
	case ActClick:
		if !nonEmpty(a.NodeID) {
			return "click requires nodeId"
		}
	case ActLongClick:
		if !nonEmpty(a.NodeID) {
			return "longClick requires nodeId"
		}
		if a.DurationMs != nil && (*a.DurationMs < 100 || *a.DurationMs > 5000) {
			return "durationMs must be between 100 and 5000"
		}
	case ActInput:
		if !nonEmpty(a.NodeID) || a.Text == nil {
			return "input requires nodeId and string text"
		}
	case ActScroll:
		if a.NodeID != nil && *a.NodeID == "" {
			return "nodeId must be a non-empty string"
		}
		if a.Direction == nil || !slices.Contains(scrollDirections(), *a.Direction) {
			return "scroll direction must be up, down, left, or right"
		}
		if a.Distance != nil && (*a.Distance < 1 || *a.Distance > 90) {
			return "distance must be between 1 and 90"
		}
	case ActWait:
		if a.DurationMs == nil || *a.DurationMs < 100 || *a.DurationMs > 5000 {
			return "wait requires durationMs between 100 and 5000"
		}
	}
	return ""
}

// ActionSignature is the device's identity of an action for loop detection:
// type + ":" + the arguments as a sorted map, e.g. `click:{nodeId=node-5}`.
func ActionSignature(action string, a ActionArgs) string {
	var parts []string
	if a.Direction != nil {
		parts = append(parts, "direction="+*a.Direction)
	}
	if a.Distance != nil {
		parts = append(parts, fmt.Sprintf("distance=%d", *a.Distance))
	}
	if a.DurationMs != nil {
		parts = append(parts, fmt.Sprintf("durationMs=%d", *a.DurationMs))
	}
	if a.NodeID != nil {
		parts = append(parts, "nodeId="+*a.NodeID)
	}
	if a.Text != nil {
		parts = append(parts, "text="+*a.Text)
	}
	out := action + ":{"
	for i, p := range parts {
		if i > 0 {
			out += ", "
		}
		out += p
	}
	return out + "}"
}

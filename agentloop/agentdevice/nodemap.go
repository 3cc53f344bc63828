package agentdevice

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/agent"
)

// CodeNotAllowed refuses an action the caller does not allow (an explore
// step's allowedActions).

// modelActionOf names each typed action in the model's vocabulary, for
// notes the model reads.
var modelActionOf = map[string]string{
	protocol.ActClick: action.Tap, protocol.ActLongClick: action.LongPress, protocol.ActInput: action.Type, protocol.ActScroll: action.Swipe,
	protocol.ActBack: action.Back, protocol.ActHome: action.Home, protocol.ActWait: action.Wait,
}

// NodeMapper maps the planner's commands onto the typed actions of SoloPi
// observations (MapToTyped: the point is hit-tested to a nodeId on the
// host, the model never sees the tree). It remembers, across the
// observations of one task, the text field last tapped, where a later
// Type goes.
type NodeMapper struct {
	// Allowed, when not nil, lists the typed actions the caller may send;
	// any other is refused with zero touch and the model is told which
	// actions it has.
	Allowed   []string
	lastField *nodeRef
}

// Map maps cmd on obs.
func (m *NodeMapper) Map(cmd agentloop.Command, obs *agent.Observation) (typedAction, error) {
	ta, err := mapToTyped(cmd, obs, m.lastField)
	if err != nil {
		return ta, err
	}
	if m.Allowed != nil && !slices.Contains(m.Allowed, ta.Action) {
		var names []string
		for _, a := range m.Allowed {
			if n, ok := modelActionOf[a]; ok {
				names = append(names, n)
			}
		}
		note := "this step allows no device action; finish instead"
		if len(names) > 0 {
			note = "this step only allows " + strings.Join(names, ", ") + "; " + cmd.Action + " is not allowed here"
		}
		return typedAction{}, &agentloop.NotMappableError{Code: fault.CodeActionNotAllowed, Note: note}
	}
	if ta.Tapped != nil && isTextField(ta.Tapped) {
		m.lastField = refOf(ta.Tapped)
	}
	return ta, nil
}

// MapJSON is Map on an observation given as its JSON object (the form
// the verification engine's ports carry).
func (m *NodeMapper) MapJSON(cmd agentloop.Command, observation map[string]any) (typedAction, error) {
	b, err := json.Marshal(observation)
	if err != nil {
		return typedAction{}, fmt.Errorf("encode the observation: %w", err)
	}
	var obs agent.Observation
	if err := json.Unmarshal(b, &obs); err != nil {
		return typedAction{}, fmt.Errorf("the observation is not a SoloPi observation: %w", err)
	}
	return m.Map(cmd, &obs)
}

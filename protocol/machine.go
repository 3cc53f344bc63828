// Package protocol is the wire vocabulary shared by the host CLI and the
// simulated device: action and parameter names, device error codes, and every
// state machine of the SoloPi control protocol as a pure transition table.
// Nothing here does I/O; both sides validate their transitions through it.
package protocol

import (
	"fmt"
	"slices"
)

// State is one state of a machine, spelled as on the wire.
type State string

// Event names what happened to move a machine from one state to another.
type Event string

// transition is one allowed edge of a machine.
type transition struct {
	From  State
	Event Event
	To    State
}

// Machine is a state machine as data. Initial is where a fresh instance
// (a new run, session or receipt) starts; Terminal states have no outgoing
// transitions, which makes them irreversible; Live is the set the protocol
// reports as `active`.
type Machine struct {
	Name        string
	Initial     State
	States      []State
	Terminal    []State
	Live        []State
	Transitions []transition
}

// TransitionError reports an event that the machine does not allow in a state.
type TransitionError struct {
	Machine string
	From    State
	Event   Event
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("%s: event %q is not allowed in state %q", e.Machine, e.Event, e.From)
}

// Step returns the state that ev leads to from `from`, or a *TransitionError.
func (m *Machine) Step(from State, ev Event) (State, error) {
	for _, t := range m.Transitions {
		if t.From == from && t.Event == ev {
			return t.To, nil
		}
	}
	return from, &TransitionError{Machine: m.Name, From: from, Event: ev}
}

// Can reports whether ev is allowed in state s.
func (m *Machine) Can(s State, ev Event) bool {
	_, err := m.Step(s, ev)
	return err == nil
}

// Has reports whether s is a state of the machine.
func (m *Machine) Has(s State) bool { return slices.Contains(m.States, s) }

// IsTerminal reports whether s is terminal.
func (m *Machine) IsTerminal(s State) bool { return slices.Contains(m.Terminal, s) }

// IsLive reports whether s is in the live ("active") set.
func (m *Machine) IsLive(s State) bool { return slices.Contains(m.Live, s) }

// Events lists every event the machine knows, in table order, without repeats.
func (m *Machine) Events() []Event {
	var out []Event
	for _, t := range m.Transitions {
		if !slices.Contains(out, t.Event) {
			out = append(out, t.Event)
		}
	}
	return out
}

// Validate checks the table itself: every state named by a transition is
// declared, terminal and live states are declared and disjoint, terminal
// states have no outgoing edges, and no (state, event) pair is ambiguous.
func (m *Machine) Validate() error {
	if !m.Has(m.Initial) {
		return fmt.Errorf("%s: initial state %q is not declared", m.Name, m.Initial)
	}
	for _, s := range append(slices.Clone(m.Terminal), m.Live...) {
		if !m.Has(s) {
			return fmt.Errorf("%s: state %q is not declared", m.Name, s)
		}
	}
	for _, s := range m.Terminal {
		if slices.Contains(m.Live, s) {
			return fmt.Errorf("%s: state %q is both live and terminal", m.Name, s)
		}
	}
	seen := map[[2]string]bool{}
	for _, t := range m.Transitions {
		if !m.Has(t.From) || !m.Has(t.To) {
			return fmt.Errorf("%s: transition %v names an undeclared state", m.Name, t)
		}
		if m.IsTerminal(t.From) {
			return fmt.Errorf("%s: terminal state %q has an outgoing transition", m.Name, t.From)
		}
		k := [2]string{string(t.From), string(t.Event)}
		if seen[k] {
			return fmt.Errorf("%s: (%s, %s) is ambiguous", m.Name, t.From, t.Event)
		}
		seen[k] = true
	}
	return nil
}

// edges builds transitions from several source states on one event.
func edges(ev Event, to State, from ...State) []transition {
	out := make([]transition, 0, len(from))
	for _, f := range from {
		out = append(out, transition{From: f, Event: ev, To: to})
	}
	return out
}

// table concatenates transition groups.
func table(groups ...[]transition) []transition {
	var out []transition
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

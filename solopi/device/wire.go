package device

// The one way the host reads device JSON: an object decoded once with
// integers kept exact (WireObject, read with canonjson's typed accessors),
// and Violations, which collects every broken invariant of one snapshot so
// a validator reports them all at once.

import (
	"fmt"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/protocol"
)

// WireObject is one decoded device JSON object (integers kept exact as
// json.Number; a JSON null counts as absent), read through canonjson's
// typed accessors like every other tree the host reads.
type WireObject = canonjson.Object

// violations collects the broken invariants of one snapshot; the first is
// reported, all are listed so that a simulator author sees everything.
type Violations []string

func (v *Violations) Add(format string, args ...any) { *v = append(*v, fmt.Sprintf(format, args...)) }

func (v *Violations) Check(ok bool, format string, args ...any) {
	if !ok {
		v.Add(format, args...)
	}
}

func (v Violations) Err(what string, o WireObject) error {
	if len(v) == 0 {
		return nil
	}
	return ContractError(fmt.Sprintf("the device's %s breaks the protocol contract: %s", what, v[0]), map[string]any(o)).
		With("violations", []string(v))
}

// absentAll checks that none of keys is present.
func (v *Violations) AbsentAll(o WireObject, when string, keys ...string) {
	for _, k := range keys {
		v.Check(!o.Has(k), "%s but %s is present", when, k)
	}
}

// machineFlags checks state membership and the flags derived from it
// through the protocol machine: active == live, terminal == terminal, and
// each extra flag equals "state is that one".
func (v *Violations) MachineFlags(o WireObject, m *protocol.Machine, extra map[string]protocol.State) protocol.State {
	st, ok := o.Text("state")
	if !ok || !m.Has(protocol.State(st)) {
		v.Add("state %q is not a %s state", o["state"], m.Name)
		return ""
	}
	s := protocol.State(st)
	if a, ok := o.Flag("active"); !ok || a != m.IsLive(s) {
		v.Add("active=%v does not match state %s", o["active"], s)
	}
	if t, ok := o.Flag("terminal"); !ok || t != m.IsTerminal(s) {
		v.Add("terminal=%v does not match state %s", o["terminal"], s)
	}
	for k, want := range extra {
		if b, ok := o.Flag(k); !ok || b != (s == want) {
			v.Add("%s=%v does not match state %s", k, o[k], s)
		}
	}
	return s
}

// iff checks "a ⟺ b".
func (v *Violations) Iff(a, b bool, format string, args ...any) { v.Check(a == b, format, args...) }

// reachable reports whether to can follow from in machine m (zero or more
// transitions): polls may skip states, but a snapshot of the same session
// must never go backwards.
func Reachable(m *protocol.Machine, from, to protocol.State) bool {
	if from == to {
		return true
	}
	seen := map[protocol.State]bool{from: true}
	queue := []protocol.State{from}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, t := range m.Transitions {
			if t.From != s || seen[t.To] {
				continue
			}
			if t.To == to {
				return true
			}
			seen[t.To] = true
			queue = append(queue, t.To)
		}
	}
	return false
}

// StateOf is a snapshot's state field ("" when absent or not text).
func StateOf(o WireObject) protocol.State { return protocol.State(o.Str("state")) }

// SessionIDOf is a snapshot's sessionId field.
func SessionIDOf(o WireObject) string { return o.Str("sessionId") }

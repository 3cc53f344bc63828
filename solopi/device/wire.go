package device

// The one way the host reads device JSON: an object decoded once with
// integers kept exact (WireObject), typed accessors that report a missing
// or mistyped field, and Violations, which collects every broken invariant
// of one snapshot so a validator reports them all at once.

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/solopi-dev/solopi/protocol"
)

// wireObject is one decoded device JSON object (integers kept exact as
// json.Number). A JSON null counts as absent, as on the device.
type WireObject map[string]any

func (o WireObject) Has(k string) bool { v, ok := o[k]; return ok && v != nil }

// Str reads a string field, "" when it is absent or not a string.
func (o WireObject) Str(k string) string {
	s, _ := o[k].(string)
	return s
}

func (o WireObject) Text(k string) (string, bool) {
	s, ok := o[k].(string)
	return s, ok
}

func (o WireObject) Flag(k string) (bool, bool) {
	b, ok := o[k].(bool)
	return b, ok
}

// flagOrFalse reads an optional boolean: absent is false, a non-boolean is
// reported through ok=false.
func (o WireObject) FlagOrFalse(k string) (bool, bool) {
	if !o.Has(k) {
		return false, true
	}
	return o.Flag(k)
}

func (o WireObject) Integer(k string) (int64, bool) { return AsInteger(o[k]) }

// AsInteger reads a decoded JSON value as an exact integer.
func AsInteger(v any) (int64, bool) {
	switch v := v.(type) {
	case json.Number:
		n, err := v.Int64()
		return n, err == nil
	case float64:
		n := int64(v)
		return n, float64(n) == v && !math.IsInf(v, 0)
	case int64:
		return v, true
	case int:
		return int64(v), true
	}
	return 0, false
}

func (o WireObject) Number(k string) (float64, bool) {
	switch v := o[k].(type) {
	case json.Number:
		f, err := v.Float64()
		return f, err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
	case float64:
		return v, !math.IsInf(v, 0) && !math.IsNaN(v)
	case int64:
		return float64(v), true
	case int:
		return float64(v), true
	}
	return 0, false
}

// strings reads an array of strings.
func (o WireObject) Strings(k string) ([]string, bool) {
	arr, ok := o[k].([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(arr))
	for _, v := range arr {
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// clone copies the top level so that callers can add fields safely.
func (o WireObject) Clone() map[string]any {
	m := make(map[string]any, len(o)+4)
	for k, v := range o {
		m[k] = v
	}
	return m
}

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

func (o WireObject) State() protocol.State {
	s, _ := o.Text("state")
	return protocol.State(s)
}

func (o WireObject) SessionID() string {
	s, _ := o.Text("sessionId")
	return s
}

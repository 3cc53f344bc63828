package agent

import (
	"fmt"
	"strings"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/device"
)

// Selector picks a node of an observation by exact field equality. Empty
// fields do not constrain; at least one field must be set. Selectors exist
// only on the host: the device is always sent the resolved nodeId.
type Selector struct {
	ResourceID  string `json:"resourceId,omitempty"`
	Text        string `json:"text,omitempty"`
	Description string `json:"description,omitempty"`
	ClassName   string `json:"className,omitempty"`
	PackageName string `json:"packageName,omitempty"`
	ID          string `json:"id,omitempty"`
}

// IsZero reports whether no field is set.
func (s Selector) IsZero() bool { return s == Selector{} }

// String renders the set fields, e.g. resourceId="login" text="Sign in".
func (s Selector) String() string {
	var parts []string
	for _, f := range s.fields() {
		if f.want != "" {
			parts = append(parts, fmt.Sprintf("%s=%q", f.name, f.want))
		}
	}
	return strings.Join(parts, " ")
}

type selectorField struct {
	name string
	want string
	get  func(*UINode) string
}

func (s Selector) fields() []selectorField {
	return []selectorField{
		{"resourceId", s.ResourceID, func(n *UINode) string { return n.ResourceID }},
		{"text", s.Text, func(n *UINode) string { return n.Text }},
		{"description", s.Description, func(n *UINode) string { return n.Description }},
		{"className", s.ClassName, func(n *UINode) string { return n.ClassName }},
		{"packageName", s.PackageName, func(n *UINode) string { return n.PackageName }},
		{"id", s.ID, func(n *UINode) string { return n.ID }},
	}
}

// Matches reports whether every set field equals the node's field.
func (s Selector) Matches(n *UINode) bool {
	if n == nil || s.IsZero() {
		return false
	}
	for _, f := range s.fields() {
		if f.want != "" && f.get(n) != f.want {
			return false
		}
	}
	return true
}

// partial counts the set fields the node matches.
func (s Selector) partial(n *UINode) int {
	k := 0
	for _, f := range s.fields() {
		if f.want != "" && f.get(n) == f.want {
			k++
		}
	}
	return k
}

// nodeCandidate names a node in a selector error.
type nodeCandidate struct {
	NodeID     string `json:"nodeId"`
	ResourceID string `json:"resourceId"`
	Text       string `json:"text"`
	ClassName  string `json:"className,omitempty"`
	Bounds     string `json:"bounds"`
}

func candidate(n *UINode) nodeCandidate {
	return nodeCandidate{NodeID: n.NodeID, ResourceID: n.ResourceID, Text: n.Text, ClassName: n.ClassName, Bounds: n.Bounds.String()}
}

// maxCandidates caps the nodes listed in a selector error.
const maxCandidates = 20

// ResolveSelector returns the nodeId of the one node of obs that sel
// matches. Zero or several matches is an exit-2 error naming the
// candidates (nodeId, resourceId, text, bounds): the matches when there are
// several, and the nodes that match part of the selector when there are
// none, so the caller can see what the screen offers.
func ResolveSelector(obs *Observation, sel Selector) (string, error) {
	if sel.IsZero() {
		return "", fault.Usage(fault.CodeInvalidSelector, "the selector sets no field (resourceId, text, description, className, packageName, id)")
	}
	if obs == nil || obs.Page == nil {
		return "", fault.New(fault.Failed, fault.CodeSelectorNoMatch, "the observation has no page to resolve the selector against")
	}
	var matches []*UINode
	var near []*UINode
	obs.Page.Walk(func(n *UINode) bool {
		switch {
		case sel.Matches(n):
			matches = append(matches, n)
		case sel.partial(n) > 0:
			near = append(near, n)
		}
		return true
	})
	list := func(ns []*UINode) []nodeCandidate {
		out := make([]nodeCandidate, 0, min(len(ns), maxCandidates))
		for _, n := range ns[:min(len(ns), maxCandidates)] {
			out = append(out, candidate(n))
		}
		return out
	}
	describe := func(cs []nodeCandidate) string {
		var b strings.Builder
		for i, c := range cs {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%s resourceId=%q text=%q bounds=%s", c.NodeID, c.ResourceID, c.Text, c.Bounds)
		}
		return b.String()
	}
	switch len(matches) {
	case 1:
		if matches[0].NodeID == "" {
			return "", device.ContractError("the matching node has no nodeId", nil)
		}
		return matches[0].NodeID, nil
	case 0:
		cs := list(near)
		msg := fmt.Sprintf("no node of observation %s matches %s", obs.ObservationID, sel)
		if len(cs) > 0 {
			msg += "; nodes matching part of it: " + describe(cs)
		}
		return "", fault.New(fault.Failed, fault.CodeSelectorNoMatch, msg).
			With("selector", sel).With("observationId", obs.ObservationID).With("matchCount", 0).
			With("candidates", cs).With("partialMatchCount", len(near))
	}
	cs := list(matches)
	return "", fault.New(fault.Failed, fault.CodeSelectorAmbiguous,
		fmt.Sprintf("%d nodes of observation %s match %s; add fields until one remains: %s", len(matches), obs.ObservationID, sel, describe(cs))).
		With("selector", sel).With("observationId", obs.ObservationID).With("matchCount", len(matches)).With("candidates", cs)
}

package inspector

import (
	"encoding/json"
	"strings"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
	"github.com/solopi-dev/solopi/solopi/agent"
)

// Suggestion is what the page shows for a clicked node, each piece ready
// to paste: the selector, SoloPi case steps (as case-step-add --step
// takes them), a requirement operation step and a checkpoint on the
// node's text (as verify-compile takes them).
type Suggestion struct {
	Node     Node           `json:"node"`
	Selector agent.Selector `json:"selector"`
	// Unique is false when no selector picks this node alone; the
	// selector then names the device's node id, which lasts one screen.
	Unique bool `json:"unique"`
	Steps  struct {
		Click  json.RawMessage `json:"click"`
		Input  json.RawMessage `json:"input"`
		Assert json.RawMessage `json:"assert"`
	} `json:"steps"`
	RequirementStep json.RawMessage `json:"requirementStep"`
	Checkpoint      json.RawMessage `json:"checkpoint"`
}

// selectorCandidates are the fields tried, in this order; the first set
// the node has that matches it alone wins. resourceId first: it survives
// a changed label.
var selectorCandidates = [][]string{
	{"resourceId"}, {"description"}, {"text"}, {"resourceId", "text"}, {"resourceId", "description"},
	{"className", "text"}, {"className", "description"},
}

// selectorFor is the shortest selector that picks nodes[i] alone, and
// whether there is one; without one it names the device's node id.
func selectorFor(nodes []Node, i int) (agent.Selector, bool) {
	n := nodes[i]
	field := map[string]string{"resourceId": n.ResourceID, "description": n.Description, "text": n.Text, "className": n.ClassName}
next:
	for _, fields := range selectorCandidates {
		var sel agent.Selector
		for _, f := range fields {
			v := field[f]
			if v == "" {
				continue next
			}
			switch f {
			case "resourceId":
				sel.ResourceID = v
			case "description":
				sel.Description = v
			case "text":
				sel.Text = v
			case "className":
				sel.ClassName = v
			}
		}
		if count(nodes, sel) == 1 {
			return sel, true
		}
	}
	return agent.Selector{ID: n.SourceID}, false
}

func count(nodes []Node, sel agent.Selector) int {
	c := 0
	for _, n := range nodes {
		if matches(sel, n) {
			c++
		}
	}
	return c
}

// matches is agent.Selector.Matches on a snapshot node.
func matches(sel agent.Selector, n Node) bool {
	return sel.Matches(&agent.UINode{ResourceID: n.ResourceID, Text: n.Text, Description: n.Description,
		ClassName: n.ClassName, PackageName: n.PackageName, ID: n.SourceID})
}

// suggest builds the suggestion for nodes[i]; inputText is the text of
// the input step ("" gives a placeholder to edit).
func suggest(nodes []Node, i int, inputText string) (*Suggestion, error) {
	if i < 0 || i >= len(nodes) {
		return nil, fault.Usagef(fault.CodeInvalidParameter, "no node %d on this screen", i)
	}
	n := nodes[i]
	sel, unique := selectorFor(nodes, i)
	s := &Suggestion{Node: n, Selector: sel, Unique: unique}
	if inputText == "" {
		inputText = "TEXT"
	}
	var err error
	for _, p := range []struct {
		dst *json.RawMessage
		a   stepAction
	}{{&s.Steps.Click, stepAction{kind: actClick}}, {&s.Steps.Input, stepAction{kind: actInput, text: inputText}},
		{&s.Steps.Assert, stepAction{kind: actAssert, text: n.Text}}} {
		if *p.dst, err = caseStepJSON(n, sel, p.a); err != nil {
			return nil, err
		}
	}
	s.RequirementStep = mustJSON(map[string]any{"id": stepName("step", n), "type": "operation",
		"action": map[string]any{"type": "click", "selector": sel}})
	s.Checkpoint = mustJSON(map[string]any{"id": stepName("check", n), "afterStep": stepName("step", n),
		"acceptanceCriteria": []string{"AC-001"},
		"oracle":             map[string]any{"type": "ui", "selector": sel, "field": "text", "operator": "equals", "expected": n.Text}})
	return s, nil
}

// The case step kinds the inspector writes.
const (
	actClick  = "click"
	actInput  = "input"
	actAssert = "assert"
)

type stepAction struct {
	kind string
	text string
	// secret: the text goes into a field that holds a secret
	// (secretField); the step is written encrypt:true, so that runs of
	// the file redact its value as they do any encrypted parameter, and
	// the page and the output never show it.
	secret bool
}

// secretField tells a field that holds a secret: its resource name, label
// or text says so as redact.SecretName reads names ("password", "pin",
// "token"…), or its text is masked (bullets or asterisks: an Android
// password field shows its value that way). The page tree carries no
// password flag, so the field is known by what it shows.
func secretField(n Node) bool {
	name := n.ResourceID
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	for _, s := range []string{name, n.Description, n.Text} {
		if s != "" && redact.SecretName(s) {
			return true
		}
	}
	return n.Text != "" && strings.Trim(n.Text, "•*●") == ""
}

// caseStep is the SoloPi step for a on n, parsed back through casefile so
// that what the page shows is exactly what case-step-add accepts.
func caseStep(n Node, sel agent.Selector, a stepAction) (casefile.Step, error) {
	b, err := caseStepJSON(n, sel, a)
	if err != nil {
		return casefile.Step{}, err
	}
	return casefile.ParseStepFrom(b, "the inspector's step")
}

func caseStepJSON(n Node, sel agent.Selector, a stepAction) (json.RawMessage, error) {
	var enum string
	params := map[string]string{}
	switch a.kind {
	case actClick:
		enum = "CLICK"
	case actInput:
		enum, params["text"] = "INPUT", a.text
	case actAssert:
		enum, params["assertMode"], params["assertInputContent"] = "ASSERT", "assert_accurate", a.text
	default:
		return nil, fault.Usagef(fault.CodeInvalidAction, "the inspector records click, input and assert, not %q", a.kind)
	}
	// The node carries the selector's fields and what SoloPi records
	// beside them; text only when the selector needs it, so that an
	// assert on a changing label still finds its node.
	node := map[string]any{}
	for k, v := range map[string]string{"resourceId": sel.ResourceID, "text": sel.Text, "description": sel.Description, "id": sel.ID,
		"className": n.ClassName, "packageName": n.PackageName} {
		if v != "" {
			node[k] = v
		}
	}
	b := mustJSON(map[string]any{"operationMethod": map[string]any{"actionEnum": enum, "operationParam": params, "encrypt": a.secret},
		"operationNode": node})
	if _, err := casefile.ParseStepFrom(b, "the inspector's step"); err != nil {
		return nil, caseError(err)
	}
	return b, nil
}

// stepName is a readable id for n: prefix-<resource name or text>.
func stepName(prefix string, n Node) string {
	base := n.ResourceID
	if i := strings.LastIndex(base, "/"); i >= 0 {
		base = base[i+1:]
	}
	if base == "" {
		base = n.Text
	}
	if base == "" {
		base = n.Description
	}
	var b strings.Builder
	for _, r := range strings.ToLower(base) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
		if b.Len() >= 40 {
			break
		}
	}
	name := strings.Trim(b.String(), "-")
	if name == "" {
		name = "node"
	}
	return prefix + "-" + name
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps of strings and selectors are marshalled
	}
	return b
}

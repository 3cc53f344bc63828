// Package oracle judges a UI oracle: find exactly one node of an Agent
// observation's page tree by selector, read a field, compare it with the
// expected text. It also maps an oracle to the SoloPi ASSERT step a
// compiled case runs on the phone.
//
// Values follow the JSON the device sends, decoded into a generic tree
// (map[string]any, []any, string, bool, nil and json.Number or float64),
// and comparisons follow solopi-ai's Python so that the same observation
// gets the same verdict from both: selector values compare with Python's
// == (1 == 1.0 == true, "1" != 1, an absent key is None), a non-string
// field is read as Python's str().
package oracle

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/solopi-dev/solopi/canonjson"
)

// SelectorKeys are the node fields a selector may constrain, in the order
// solopi-ai lists them.
var SelectorKeys = []string{"resourceId", "text", "description", "className", "packageName", "id"}

// Selector constrains node fields by equality; every listed key must match.
type Selector map[string]any

// Fields an oracle may read.
const (
	FieldText        = "text"
	FieldDescription = "description"
)

// Operators an oracle may apply.
const (
	OpEquals   = "equals"
	OpContains = "contains"
	OpMatches  = "matches"
)

// UI is a deterministic UI oracle: the one node the selector finds must
// have Field related to Expected by Operator.
type UI struct {
	Selector Selector
	Field    string
	Operator string
	Expected string
	// pattern caches the compiled Expected of a matches oracle.
	pattern *pattern
}

// NewUI checks field and operator and compiles a matches pattern.
func NewUI(sel Selector, field, operator, expected string) (*UI, error) {
	if field != FieldText && field != FieldDescription {
		return nil, fmt.Errorf("field %q is not text or description", field)
	}
	o := &UI{Selector: sel, Field: field, Operator: operator, Expected: expected}
	switch operator {
	case OpEquals, OpContains:
	case OpMatches:
		p, err := CompilePattern(expected)
		if err != nil {
			return nil, err
		}
		o.pattern = p
	default:
		return nil, fmt.Errorf("operator %q is not equals, contains or matches", operator)
	}
	return o, nil
}

// Tree is the oracle in the plan's JSON form.
func (o *UI) Tree() map[string]any {
	return map[string]any{
		"type": "ui", "selector": map[string]any(o.Selector), "field": o.Field,
		"operator": o.Operator, "expected": o.Expected,
	}
}

// Verdicts and reasons of an evaluation.
const (
	Passed    = "passed"
	failed    = "failed"
	notTested = "not_tested"

	ReasonMatched            = "matched"
	reasonMismatch           = "oracle_mismatch"
	reasonSelectorNotFound   = "selector_not_found"
	reasonAmbiguousSelector  = "ambiguous_selector"
	reasonMissingObservation = "missing_observation"
	reasonEvaluationFailed   = "oracle_evaluation_failed"
)

// result is the verdict of one evaluation. Actual is the field value read
// from the one matching node (nil when no single node matched).
type result struct {
	Status string
	Reason string
	Actual *string
}

// Evaluate judges o against an observation object (its "page" is the node
// tree). No page: not_tested; no match: failed (the screen lacks what the
// oracle names); several matches: not_tested (the oracle cannot tell which
// one it meant).
func (o *UI) Evaluate(observation any) result {
	obs, _ := observation.(map[string]any)
	page, ok := obs["page"].(map[string]any)
	if !ok {
		return result{Status: notTested, Reason: reasonMissingObservation}
	}
	matches := Match(page, o.Selector)
	switch len(matches) {
	case 0:
		return result{Status: failed, Reason: reasonSelectorNotFound}
	case 1:
	default:
		return result{Status: notTested, Reason: reasonAmbiguousSelector}
	}
	actual := readField(matches[0], o.Field)
	var pass bool
	switch o.Operator {
	case OpEquals:
		pass = actual == o.Expected
	case OpContains:
		pass = strings.Contains(actual, o.Expected)
	case OpMatches:
		p := o.pattern
		if p == nil {
			var err error
			if p, err = CompilePattern(o.Expected); err != nil {
				return result{Status: notTested, Reason: reasonEvaluationFailed, Actual: &actual}
			}
		}
		ok, err := p.Search(actual)
		if err != nil {
			return result{Status: notTested, Reason: reasonEvaluationFailed, Actual: &actual}
		}
		pass = ok
	}
	if pass {
		return result{Status: Passed, Reason: ReasonMatched, Actual: &actual}
	}
	return result{Status: failed, Reason: reasonMismatch, Actual: &actual}
}

// Walk visits page and its descendants in pre-order (the device's nodeId
// order); children that are not objects are skipped.
func Walk(page map[string]any, fn func(node map[string]any)) {
	if page == nil {
		return
	}
	fn(page)
	children, _ := page["children"].([]any)
	for _, c := range children {
		if n, ok := c.(map[string]any); ok {
			Walk(n, fn)
		}
	}
}

// Match returns the nodes under page whose fields equal every selector
// value (Python ==; an absent field is None, so a null selector value
// matches a node without that field).
func Match(page map[string]any, sel Selector) []map[string]any {
	var out []map[string]any
	Walk(page, func(n map[string]any) {
		for k, want := range sel {
			if !PyEqual(n[k], want) {
				return
			}
		}
		out = append(out, n)
	})
	return out
}

// readField reads a node field as the oracle compares it: absent is "",
// a string is itself, anything else is Python's str() of it.
func readField(node map[string]any, field string) string {
	v, ok := node[field]
	if !ok {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return pyStr(v)
}

// PyEqual is Python's == over JSON values: numbers (and booleans, which
// are integers in Python) compare by value, strings by content, null only
// equals null, arrays and objects element-wise.
func PyEqual(a, b any) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x.Cmp(y) == 0
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, PyEqual)
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !PyEqual(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

// number reads a JSON number or boolean as an exact rational.
func number(v any) (*big.Rat, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return big.NewRat(1, 1), true
		}
		return new(big.Rat), true
	case json.Number:
		r, ok := new(big.Rat).SetString(string(x))
		if ok && !canonjson.IsInteger(x) {
			// Python reads a float literal as the nearest double.
			f, _ := r.Float64()
			r = new(big.Rat)
			r.SetFloat64(f)
		}
		return r, ok
	case float64:
		r := new(big.Rat)
		if r.SetFloat64(x) == nil {
			return nil, false
		}
		return r, true
	case int:
		return big.NewRat(int64(x), 1), true
	case int64:
		return big.NewRat(x, 1), true
	}
	return nil, false
}

// pyStr is Python's str() of a JSON value. Objects keep sorted key order
// (the decoded tree has lost the device's order; no SoloPi node field is an
// object, so this only shapes an error message's actual value).
func pyStr(v any) string {
	switch x := v.(type) {
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = pyRepr(k) + ": " + pyRepr(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	s, err := canonjson.PyStr(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return s
}

// pyRepr is Python's repr() of a JSON value inside a container: strings
// are quoted ('…' unless the text holds a ' and no ").
func pyRepr(v any) string {
	s, ok := v.(string)
	if !ok {
		return pyStr(v)
	}
	q := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(q):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

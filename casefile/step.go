package casefile

import (
	"encoding/json"
	"fmt"
	"github.com/solopi-dev/solopi/fault"
	"maps"
	"slices"
)

// Step is one SoloPi OperationStep.
type Step struct {
	OperationID string
	// OperationIndex is SoloPi's 0-based position; a missing value reads as
	// 0, like the Java int field.
	OperationIndex int
	StepID         string
	Method         Method
	// Node is the target element; nil for global, app and device actions.
	Node *Node
	// Unknown keeps unrecognised step keys so authoring round-trips do not
	// lose data; SoloPi itself ignores them.
	Unknown map[string]json.RawMessage
}

// Method is SoloPi's OperationMethod.
type Method struct {
	// ActionEnum is the PerformActionEnum NAME ("CLICK"); before Normalize
	// it may also hold a code or provider shorthand as written by an author.
	ActionEnum string
	// Encrypt is nil when the file does not say. SoloPi then treats the
	// params as encrypted (its field defaults to true) while the host's
	// normalisation writes false; see EncryptedOnDevice.
	Encrypt *bool
	// SafeEncrypt is written by the upstream 1.x authoring templates; the
	// device has no getter for it, so it never reaches snapshots.
	SafeEncrypt *bool
	// Params values may be null (putParam(key, null)).
	Params  map[string]*string
	Unknown map[string]json.RawMessage
}

// EncryptedOnDevice reports how the device reads the params: encrypted
// unless the file says "encrypt": false.
func (m Method) EncryptedOnDevice() bool { return m.Encrypt == nil || *m.Encrypt }

// Param returns the stored value of key and whether it is present and non-null.
func (m Method) Param(key string) (string, bool) {
	v, ok := m.Params[key]
	if !ok || v == nil {
		return "", false
	}
	return *v, true
}

// Node is SoloPi's OperationNode. String fields are pointers because the
// device distinguishes null (omitted in its JSON) from "".
type Node struct {
	XPath       *string
	Description *string
	Text        *string
	ResourceID  *string
	// ID is the decimal AccessibilityNodeInfo source id; a Java long that can
	// exceed 2^53, so it is kept as a string.
	ID          *string
	ClassName   *string
	PackageName *string
	Depth       int
	NodeBound   *Rect
	// AssistantNodes is the raw JSON list of helper nodes (nil = absent).
	AssistantNodes json.RawMessage
	Extra          map[string]string
	NodeType       *string
	Unknown        map[string]json.RawMessage
}

// Rect is android.graphics.Rect. fastjson also writes a derived "empty"
// flag, which is ignored on input and recomputed on output.
type Rect struct {
	Left, Top, Right, Bottom int
}

// Empty mirrors Rect.isEmpty().
func (r Rect) Empty() bool { return r.Left >= r.Right || r.Top >= r.Bottom }

// HasSelector reports whether the node carries one of the five selectors
// SoloPi accepts for grounding a node action.
func (n *Node) HasSelector() bool {
	if n == nil {
		return false
	}
	for _, p := range []*string{n.ResourceID, n.Text, n.Description, n.XPath, n.ID} {
		if p != nil && *p != "" {
			return true
		}
	}
	return false
}

// Str returns a pointer to s; a convenience for building Nodes and Params.
func Str(s string) *string { return &s }

// Bool returns a pointer to b.
func Bool(b bool) *bool { return &b }

// ---- decoding ----

// ParseStep parses one step object in authoring or exported form (as used by
// the case-step-add/update step files).
func ParseStep(data []byte) (Step, error) { return ParseStepFrom(data, "the step file") }

// ParseStepFrom is ParseStep for a step that comes from what (named in the
// messages: "the step file", "the --step value"); every check and error
// field is the same whatever the source.
func ParseStepFrom(data []byte, what string) (Step, error) {
	data = trimBOM(data)
	g, err := decodeDocument(data, fault.CodeInvalidStep, what)
	if err != nil {
		return Step{}, err
	}
	if err := CheckJSON(data); err != nil {
		return Step{}, err
	}
	obj, ok := g.(map[string]any)
	if !ok {
		return Step{}, newError(fault.CodeInvalidStep, "step JSON must be an object")
	}
	return stepFromGeneric(obj, 0)
}

func stepFromGeneric(obj map[string]any, index int) (Step, error) {
	var s Step
	bad := func(field, want string) error {
		e := stepError(fault.CodeInvalidStep, index, "", "%s must be %s", field, want)
		e.Field = field
		return e
	}
	for k, v := range obj {
		switch k {
		case "operationId":
			str, ok := optString(v)
			if !ok {
				return s, bad(k, "a string")
			}
			s.OperationID = str
		case "stepId":
			str, ok := optString(v)
			if !ok {
				return s, bad(k, "a string")
			}
			s.StepID = str
		case "operationIndex":
			if v == nil {
				continue
			}
			n, ok := intValue(v)
			if !ok {
				return s, bad(k, "an integer")
			}
			s.OperationIndex = n
		case "operationMethod":
			if v == nil {
				continue
			}
			m, ok := v.(map[string]any)
			if !ok {
				return s, bad(k, "an object")
			}
			method, err := methodFromGeneric(m, index)
			if err != nil {
				return s, err
			}
			s.Method = method
		case "operationNode":
			if v == nil {
				// null is a value: a global action's node written as
				// null (as solopi-ai's template does) stays null.
				if err := putUnknown(&s.Unknown, k, nil); err != nil {
					return s, err
				}
				continue
			}
			m, ok := v.(map[string]any)
			if !ok {
				return s, bad(k, "an object or null")
			}
			node, err := nodeFromGeneric(m, index)
			if err != nil {
				return s, err
			}
			s.Node = node
		default:
			if err := putUnknown(&s.Unknown, k, v); err != nil {
				return s, err
			}
		}
	}
	return s, nil
}

func methodFromGeneric(obj map[string]any, index int) (Method, error) {
	var m Method
	bad := func(field, want string) error {
		e := stepError(fault.CodeInvalidStep, index, "", "operationMethod.%s must be %s", field, want)
		e.Field = "operationMethod." + field
		return e
	}
	for k, v := range obj {
		switch k {
		case "actionEnum":
			switch x := v.(type) {
			case nil:
			case string:
				m.ActionEnum = x
			case json.Number:
				// fastjson would read an ordinal; keep the text so validation
				// reports it as unsupported rather than losing it.
				m.ActionEnum = x.String()
			default:
				return m, bad(k, "a string")
			}
		case "encrypt", "safeEncrypt":
			if v == nil {
				continue
			}
			b, ok := v.(bool)
			if !ok {
				return m, bad(k, "a boolean")
			}
			if k == "encrypt" {
				m.Encrypt = Bool(b)
			} else {
				m.SafeEncrypt = Bool(b)
			}
		case "operationParam":
			if v == nil {
				continue
			}
			p, ok := v.(map[string]any)
			if !ok {
				return m, bad(k, "an object")
			}
			m.Params = make(map[string]*string, len(p))
			for pk, pv := range p {
				// Values are strings on the device; scalars are stringified
				// the way the upstream host does (booleans lowercase).
				switch x := pv.(type) {
				case nil:
					m.Params[pk] = nil
				case string:
					m.Params[pk] = Str(x)
				case bool:
					m.Params[pk] = Str(fmt.Sprint(x))
				case json.Number:
					m.Params[pk] = Str(x.String())
				default:
					e := stepError(fault.CodeInvalidStep, index, "", "operationParam %q must be a string, number, boolean or null", pk)
					e.Field = "operationMethod.operationParam." + pk
					return m, e
				}
			}
		default:
			if err := putUnknown(&m.Unknown, k, v); err != nil {
				return m, err
			}
		}
	}
	return m, nil
}

func nodeFromGeneric(obj map[string]any, index int) (*Node, error) {
	n := &Node{}
	bad := func(field, want string) error {
		e := stepError(fault.CodeInvalidStep, index, "", "operationNode.%s must be %s", field, want)
		e.Field = "operationNode." + field
		return e
	}
	strField := map[string]**string{
		"xpath": &n.XPath, "description": &n.Description, "text": &n.Text,
		"resourceId": &n.ResourceID, "id": &n.ID, "className": &n.ClassName,
		"packageName": &n.PackageName, "nodeType": &n.NodeType,
	}
	for k, v := range obj {
		if v == nil {
			// A field written as null stays null in the files written
			// back (it is kept with the unknown fields, which a set field
			// of the same name overrides); the device reads it as unset.
			if err := putUnknown(&n.Unknown, k, nil); err != nil {
				return nil, err
			}
			continue
		}
		if dst, ok := strField[k]; ok {
			switch x := v.(type) {
			case string:
				*dst = Str(x)
			case json.Number:
				// Hand-written cases sometimes give the node id as a number.
				*dst = Str(x.String())
			default:
				return nil, bad(k, "a string")
			}
			continue
		}
		switch k {
		case "depth":
			d, ok := intValue(v)
			if !ok {
				return nil, bad(k, "an integer")
			}
			n.Depth = d
		case "nodeBound":
			m, ok := v.(map[string]any)
			if !ok {
				return nil, bad(k, "an object")
			}
			var r Rect
			for rk, dst := range map[string]*int{"left": &r.Left, "top": &r.Top, "right": &r.Right, "bottom": &r.Bottom} {
				if rv, present := m[rk]; present && rv != nil {
					iv, ok := intValue(rv)
					if !ok {
						return nil, bad(k+"."+rk, "an integer")
					}
					*dst = iv
				}
			}
			n.NodeBound = &r
		case "assistantNodes":
			list, ok := v.([]any)
			if !ok {
				return nil, bad(k, "an array")
			}
			for _, e := range list {
				if _, ok := e.(map[string]any); !ok && e != nil {
					return nil, bad(k, "an array of objects")
				}
			}
			raw, err := encodeJSON(list, false)
			if err != nil {
				return nil, err
			}
			n.AssistantNodes = json.RawMessage(raw)
		case "extra":
			m, ok := v.(map[string]any)
			if !ok {
				return nil, bad(k, "an object")
			}
			n.Extra = make(map[string]string, len(m))
			for ek, ev := range m {
				switch x := ev.(type) {
				case nil:
					// Map<String,String> nulls never survive a fastjson write.
				case string:
					n.Extra[ek] = x
				case json.Number:
					n.Extra[ek] = x.String()
				case bool:
					n.Extra[ek] = fmt.Sprint(x)
				default:
					return nil, bad(k+"."+ek, "a string")
				}
			}
		default:
			if err := putUnknown(&n.Unknown, k, v); err != nil {
				return nil, err
			}
		}
	}
	return n, nil
}

// nullNode is the Unknown of a step whose operationNode is written null.
func nullNode() map[string]json.RawMessage {
	return map[string]json.RawMessage{"operationNode": json.RawMessage("null")}
}

func optString(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", true
	case string:
		return x, true
	}
	return "", false
}

// intValue accepts a JSON integer that fits a Java int.
func intValue(v any) (int, bool) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := num.Int64()
	if err != nil || i < -1<<31 || i > 1<<31-1 {
		return 0, false
	}
	return int(i), true
}

func putUnknown(dst *map[string]json.RawMessage, k string, v any) error {
	raw, err := encodeJSON(v, false)
	if err != nil {
		return err
	}
	if *dst == nil {
		*dst = map[string]json.RawMessage{}
	}
	(*dst)[k] = json.RawMessage(raw)
	return nil
}

// ---- encoding ----

// stepTree builds the authoring/exported representation: every known field
// that is set, nulls kept where the author wrote them (params), unknown
// fields preserved.
func (s Step) tree() map[string]any {
	out := map[string]any{}
	for k, v := range s.Unknown {
		out[k] = v
	}
	out["operationId"] = s.OperationID
	out["operationIndex"] = s.OperationIndex
	out["stepId"] = s.StepID
	out["operationMethod"] = s.Method.tree()
	// A missing node is omitted, as fastjson exports do.
	if s.Node != nil {
		out["operationNode"] = s.Node.tree()
	}
	return out
}

func (m Method) tree() map[string]any {
	out := map[string]any{}
	for k, v := range m.Unknown {
		out[k] = v
	}
	out["actionEnum"] = m.ActionEnum
	if m.Encrypt != nil {
		out["encrypt"] = *m.Encrypt
	}
	if m.SafeEncrypt != nil {
		out["safeEncrypt"] = *m.SafeEncrypt
	}
	params := map[string]any{}
	for k, v := range m.Params {
		params[k] = v
	}
	out["operationParam"] = params
	return out
}

func (n *Node) tree() map[string]any {
	out := map[string]any{}
	for k, v := range n.Unknown {
		out[k] = v
	}
	for k, v := range map[string]*string{
		"xpath": n.XPath, "description": n.Description, "text": n.Text,
		"resourceId": n.ResourceID, "id": n.ID, "className": n.ClassName,
		"packageName": n.PackageName, "nodeType": n.NodeType,
	} {
		if v != nil {
			out[k] = *v
		}
	}
	if _, null := n.Unknown["depth"]; !null || n.Depth != 0 {
		out["depth"] = n.Depth
	}
	if n.NodeBound != nil {
		out["nodeBound"] = n.NodeBound.tree()
	}
	// Only what the author gave: SoloPi fills the defaults ([] and {}) itself.
	if n.AssistantNodes != nil {
		out["assistantNodes"] = n.AssistantNodes
	}
	if n.Extra != nil {
		extra := map[string]any{}
		for k, v := range n.Extra {
			extra[k] = v
		}
		out["extra"] = extra
	}
	return out
}

func (r Rect) tree() map[string]any {
	return map[string]any{"bottom": r.Bottom, "empty": r.Empty(), "left": r.Left, "right": r.Right, "top": r.Top}
}

// MarshalJSON writes the step in authoring form with sorted keys.
func (s Step) MarshalJSON() ([]byte, error) {
	out, err := encodeJSON(s.tree(), false)
	return []byte(out), err
}

// UnmarshalJSON accepts a step in authoring or exported form.
func (s *Step) UnmarshalJSON(data []byte) error {
	parsed, err := ParseStep(data)
	if err != nil {
		return err
	}
	*s = parsed
	return nil
}

// Clone returns a deep copy, so edits never alias the caller's step.
func (s Step) Clone() Step {
	c := s
	c.Unknown = maps.Clone(s.Unknown)
	c.Method.Encrypt = clonePtr(s.Method.Encrypt)
	c.Method.SafeEncrypt = clonePtr(s.Method.SafeEncrypt)
	c.Method.Unknown = maps.Clone(s.Method.Unknown)
	if s.Method.Params != nil {
		c.Method.Params = make(map[string]*string, len(s.Method.Params))
		for k, v := range s.Method.Params {
			c.Method.Params[k] = clonePtr(v)
		}
	}
	if s.Node != nil {
		n := *s.Node
		for _, p := range []**string{&n.XPath, &n.Description, &n.Text, &n.ResourceID, &n.ID, &n.ClassName, &n.PackageName, &n.NodeType} {
			*p = clonePtr(*p)
		}
		n.NodeBound = clonePtr(s.Node.NodeBound)
		n.AssistantNodes = slices.Clone(s.Node.AssistantNodes)
		n.Extra = maps.Clone(s.Node.Extra)
		n.Unknown = maps.Clone(s.Node.Unknown)
		c.Node = &n
	}
	return c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

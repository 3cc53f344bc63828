package verify

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
)

// bindingPattern is a ${name} placeholder.
var bindingPattern = regexp.MustCompile(`\$\{([A-Za-z0-9][A-Za-z0-9._-]{0,127})\}`)

// wholeBinding is a string that is exactly one placeholder.
var wholeBinding = regexp.MustCompile(`^\$\{([A-Za-z0-9][A-Za-z0-9._-]{0,127})\}$`)

// scope is the bindings visible at one place: name → JSON value.
type scope map[string]any

func (s scope) with(more map[string]any) scope {
	out := make(scope, len(s)+len(more))
	for k, v := range s {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// resolve substitutes placeholders in v. A string that is one placeholder
// becomes the bound value with its JSON type; a placeholder inside longer
// text becomes the value's Python str() (True, None, 1.0), and an object
// or array there is an error. Objects and arrays are resolved throughout;
// other values are returned as they are.
func resolve(v any, s scope, location string) (any, error) {
	switch x := v.(type) {
	case string:
		if m := wholeBinding.FindStringSubmatch(x); m != nil {
			val, ok := s[m[1]]
			if !ok {
				return nil, unresolved(m[1], location)
			}
			return val, nil
		}
		var firstErr error
		out := bindingPattern.ReplaceAllStringFunc(x, func(ph string) string {
			if firstErr != nil {
				return ph
			}
			name := ph[2 : len(ph)-1]
			val, ok := s[name]
			if !ok {
				firstErr = unresolved(name, location)
				return ph
			}
			if isContainer(val) {
				firstErr = invalid(CodeInvalidBinding, "an object or array binding cannot be embedded in text", "binding", name, "location", location)
				return ph
			}
			str, err := canonjson.PyStr(val)
			if err != nil {
				firstErr = invalid(CodeInvalidBinding, err.Error(), "binding", name, "location", location)
				return ph
			}
			return str
		})
		if firstErr != nil {
			return nil, firstErr
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := resolve(e, s, fmt.Sprintf("%s[%d]", location, i))
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out := make(map[string]any, len(x))
		for _, k := range keys {
			r, err := resolve(x[k], s, location+"."+k)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	}
	return v, nil
}

func unresolved(name, location string) *fault.Error {
	return invalid(CodeUnresolvedBinding, "binding ${"+name+"} is not defined", "binding", name, "location", location)
}

// resolveMap resolves a binding map whose values may refer to outer
// bindings and to each other, the way solopi-ai does: in passes over the
// keys in written order, each pass seeing the outer scope plus what earlier
// passes resolved; a key waiting on a sibling that is still pending is
// retried next pass. A reference to any other undefined name, or a cycle,
// is an error.
func resolveMap(m bindingMap, outer scope, location string) (map[string]any, error) {
	pending := make(map[string]bool, len(m.keys))
	for _, k := range m.keys {
		pending[k] = true
	}
	resolved := make(map[string]any, len(m.keys))
	for pass := 0; pass <= len(m.keys); pass++ {
		available := outer.with(resolved)
		progressed := false
		for _, k := range m.keys {
			if !pending[k] {
				continue
			}
			v, err := resolve(m.values[k], available, location+"."+k)
			if err != nil {
				var name string
				if fe := fault.From(err); fe.Code == CodeUnresolvedBinding {
					name, _ = fe.Details["binding"].(string)
				}
				if name == "" || !pending[name] {
					return nil, err
				}
				continue
			}
			resolved[k] = v
			delete(pending, k)
			progressed = true
		}
		if len(pending) == 0 {
			return resolved, nil
		}
		if !progressed {
			break
		}
	}
	// A cycle: report the first pending key in sorted order.
	var first string
	for k := range pending {
		if first == "" || k < first {
			first = k
		}
	}
	_, err := resolve(m.values[first], outer.with(resolved), location+"."+first)
	if err == nil {
		err = invalid(CodeUnresolvedBinding, "bindings refer to each other in a cycle", "location", location)
	}
	return nil, err
}

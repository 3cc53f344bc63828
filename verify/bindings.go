package verify

import (
	"fmt"
	"slices"
	"strings"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
)

// A placeholder is ${name} with name in the identifier grammar (1..128
// characters). placeholderAt and replacePlaceholders scan for it by hand:
// as a regular expression the bounded repetition costs milliseconds to
// compile, which every solopi invocation would pay at start-up.

// placeholderAt reports the placeholder that starts at s[i], if any, and
// the index just after it.
func placeholderAt(s string, i int) (name string, end int, ok bool) {
	if !strings.HasPrefix(s[i:], "${") {
		return "", 0, false
	}
	j := i + 2
	for j < len(s) && protocol.IsIDChar(s[j]) {
		j++
	}
	name = s[i+2 : j]
	if j >= len(s) || s[j] != '}' || !protocol.ValidID(name, 128) {
		return "", 0, false
	}
	return name, j + 1, true
}

// wholePlaceholder reports whether s is exactly one placeholder.
func wholePlaceholder(s string) (string, bool) {
	name, end, ok := placeholderAt(s, 0)
	return name, ok && end == len(s)
}

// replacePlaceholders replaces every placeholder of s, left to right, with
// fn(name, placeholder text).
func replacePlaceholders(s string, fn func(name, text string) string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		name, end, ok := placeholderAt(s, i)
		if !ok {
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(fn(name, s[i:end]))
		last, i = end, end-1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

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
		if name, ok := wholePlaceholder(x); ok {
			val, ok := s[name]
			if !ok {
				return nil, unresolved(name, location)
			}
			return val, nil
		}
		var firstErr error
		out := replacePlaceholders(x, func(name, ph string) string {
			if firstErr != nil {
				return ph
			}
			val, ok := s[name]
			if !ok {
				firstErr = unresolved(name, location)
				return ph
			}
			if isContainer(val) {
				firstErr = invalid(fault.CodeInvalidBinding, "an object or array binding cannot be embedded in text", "binding", name, "location", location)
				return ph
			}
			str, err := canonjson.PyStr(val)
			if err != nil {
				firstErr = invalid(fault.CodeInvalidBinding, err.Error(), "binding", name, "location", location)
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
	return invalid(fault.CodeUnresolvedBinding, "binding ${"+name+"} is not defined", "binding", name, "location", location)
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
				if fe := fault.From(err); fe.Code == fault.CodeUnresolvedBinding {
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
		err = invalid(fault.CodeUnresolvedBinding, "bindings refer to each other in a cycle", "location", location)
	}
	return nil, err
}

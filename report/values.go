package report

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// obj is a JSON object decoded with json.Number. Readers use the helpers
// below so that a missing or mistyped field is an empty value, never a
// panic: evidence written by older or newer versions still renders.
type obj = map[string]any

func str(m obj, key string) string {
	switch v := m[key].(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

func integer(m obj, key string) (int64, bool) {
	switch v := m[key].(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i, true
		}
		if f, err := v.Float64(); err == nil {
			return int64(f), true
		}
	case float64:
		return int64(v), true
	case int:
		return int64(v), true
	}
	return 0, false
}

func float(m obj, key string) (float64, bool) {
	switch v := m[key].(type) {
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	case float64:
		return v, true
	case int:
		return float64(v), true
	}
	return 0, false
}

func boolean(m obj, key string) (bool, bool) {
	b, ok := m[key].(bool)
	return b, ok
}

func object(m obj, key string) obj {
	o, _ := m[key].(map[string]any)
	return o
}

func objects(m obj, key string) []obj {
	list, _ := m[key].([]any)
	out := make([]obj, 0, len(list))
	for _, v := range list {
		if o, ok := v.(map[string]any); ok {
			out = append(out, o)
		}
	}
	return out
}

func texts(m obj, key string) []string {
	list, _ := m[key].([]any)
	out := make([]string, 0, len(list))
	for _, v := range list {
		switch s := v.(type) {
		case string:
			out = append(out, s)
		case json.Number:
			out = append(out, s.String())
		}
	}
	return out
}

// pair reads a two-number array such as [x, y].
func pair(v any) ([2]float64, bool) {
	list, ok := v.([]any)
	if !ok || len(list) != 2 {
		return [2]float64{}, false
	}
	var out [2]float64
	for i, e := range list {
		switch n := e.(type) {
		case json.Number:
			f, err := n.Float64()
			if err != nil {
				return out, false
			}
			out[i] = f
		case float64:
			out[i] = n
		default:
			return out, false
		}
	}
	return out, true
}

// compact prints any JSON value on one line with sorted keys, for the
// free-form details a report shows as text.
func compact(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// keyValues lists an object's fields as "key: value" in key order,
// skipping the ones named in skip.
func keyValues(m obj, skip ...string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		if !contains(skip, k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if v := compact(m[k]); v != "" && v != "[]" && v != "{}" && v != "null" {
			out = append(out, k+": "+v)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}

package verify

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/protocol"
)

// Requirement and plan documents are read as generic JSON trees
// (canonjson.Decode: objects are map[string]any, numbers json.Number) so
// that a missing key, a null and a wrong type stay distinguishable, as they
// are to solopi-ai, and integers stay distinct from floats in fingerprints.

// lookup is Python's dict.get(key, def): def only when the key is absent
// (a present null stays nil).
func lookup(m map[string]any, key string, def any) any {
	if v, ok := m[key]; ok {
		return v
	}
	return def
}

func object(v any, label string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalid(CodeInvalidContract, label+" must be an object", "field", label)
	}
	return m, nil
}

func list(v any, label string, allowEmpty bool) ([]any, error) {
	l, ok := v.([]any)
	if !ok || (!allowEmpty && len(l) == 0) {
		want := "a non-empty list"
		if allowEmpty {
			want = "a list"
		}
		return nil, invalid(CodeInvalidContract, label+" must be "+want, "field", label)
	}
	return l, nil
}

// identifier trims and checks an ID.
func identifier(v any, label string) (string, error) {
	s, ok := v.(string)
	if !ok || !protocol.ValidID(strings.TrimSpace(s), 128) {
		return "", invalid(CodeInvalidID, label+" must be 1 to 128 identifier characters ([A-Za-z0-9][A-Za-z0-9._-]*)", "field", label)
	}
	return strings.TrimSpace(s), nil
}

func identifiers(v []any, label string) ([]string, error) {
	out := make([]string, 0, len(v))
	for _, x := range v {
		id, err := identifier(x, label)
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, nil
}

// text trims and checks non-empty text.
func text(v any, label string) (string, error) {
	s, ok := v.(string)
	if !ok || strings.TrimSpace(s) == "" {
		return "", invalid(CodeInvalidContract, label+" must be non-empty text")
	}
	return strings.TrimSpace(s), nil
}

func uniqueIDs(ids []string, label string) error {
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			return invalid(CodeDuplicateID, label+" contains a duplicate ID", "id", id)
		}
		seen[id] = true
	}
	return nil
}

// integer reads a JSON integer (not a float, not a boolean: Python's
// isinstance(v, int) minus bool).
func JSONInteger(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		if !canonjson.IsInteger(x) {
			return 0, false
		}
		i, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			// Out of int64: certainly out of every range we check.
			if strings.HasPrefix(string(x), "-") {
				return math.MinInt64, true
			}
			return math.MaxInt64, true
		}
		return i, true
	case int:
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}

// isContainer reports a JSON object or array.
func isContainer(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

func UnknownKeys(m map[string]any, allowed ...string) []string {
	var out []string
	for k := range m {
		ok := false
		for _, a := range allowed {
			if k == a {
				ok = true
				break
			}
		}
		if !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func strs(v []string) []any {
	out := make([]any, len(v))
	for i, s := range v {
		out[i] = s
	}
	return out
}

func fingerprint(v any) string {
	s, err := canonjson.Fingerprint(v)
	if err != nil {
		// Every tree we hash was built from checked values; a failure is
		// a bug, not bad input.
		panic(fmt.Sprintf("verify: canonical JSON of an internal tree: %v", err))
	}
	return s
}

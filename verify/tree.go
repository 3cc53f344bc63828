package verify

import (
	"fmt"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
)

// Requirement and plan documents are read as generic JSON trees
// (canonjson.Decode: objects are map[string]any, numbers json.Number) so
// that a missing key, a null and a wrong type stay distinguishable, as they
// are to solopi-ai, and integers stay distinct from floats in fingerprints.

// want reads requirement and plan trees, refusing a wrong type as an
// invalid contract that names the field.
var want = canonjson.Refuse(func(label, w string) error {
	return invalid(fault.CodeInvalidContract, label+" must be "+w, "field", label)
})

// identifier trims and checks an ID.
func identifier(v any, label string) (string, error) {
	s, ok := v.(string)
	if !ok || !protocol.ValidID(pyStrip(s), 128) {
		return "", invalid(fault.CodeInvalidID, label+" must be 1 to 128 identifier characters ([A-Za-z0-9][A-Za-z0-9._-]*)", "field", label)
	}
	return pyStrip(s), nil
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
	if !ok || pyStrip(s) == "" {
		return "", invalid(fault.CodeInvalidContract, label+" must be non-empty text")
	}
	return pyStrip(s), nil
}

func uniqueIDs(ids []string, label string) error {
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			return invalid(fault.CodeDuplicateID, label+" contains a duplicate ID", "id", id)
		}
		seen[id] = true
	}
	return nil
}

// isContainer reports a JSON object or array.
func isContainer(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
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

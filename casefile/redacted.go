package casefile

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
)

// CodeRedactedValue refuses a case that carries the redaction marker.

// checkRedacted refuses a case that holds redact.Marker in any value (a
// parameter, a node field, a name, advanceSettings, a field we do not
// know), naming the first such place by its JSON path. The marker is what
// this host prints in place of a secret: a case holding it was copied
// from a redacted output, and importing it would store the marker where
// the value was, so the next replay types or compares "[redacted]".
// The authoring policy applies it (case-validate, case-import, run).
func checkRedacted(c *Case) error {
	t, err := c.fileTree(false)
	if err != nil {
		return err
	}
	path, found := findMarker(t, "$")
	if !found {
		return nil
	}
	return newError(fault.CodeRedactedValue, "%s holds %s, the marker this host prints in place of a secret: the value was lost when the case was printed; "+
		"export the case with case-get --output, which keeps the values", path, redact.Marker).with("jsonPath", path)
}

// checkStepRedacted is checkRedacted for the one step an edit wrote (at
// index of the edited case): the case it writes would be refused by
// case-validate and case-import, so the edit refuses it first, with the
// value's JSON path in the case.
func checkStepRedacted(s Step, index int) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	doc, err := canonjson.Decode(b)
	if err != nil {
		return err
	}
	path, found := findMarker(doc, "$.operationLog.steps["+strconv.Itoa(index)+"]")
	if !found {
		return nil
	}
	return stepError(fault.CodeRedactedValue, index, s.StepID, "%s holds %s, the marker this host prints in place of a secret: "+
		"write the value itself", path, redact.Marker).with("jsonPath", path)
}

// findMarker walks a case tree (strings, string pointers, raw JSON of
// unknown fields, JSON documents carried as strings) in key order.
func findMarker(v any, path string) (string, bool) {
	switch x := v.(type) {
	case string:
		// advanceSettings is a JSON document in a string (where the marker
		// may be spelt with escapes): name the place inside it.
		if t := strings.TrimSpace(x); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
			if doc, err := canonjson.Decode([]byte(t)); err == nil {
				if p, found := findMarker(doc, path); found {
					return p, true
				}
			}
		}
		if strings.Contains(x, redact.Marker) {
			return path, true
		}
	case *string:
		if x == nil {
			return "", false
		}
		return findMarker(*x, path)
	case json.RawMessage:
		doc, err := canonjson.Decode(x)
		if err != nil {
			return "", false
		}
		return findMarker(doc, path)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if p, found := findMarker(x[k], path+member(k)); found {
				return p, true
			}
		}
	case []any:
		for i, e := range x {
			if p, found := findMarker(e, path+"["+strconv.Itoa(i)+"]"); found {
				return p, true
			}
		}
	}
	return "", false
}

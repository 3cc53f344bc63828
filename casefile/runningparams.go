package casefile

// advanceSettings and its running params (AdvanceCaseSetting.runningParam).

import (
	"slices"
	"strings"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
)

func normalizeAdvanceSettings(s string) (string, error) {
	obj, err := parseAdvanceSettings(s)
	if err != nil {
		return "", err
	}
	if obj == nil {
		return "", nil
	}
	if rp, ok := obj["runningParam"]; ok {
		if err := validateRunningParam(rp); err != nil {
			return "", err
		}
	}
	return encodeJSON(obj, false)
}

func parseAdvanceSettings(s string) (map[string]any, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	g, err := canonjson.Decode([]byte(s))
	if err != nil {
		e := newError(fault.CodeInvalidAdvanceSettings, "advanceSettings is not valid encoded JSON").wrap(err)
		e.Field = "advanceSettings"
		return nil, e
	}
	if err := checkJSON([]byte(s), "$.advanceSettings"); err != nil {
		return nil, err
	}
	obj, ok := g.(map[string]any)
	if !ok {
		e := newError(fault.CodeInvalidAdvanceSettings, "advanceSettings must encode an object, not %s", jsonKind(g))
		e.Field = "advanceSettings"
		return nil, e
	}
	return obj, nil
}

// validateRunningParam enforces {mode: SEPARATE|UNION, paramList: [...]}:
// SEPARATE rows hold exactly one unique key whose value is a comma list
// without empty items; UNION rows all share one key set; keys carry no
// surrounding whitespace; values are non-empty strings. The checks run in
// solopi-ai's order (keys in sorted order) and carry its detail fields:
// missingFields/unknownFields, mode, paramIndex, param, expectedKeys and
// actualKeys.
func validateRunningParam(v any) error {
	bad := func(format string, args ...any) *Error {
		e := newError(fault.CodeInvalidRunningParams, "runningParam: "+format, args...)
		e.Field = "advanceSettings.runningParam"
		return e
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return bad("must be an object")
	}
	missing, unknown := []string{}, []string{}
	for _, k := range []string{"mode", "paramList"} {
		if _, ok := obj[k]; !ok {
			missing = append(missing, k)
		}
	}
	for _, k := range sortedKeys(obj) {
		if k != "mode" && k != "paramList" {
			unknown = append(unknown, k)
		}
	}
	if len(missing) > 0 || len(unknown) > 0 {
		return bad("only mode and paramList are allowed, and both are required").with("missingFields", missing).with("unknownFields", unknown)
	}
	mode, _ := obj["mode"].(string)
	if mode != "SEPARATE" && mode != "UNION" {
		return bad("mode must be SEPARATE or UNION").with("mode", obj["mode"])
	}
	list, ok := obj["paramList"].([]any)
	if !ok || len(list) == 0 {
		return bad("paramList must be a non-empty array")
	}
	seen := map[string]bool{}
	var unionKeys []string
	for i, item := range list {
		row, ok := item.(map[string]any)
		if !ok || len(row) == 0 {
			return bad("paramList[%d] must be a non-empty object", i).with("paramIndex", i)
		}
		if mode == "SEPARATE" && len(row) != 1 {
			return bad("paramList[%d] must hold exactly one param in SEPARATE mode", i).with("paramIndex", i)
		}
		keys := sortedKeys(row)
		for _, k := range keys {
			if strings.TrimSpace(k) == "" {
				return bad("paramList[%d] has an empty key", i).with("paramIndex", i)
			}
			if k != strings.TrimSpace(k) {
				return bad("paramList[%d] key %q has surrounding whitespace", i, k).with("paramIndex", i).with("param", k)
			}
			str, ok := row[k].(string)
			if !ok || strings.TrimSpace(str) == "" {
				return bad("paramList[%d].%s must be a non-empty string", i, k).with("paramIndex", i).with("param", k)
			}
			if mode == "SEPARATE" {
				for _, part := range strings.Split(str, ",") {
					if strings.TrimSpace(part) == "" {
						return bad("paramList[%d].%s must be a comma list without empty items", i, k).with("paramIndex", i).with("param", k)
					}
				}
			}
		}
		if mode == "SEPARATE" {
			if seen[keys[0]] {
				return bad("paramList[%d] repeats key %q", i, keys[0]).with("paramIndex", i).with("param", keys[0])
			}
			seen[keys[0]] = true
		} else if unionKeys == nil {
			unionKeys = keys
		} else if !slices.Equal(keys, unionKeys) {
			return bad("paramList[%d] keys %v differ from %v; UNION rows must share one key set", i, keys, unionKeys).
				with("paramIndex", i).with("expectedKeys", unionKeys).with("actualKeys", keys)
		}
	}
	return nil
}

// RunningParams summarises advanceSettings.runningParam as solopi-ai
// prints it: mode is null when none is configured.
type RunningParams struct {
	Configured bool    `json:"configured"`
	Mode       *string `json:"mode"`
	ItemCount  int     `json:"itemCount"`
}

// GetRunningParams reports the case's running params.
func GetRunningParams(c *Case) (RunningParams, error) {
	obj, err := parseAdvanceSettings(c.AdvanceSettings)
	if err != nil || obj == nil {
		return RunningParams{}, err
	}
	rp, ok := obj["runningParam"].(map[string]any)
	if !ok {
		return RunningParams{}, nil
	}
	out := RunningParams{Configured: true}
	if mode, ok := rp["mode"].(string); ok {
		out.Mode = &mode
	}
	list, _ := rp["paramList"].([]any)
	out.ItemCount = len(list)
	return out, nil
}

// SetRunningParams returns a copy of c whose advanceSettings.runningParam is
// the given document (validated); other advanceSettings keys are kept.
func SetRunningParams(c *Case, runningParam []byte) (*Case, error) {
	runningParam = trimBOM(runningParam)
	rp, err := decodeDocument(runningParam, fault.CodeInvalidRunningParams, "the running params file")
	if err != nil {
		return nil, err
	}
	if err := CheckJSON(runningParam); err != nil {
		return nil, err
	}
	if err := validateRunningParam(rp); err != nil {
		return nil, err
	}
	return editAdvanceSettings(c, func(obj map[string]any) { obj["runningParam"] = rp })
}

// ClearRunningParams returns a copy of c without advanceSettings.runningParam.
func ClearRunningParams(c *Case) (*Case, error) {
	return editAdvanceSettings(c, func(obj map[string]any) { delete(obj, "runningParam") })
}

func editAdvanceSettings(c *Case, edit func(map[string]any)) (*Case, error) {
	obj, err := parseAdvanceSettings(c.AdvanceSettings)
	if err != nil {
		return nil, err
	}
	if obj == nil {
		obj = map[string]any{}
	}
	edit(obj)
	out := c.Clone()
	s, err := encodeJSON(obj, false)
	if err != nil {
		return nil, err
	}
	out.AdvanceSettings = s
	return out, nil
}

// Package casefile reads, normalises, validates and writes SoloPi case files
// (RecordCaseInfo JSON as exported by SoloPi 0.12 / 1.x), and implements the
// pieces of the device's case handling that both the host CLI and the
// simulated device need: parameter encryption, the harness snapshot string
// and caseFingerprint, the PerformActionEnum catalog and step editing.
//
// Everything here is pure: no files, no clocks, no globals that change.
package casefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"strings"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
)

// Case is SoloPi's RecordCaseInfo with operationLog decoded into Steps.
type Case struct {
	// ID is the device database id; set only for cases read back from a
	// device (harness?type=case). Never written to import files.
	ID               *int64
	CaseName         string
	CaseDesc         string
	TargetAppPackage string
	TargetAppLabel   string
	// RecordMode is "local" for normal recordings.
	RecordMode string
	// AdvanceSettings is the AdvanceCaseSetting JSON document as a string,
	// or "" (SoloPi stores it encoded).
	AdvanceSettings string
	// Priority is 0 (highest) .. 2 (lowest). Parse defaults a missing value
	// to 2, as both the device bean and the host do.
	Priority  int
	GmtCreate int64
	GmtModify int64
	// CaseFingerprint is the device's caseFingerprint from a read-back;
	// informational only, never written to import files.
	CaseFingerprint string
	Steps           []Step
	// OperationLogUnknown keeps unknown operationLog keys (storePath is
	// device-internal and always dropped).
	OperationLogUnknown map[string]json.RawMessage
	// Unknown keeps unrecognised top-level keys. The write-only noise keys
	// selected, ideRecord and caseFingerprint are dropped on Parse.
	Unknown map[string]json.RawMessage
}

// defaultPriority is RecordCaseInfo.DEFAULT_PRIORITY.
const defaultPriority = 2

// Parse reads a case in either form: the exported form, where operationLog
// and advanceSettings are JSON documents encoded as strings, or the 1.x
// authoring form, where operationLog (and optionally advanceSettings) is an
// object. It checks JSON shape only; Normalize and DeviceValidate check
// content. The file and the operationLog it carries as a string must pass
// CheckJSON (UTF-8, no duplicate keys). Every error is an *Error.
func Parse(data []byte) (*Case, error) { return parse(data, true) }

// ParseAsDevice reads a case the way SoloPi's fastjson does on import: a
// key given twice keeps its last value and bytes that are not UTF-8 read as
// U+FFFD. The simulated device uses it; the host uses Parse.
func ParseAsDevice(data []byte) (*Case, error) { return parse(data, false) }

func parse(data []byte, strict bool) (*Case, error) {
	// Editors on Windows like to prepend a UTF-8 BOM; it is not JSON.
	data = trimBOM(data)
	g, err := decodeDocument(data, fault.CodeInvalidCaseJSON, "the case file")
	if err != nil {
		return nil, err
	}
	if strict {
		if err := CheckJSON(data); err != nil {
			return nil, err
		}
	}
	return parseTree(g, strict)
}

// parseTree reads a decoded case document (strict: the documents it
// carries as strings must pass CheckJSON).
func parseTree(g any, strict bool) (*Case, error) {
	obj, ok := g.(map[string]any)
	if !ok {
		return nil, newError(fault.CodeInvalidCaseJSON, "case JSON must be an object, not %s", jsonKind(g))
	}
	c := &Case{Priority: defaultPriority}
	fieldErr := func(field, want string) error {
		e := newError(fault.CodeInvalidField, "case field %s must be %s", field, want)
		e.Field = field
		return e
	}
	strFields := map[string]*string{
		"caseName": &c.CaseName, "caseDesc": &c.CaseDesc,
		"targetAppPackage": &c.TargetAppPackage, "targetAppLabel": &c.TargetAppLabel,
		"recordMode": &c.RecordMode,
	}
	for k, v := range obj {
		if dst, ok := strFields[k]; ok {
			s, ok := optString(v)
			if !ok {
				return nil, fieldErr(k, "a string")
			}
			*dst = s
			continue
		}
		switch k {
		case "id":
			if v == nil {
				continue
			}
			num, ok := v.(json.Number)
			if !ok {
				return nil, fieldErr(k, "an integer")
			}
			id, err := num.Int64()
			if err != nil {
				return nil, fieldErr(k, "an integer")
			}
			c.ID = &id
		case "priority":
			if v == nil {
				continue
			}
			p, ok := intValue(v)
			if !ok {
				return nil, fieldErr(k, "an integer")
			}
			c.Priority = p
		case "gmtCreate", "gmtModify":
			if v == nil {
				continue
			}
			num, ok := v.(json.Number)
			if !ok {
				return nil, fieldErr(k, "an integer")
			}
			t, err := num.Int64()
			if err != nil {
				return nil, fieldErr(k, "an integer")
			}
			if k == "gmtCreate" {
				c.GmtCreate = t
			} else {
				c.GmtModify = t
			}
		case "advanceSettings":
			switch x := v.(type) {
			case nil:
			case string:
				c.AdvanceSettings = x
			case map[string]any:
				// Accept the object form authors tend to write; SoloPi needs
				// the string, so encode it compactly with sorted keys.
				s, err := encodeJSON(x, false)
				if err != nil {
					return nil, fieldErr(k, "a JSON object or an encoded JSON object")
				}
				c.AdvanceSettings = s
			default:
				return nil, fieldErr(k, "a string or an object")
			}
		case "operationLog":
			if err := c.parseOperationLog(v, strict); err != nil {
				return nil, err
			}
		case "caseFingerprint":
			if str, ok := v.(string); ok {
				c.CaseFingerprint = str
			}
		case "selected", "ideRecord":
			// Write-only noise from exports.
		default:
			if err := putUnknown(&c.Unknown, k, v); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

func (c *Case) parseOperationLog(v any, strict bool) error {
	var obj map[string]any
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if strings.TrimSpace(x) == "" {
			return nil
		}
		g, err := canonjson.Decode([]byte(x))
		if errors.Is(err, canonjson.ErrTrailingData) {
			return newError(fault.CodeInvalidOperationLog, "operationLog has trailing data").wrap(err)
		}
		if err != nil {
			return newError(fault.CodeInvalidOperationLog, "operationLog is not valid encoded JSON").wrap(err)
		}
		if strict {
			if err := checkJSON([]byte(x), "$.operationLog"); err != nil {
				return err
			}
		}
		m, ok := g.(map[string]any)
		if !ok {
			return newError(fault.CodeInvalidOperationLog, "operationLog must encode an object, not %s", jsonKind(g))
		}
		obj = m
	case map[string]any:
		obj = x
	default:
		return newError(fault.CodeInvalidOperationLog, "operationLog must be an object or an encoded object, not %s", jsonKind(v))
	}
	for k, val := range obj {
		switch k {
		case "steps":
			if val == nil {
				continue
			}
			list, ok := val.([]any)
			if !ok {
				return newError(fault.CodeInvalidOperationLog, "operationLog.steps must be an array, not %s", jsonKind(val))
			}
			c.Steps = make([]Step, 0, len(list))
			for i, raw := range list {
				if raw == nil {
					// A null step reads as an empty step; validation then
					// reports it as having no supported action, like SoloPi.
					c.Steps = append(c.Steps, Step{})
					continue
				}
				m, ok := raw.(map[string]any)
				if !ok {
					return stepError(fault.CodeInvalidStep, i, "", "step must be an object, not %s", jsonKind(raw))
				}
				s, err := stepFromGeneric(m, i)
				if err != nil {
					return err
				}
				c.Steps = append(c.Steps, s)
			}
		case "storePath":
			// A device-local file path; meaningless anywhere else.
		default:
			if err := putUnknown(&c.OperationLogUnknown, k, val); err != nil {
				return err
			}
		}
	}
	return nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "an unknown value"
}

// Clone returns a deep copy.
func (c *Case) Clone() *Case {
	if c == nil {
		return nil
	}
	out := *c
	out.ID = clonePtr(c.ID)
	out.Unknown = maps.Clone(c.Unknown)
	out.OperationLogUnknown = maps.Clone(c.OperationLogUnknown)
	if c.Steps != nil {
		out.Steps = make([]Step, len(c.Steps))
		for i, s := range c.Steps {
			out.Steps[i] = s.Clone()
		}
	}
	return &out
}

// operationLogTree is the authoring representation of operationLog.
func (c *Case) operationLogTree() map[string]any {
	out := map[string]any{}
	for k, v := range c.OperationLogUnknown {
		out[k] = v
	}
	steps := make([]any, len(c.Steps))
	for i, s := range c.Steps {
		steps[i] = s.tree()
	}
	out["steps"] = steps
	return out
}

// fileTree is the import-file representation. Generated fields (id,
// gmtCreate, gmtModify, selected, caseFingerprint) are left out: SoloPi
// assigns them on import and the host must not pretend otherwise.
func (c *Case) fileTree(operationLogAsString bool) (map[string]any, error) {
	out := map[string]any{}
	for k, v := range c.Unknown {
		out[k] = v
	}
	out["caseName"] = c.CaseName
	out["caseDesc"] = c.CaseDesc
	out["targetAppPackage"] = c.TargetAppPackage
	out["targetAppLabel"] = c.TargetAppLabel
	out["recordMode"] = c.RecordMode
	out["advanceSettings"] = c.AdvanceSettings
	out["priority"] = c.Priority
	if operationLogAsString {
		s, err := encodeJSON(c.operationLogTree(), false)
		if err != nil {
			return nil, err
		}
		out["operationLog"] = s
	} else {
		out["operationLog"] = c.operationLogTree()
	}
	return out, nil
}

// MarshalJSON writes the full read-back view in authoring form (as
// case-get prints it): operationLog as an object, plus id, gmtCreate,
// gmtModify and caseFingerprint when known. Use Marshal/MarshalAuthoring for
// files meant for import or editing.
func (c *Case) MarshalJSON() ([]byte, error) {
	t, err := c.fileTree(false)
	if err != nil {
		return nil, err
	}
	if c.ID != nil {
		t["id"] = *c.ID
	}
	if c.GmtCreate != 0 || c.GmtModify != 0 {
		t["gmtCreate"] = c.GmtCreate
		t["gmtModify"] = c.GmtModify
	}
	if c.CaseFingerprint != "" {
		t["caseFingerprint"] = c.CaseFingerprint
	}
	s, err := encodeJSON(t, false)
	return []byte(s), err
}

// UnmarshalJSON is Parse.
func (c *Case) UnmarshalJSON(data []byte) error {
	parsed, err := Parse(data)
	if err != nil {
		return err
	}
	*c = *parsed
	return nil
}

// marshal writes the exported/import form on one line: keys sorted like
// fastjson, operationLog and advanceSettings as compact JSON strings,
// generated fields dropped. It does not normalise; call Normalize first.
func marshal(c *Case) ([]byte, error) {
	t, err := c.fileTree(true)
	if err != nil {
		return nil, err
	}
	s, err := encodeJSON(t, false)
	if err != nil {
		return nil, err
	}
	return []byte(s), nil
}

// MarshalImportFile is Marshal indented by 2 with a trailing newline: the
// exact shape of the file the host pushes into harness-import/.
func MarshalImportFile(c *Case) ([]byte, error) {
	return indented(marshal(c))
}

// MarshalAuthoring writes the authoring form used by case-step edits:
// indented by 2, operationLog kept as an object, trailing newline.
func MarshalAuthoring(c *Case) ([]byte, error) {
	t, err := c.fileTree(false)
	if err != nil {
		return nil, err
	}
	s, err := encodeJSON(t, false)
	if err != nil {
		return nil, err
	}
	return indented([]byte(s), nil)
}

func indented(compact []byte, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, compact, "", "  "); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

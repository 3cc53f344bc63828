package casefile

import (
	"fmt"
	"github.com/solopi-dev/solopi/fault"
)

// DeviceValidate reproduces the SoloPi 1.x device-side check that
// harness?type=case-import runs after parsing
// (docs/file-formats.md#device-validation), in the same order and with the
// same messages. It returns nil or an *Error with Code "invalid_case" whose
// Message is exactly the device's `error` text.
//
// The device resolves actionEnum as fastjson does: by enum NAME, ignoring
// ASCII case; codes such as "click" or provider shorthands are unknown to
// it and count as "no supported action". A Parse failure corresponds to the
// device's invalid_case_json ("Case JSON cannot be parsed by SoloPi").
func DeviceValidate(c *Case) error {
	fail := func(index int, msg string) error {
		e := &Error{Code: fault.CodeInvalidCase, Message: msg, StepIndex: index}
		return e
	}
	if c == nil || c.CaseName == "" {
		return fail(-1, "Case name is required")
	}
	if c.TargetAppPackage == "" {
		return fail(-1, "Target app package is required")
	}
	if c.Priority < 0 || c.Priority > 2 {
		return fail(-1, "Case priority must be between 0 and 2")
	}
	if len(c.Steps) == 0 {
		return fail(-1, "Case must contain at least one inline operation step")
	}
	seen := make(map[string]bool, len(c.Steps))
	for i, s := range c.Steps {
		row, ok := enumByDeviceName(s.Method.ActionEnum)
		if !ok {
			return fail(i, fmt.Sprintf("Case step %d has no supported action", i))
		}
		if s.OperationID == "" || s.StepID == "" {
			return fail(i, fmt.Sprintf("Case step %d has no operationId or stepId", i))
		}
		if s.OperationIndex < 0 {
			return fail(i, fmt.Sprintf("Case step %d has a negative operationIndex", i))
		}
		if seen[s.StepID] {
			return fail(i, fmt.Sprintf("Case step %d has a duplicate stepId", i))
		}
		seen[s.StepID] = true
		if row.category == categoryNode && !s.Node.HasSelector() {
			return fail(i, fmt.Sprintf("Case step %d has no grounded node selector", i))
		}
	}
	return nil
}

// ApplyDeviceImportDefaults applies what the device does to a case that
// passed DeviceValidate before storing it: the new database id, creation
// and modification time = now, "local" for an empty recordMode, the package
// for an empty label, and action names canonicalised (fastjson stores the
// enum's name()). caseDesc and advanceSettings are already "" when null.
// It returns a new Case; c is not modified.
func ApplyDeviceImportDefaults(c *Case, id, nowMillis int64) *Case {
	out := c.Clone()
	out.ID = &id
	out.GmtCreate = nowMillis
	out.GmtModify = nowMillis
	if out.RecordMode == "" {
		out.RecordMode = "local"
	}
	if out.TargetAppLabel == "" {
		out.TargetAppLabel = out.TargetAppPackage
	}
	for i := range out.Steps {
		if row, ok := enumByDeviceName(out.Steps[i].Method.ActionEnum); ok {
			out.Steps[i].Method.ActionEnum = row.name
		}
	}
	return out
}

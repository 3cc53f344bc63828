package soloapp

// The device-side case rules live in casefile (

import (
	"errors"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/casefile/paramcrypt"
)

// validateImportedCase is the device's import validation; it returns the
// exact invalid_case message or "".
func validateImportedCase(c *casefile.Case) string {
	err := casefile.DeviceValidate(c)
	if err == nil {
		return ""
	}
	var ce *casefile.Error
	if errors.As(err, &ce) {
		return ce.Message
	}
	return err.Error()
}

// decryptSteps returns copies of steps with every parameter the device
// reads as encrypted decrypted (a value that fails stays raw) and encrypt
// set to false: the inline copy a replay executes
// (docs/file-formats.md#case-snapshot).
func decryptSteps(steps []casefile.Step, seed string) []casefile.Step {
	out := make([]casefile.Step, len(steps))
	for i, s := range steps {
		c := s.Clone()
		if s.Method.EncryptedOnDevice() {
			for k, v := range c.Method.Params {
				if v != nil {
					c.Method.Params[k] = casefile.Str(paramcrypt.DecryptOrRaw(seed, *v))
				}
			}
		}
		c.Method.Encrypt = casefile.Bool(false)
		out[i] = c
	}
	return out
}

// fingerprintOf is caseFingerprint over a stored row and its snapshot
// operationLog string.
func fingerprintOf(r *caseRow, opLog string) string {
	id := r.id
	prio := int64(r.priority)
	create, modify := r.gmtCreate, r.gmtModify
	name, pkg, label, mode := r.name, r.pkg, r.label, r.recordMode
	return casefile.Fingerprint(casefile.FingerprintInput{
		ID: &id, CaseName: &name, CaseDesc: r.desc, TargetAppPackage: &pkg, TargetAppLabel: &label,
		RecordMode: &mode, AdvanceSettings: r.advance, OperationLog: &opLog, Priority: &prio,
		GmtCreate: &create, GmtModify: &modify,
	})
}

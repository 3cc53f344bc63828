package replay

// The local case commands (case-template, case-validate, case-step-*) and
// the output of case-get: what each prints and what its --output file
// holds. Printed cases hide the values their author marked encrypted
// (casefile.RedactSecrets); files keep every value, so that what a command
// writes imports back as the same case.

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/fault"
)

// LocalOutput is what a case command prints and, with --output, writes.
type LocalOutput struct {
	// Print is the printed object, its case not yet placed.
	Print caseResult
	// Case is the case as printed when there is no --output.
	Case any
	// File is the --output file's content: every value kept.
	File []byte
	// Perm is the file's mode (0 is 0644; 0600 for a file with secrets).
	Perm os.FileMode
}

// Emit is the object to print: with the case when output is "", else
// after writing File at output (replacing a file there, never through a
// symlink; missing parents created) with output and outputReplaced.
func (l *LocalOutput) Emit(output string) (any, error) {
	if output == "" {
		return l.Print.placed(caseDest{Case: l.Case}), nil
	}
	fr, err := writeCaseOutput(output, l.File, true, l.Perm)
	if err != nil {
		return nil, err
	}
	return l.Print.placed(written(fr)), nil
}

// jsonValue decodes a case writer's bytes for printing (integers exact).
func jsonValue(b []byte) any {
	v, err := canonjson.Decode(b)
	if err != nil {
		return nil
	}
	return v
}

// CaseTemplate is case-template: solopi-ai's one-step template
// (casefile.Template) in authoring form.
func CaseTemplate(name, pkg, label string) (*LocalOutput, error) {
	n, err := casefile.Template(name, pkg, label)
	if err != nil {
		return nil, caseError(err)
	}
	b, err := casefile.MarshalAuthoring(n)
	if err != nil {
		return nil, caseError(err)
	}
	return &LocalOutput{Print: caseTemplateResult{Success: true, CaseName: n.CaseName}, Case: jsonValue(b), File: b}, nil
}

// CaseValidateOptions are case-validate's flags.
type CaseValidateOptions struct {
	File string
	// Output is --output: checked (not written) before the file is read.
	Output            string
	RunningParamsFile string
	ClearRunning      bool
	ConfirmHighRisk   bool
}

// ValidateCaseFile is case-validate: the file read, its running params set
// or cleared, normalised under the authoring policy (values carrying the
// redaction marker refused). It prints solopi-ai's fields and the import
// form; the --output file is that form with every value.
func ValidateCaseFile(o CaseValidateOptions) (*LocalOutput, error) {
	if o.RunningParamsFile != "" && o.ClearRunning {
		return nil, fault.Usage(fault.CodeInvalidOption, "--running-params-file and --clear-running-params exclude each other")
	}
	if o.Output != "" {
		if err := CheckCaseOutput(o.Output, o.File, true); err != nil {
			return nil, err
		}
	}
	c, err := readCaseFile(o.File)
	if err != nil {
		return nil, err
	}
	switch {
	case o.RunningParamsFile != "":
		if c, err = setRunningParamsFile(c, o.RunningParamsFile); err != nil {
			return nil, err
		}
	case o.ClearRunning:
		if c, err = casefile.ClearRunningParams(c); err != nil {
			return nil, fileError(err, o.File)
		}
	}
	n, hr, err := casefile.Normalize(c, casefile.NormalizeOptions{ConfirmHighRisk: o.ConfirmHighRisk, Operation: "validate"})
	if err != nil {
		return nil, fileError(err, o.File)
	}
	rp, err := casefile.GetRunningParams(n)
	if err != nil {
		return nil, fileError(err, o.File)
	}
	if hr == nil {
		hr = []casefile.HighRiskStep{}
	}
	file, err := casefile.MarshalImportFile(n)
	if err != nil {
		return nil, caseError(err)
	}
	printed, err := casefile.MarshalImportFile(casefile.RedactSecrets(n))
	if err != nil {
		return nil, caseError(err)
	}
	return &LocalOutput{
		Print: caseValidateResult{Success: true, Valid: true, CaseName: n.CaseName, StepCount: len(n.Steps),
			HighRiskConfirmed: len(hr) > 0, ConfirmedHighRiskSteps: hr, RunningParams: rp},
		Case: jsonValue(printed), File: file, Perm: secretsPerm(n),
	}, nil
}

// secretsPerm is the mode of a file holding c: 0600 when c has values its
// author marked encrypted.
func secretsPerm(c *casefile.Case) os.FileMode {
	if len(casefile.SecretValues(c)) > 0 {
		return 0o600
	}
	return 0
}

// preparedImport is a case file checked for case-import before the device
// is contacted.
type preparedImport struct {
	// Source is the file as read (its caseName and caseFingerprint, when it
	// is an export, name the case it came from).
	Source *casefile.Case
	// Case is the normalised case that is pushed.
	Case     *casefile.Case
	HighRisk []casefile.HighRiskStep
}

// PrepareImport reads and normalises a case file for case-import under the
// authoring policy (a value carrying the redaction marker is refused).
func PrepareImport(file string, confirm bool) (*preparedImport, error) {
	c, err := readCaseFile(file)
	if err != nil {
		return nil, err
	}
	n, hr, err := casefile.Normalize(c, casefile.NormalizeOptions{ConfirmHighRisk: confirm, Operation: "import"})
	if err != nil {
		return nil, fileError(err, file)
	}
	if hr == nil {
		hr = []casefile.HighRiskStep{}
	}
	return &preparedImport{Source: c, Case: n, HighRisk: hr}, nil
}

// CaseStepList is case-step-list: every step of the file, or only the one
// at *index, described with the values their author marked encrypted
// redacted.
func CaseStepList(file string, index *int) (*stepListResult, error) {
	c, err := readCaseFile(file)
	if err != nil {
		return nil, err
	}
	steps, err := casefile.List(c)
	if err != nil {
		return nil, fileError(err, file)
	}
	total := len(steps)
	if index != nil {
		if steps, err = casefile.SelectStep(steps, *index); err != nil {
			return nil, caseError(err)
		}
	}
	abs, _ := filepath.Abs(file)
	return &stepListResult{Success: true, CaseName: c.CaseName, Source: abs, StepCount: total, Steps: steps}, nil
}

// StepEdit is one of casefile's step edits, applied to the source case.
type StepEdit func(c *casefile.Case, opts casefile.EditOptions) (*casefile.EditResult, error)

// CaseStepEdit is the shared flow of case-step-add/update/delete/move/copy:
// the output checked first, the edit (casefile re-normalises the whole case
// and applies the policy to the affected step), the result written in
// authoring form (created exclusively unless overwrite).
func CaseStepEdit(file, output string, overwrite, confirm bool, edit StepEdit) (*StepEditResult, error) {
	if err := CheckCaseOutput(output, file, overwrite); err != nil {
		return nil, err
	}
	cs, err := readCaseFile(file)
	if err != nil {
		return nil, err
	}
	res, err := edit(cs, casefile.EditOptions{ConfirmHighRisk: confirm})
	if err != nil {
		return nil, fileError(err, file)
	}
	b, err := casefile.MarshalAuthoring(res.Case)
	if err != nil {
		return nil, caseError(err)
	}
	fr, err := writeCaseOutput(output, b, overwrite, secretsPerm(res.Case))
	if err != nil {
		return nil, err
	}
	src, _ := filepath.Abs(file)
	out := &StepEditResult{Success: true, Operation: res.Operation, CaseName: res.Case.CaseName, Source: src, Output: fr.Path,
		StepCount: res.StepCount, AffectedIndex: res.AffectedIndex}
	if res.Operation == "delete" {
		out.RemovedStepID = &res.RemovedStepID
	} else {
		out.HighRiskConfirmed, out.Step = &res.HighRiskConfirmed, res.Step
	}
	return out, nil
}

// Export is case-get's output for a case read back from the device: the
// printed case has every parameter value redacted unless showSecrets (the
// read-back decrypts every value and cannot say which were encrypted);
// the --output file holds the case exactly as read back, every value in
// clear, as solopi-ai writes it (mode 0600), so that case-import of that
// file stores the same case.
func (c *deviceCase) Export(showSecrets bool) (*LocalOutput, error) {
	out := caseGetResult{Success: true, CaseName: c.Name, CaseID: c.ID, CaseFingerprint: c.Fingerprint, StepCount: c.StepCount()}
	printed := c.Object
	if !showSecrets {
		printed, out.RedactedParams = redactParams(c.Object)
	}
	b, err := artifacts.MarshalIndent(c.Object)
	if err != nil {
		return nil, fmt.Errorf("encode case: %w", err)
	}
	return &LocalOutput{Print: out, Case: printed, File: b, Perm: 0o600}, nil
}

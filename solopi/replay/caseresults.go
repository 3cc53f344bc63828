package replay

// What the local case commands and case-get print. Each result's fields
// are declared in the alphabetical order of their JSON names: these
// results used to be maps, whose keys encode sorted, and their bytes must
// not change. A pointer with omitempty is a key the command sets only in
// some cases, with a value that may be false or empty when set.

import (
	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/casefile"
)

// caseDest is where the case of case-get, case-template or case-validate
// went: printed in the result (Case) or written to a file (Output).
type caseDest struct {
	Case     any
	Output   string
	Replaced *bool
}

// written is the destination of a case written to a file.
func written(fr artifacts.FileResult) caseDest {
	return caseDest{Output: fr.Path, Replaced: &fr.Replaced}
}

// caseResult is a result that prints its case or names the file it went
// to; placed returns a copy of the result with dest filled in, so that
// one LocalOutput can be emitted more than once.
type caseResult interface {
	placed(dest caseDest) any
}

// caseGetResult is case-get's object.
type caseGetResult struct {
	Case            any    `json:"case,omitempty"`
	CaseFingerprint string `json:"caseFingerprint"`
	CaseID          int64  `json:"caseId"`
	CaseName        string `json:"caseName"`
	Output          string `json:"output,omitempty"`
	OutputReplaced  *bool  `json:"outputReplaced,omitempty"`
	// RedactedParams counts the parameter values the printed case hides.
	RedactedParams int  `json:"redactedParams"`
	StepCount      int  `json:"stepCount"`
	Success        bool `json:"success"`
}

func (r caseGetResult) placed(d caseDest) any {
	r.Case, r.Output, r.OutputReplaced = d.Case, d.Output, d.Replaced
	return r
}

// caseTemplateResult is case-template's object.
type caseTemplateResult struct {
	Case           any    `json:"case,omitempty"`
	CaseName       string `json:"caseName"`
	Output         string `json:"output,omitempty"`
	OutputReplaced *bool  `json:"outputReplaced,omitempty"`
	Success        bool   `json:"success"`
}

func (r caseTemplateResult) placed(d caseDest) any {
	r.Case, r.Output, r.OutputReplaced = d.Case, d.Output, d.Replaced
	return r
}

// caseValidateResult is case-validate's object.
type caseValidateResult struct {
	Case     any    `json:"case,omitempty"`
	CaseName string `json:"caseName"`
	// ConfirmedHighRiskSteps is [] rather than null when there are none.
	ConfirmedHighRiskSteps []casefile.HighRiskStep `json:"confirmedHighRiskSteps"`
	HighRiskConfirmed      bool                    `json:"highRiskConfirmed"`
	Output                 string                  `json:"output,omitempty"`
	OutputReplaced         *bool                   `json:"outputReplaced,omitempty"`
	RunningParams          casefile.RunningParams  `json:"runningParams"`
	StepCount              int                     `json:"stepCount"`
	Success                bool                    `json:"success"`
	Valid                  bool                    `json:"valid"`
}

func (r caseValidateResult) placed(d caseDest) any {
	r.Case, r.Output, r.OutputReplaced = d.Case, d.Output, d.Replaced
	return r
}

// stepListResult is case-step-list's object.
type stepListResult struct {
	CaseName string `json:"caseName"`
	// Source is the case file's absolute path.
	Source string `json:"source"`
	// StepCount counts every step, also with --index.
	StepCount int                       `json:"stepCount"`
	Steps     []casefile.StepDescriptor `json:"steps"`
	Success   bool                      `json:"success"`
}

// StepEditResult is the object of case-step-add, -update, -delete, -move
// and -copy. Delete sets RemovedStepID; the other edits set
// HighRiskConfirmed and Step.
type StepEditResult struct {
	AffectedIndex     int    `json:"affectedIndex"`
	CaseName          string `json:"caseName"`
	HighRiskConfirmed *bool  `json:"highRiskConfirmed,omitempty"`
	// InPlace is set by --in-place, whose Output is the case file itself.
	InPlace       bool                     `json:"inPlace,omitempty"`
	Operation     string                   `json:"operation"`
	Output        string                   `json:"output"`
	RemovedStepID *string                  `json:"removedStepId,omitempty"`
	Source        string                   `json:"source"`
	Step          *casefile.StepDescriptor `json:"step,omitempty"`
	StepCount     int                      `json:"stepCount"`
	Success       bool                     `json:"success"`
}

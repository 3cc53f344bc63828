package casefile

import (
	"strings"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
)

// templateDesc is the caseDesc of case-template, solopi-ai's text.
const templateDesc = "AI 编写的 SoloPi 用例"

// Template is solopi-ai's case-template: one SLEEP 1000 step, with its
// global step's node written as null, normalised. label defaults to the
// package. The name must not be blank and the package must look like an
// Android package (com.example.app): a template for a package that cannot
// exist would only fail later, on import or run.
func Template(name, pkg, label string) (*Case, error) {
	if strings.TrimSpace(name) == "" {
		e := newError(fault.CodeMissingCaseName, "--name must not be empty")
		e.Field = "caseName"
		return nil, e
	}
	if !protocol.ValidPackageName(pkg) {
		e := newError(fault.CodeMissingTargetPackage, "--target-package must look like com.example.app")
		e.Field = "targetAppPackage"
		return nil, e.with("targetPackage", pkg)
	}
	if label == "" {
		label = pkg
	}
	c := &Case{
		CaseName: name, CaseDesc: templateDesc, TargetAppPackage: pkg, TargetAppLabel: label,
		RecordMode: "local", Priority: defaultPriority,
		Steps: []Step{{
			OperationID: "ai-" + name, StepID: "ai-step-001",
			Method: Method{ActionEnum: "SLEEP", Encrypt: Bool(false), SafeEncrypt: Bool(false),
				Params: map[string]*string{"text": Str("1000")}},
			Unknown: nullNode(),
		}},
	}
	n, _, err := Normalize(c, NormalizeOptions{})
	return n, err
}

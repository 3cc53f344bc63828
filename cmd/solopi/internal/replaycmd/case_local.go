package replaycmd

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/replay"
)

// The local case commands that write a whole case: case-template and
// case-validate.

type caseTemplateOptions struct {
	name, pkg, label, output string
	compat                   bool
}

func newCmdCaseTemplate(e cmdutil.Env) *cli.Command {
	o := &caseTemplateOptions{}
	return &cli.Command{
		Name:      "case-template",
		Usage:     "write a minimal valid case (one SLEEP step) to start authoring from (local)",
		UsageText: "solopi case-template --name NAME --target-package PKG [--target-label LABEL] [--output FILE]",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "name", Destination: &o.name, Usage: "case name", Required: true},
			&cli.StringFlag{Name: "target-package", Destination: &o.pkg, Usage: "app under test", Required: true},
			&cli.StringFlag{Name: "target-label", Destination: &o.label, Usage: "app label (default: the package)"},
		}, replacedOutputFlags(&o.output, &o.compat)...),
		Action: cmdutil.Local(e, func(context.Context, *cmdutil.Globals) (cmdutil.Result, error) { return caseTemplate(o) }),
	}
}

// caseTemplate builds upstream's template: one SLEEP 1000 step.
func caseTemplate(o *caseTemplateOptions) (cmdutil.Result, error) {
	if o.name == "" {
		return cmdutil.Result{}, fault.Usage(casefile.CodeMissingCaseName, "--name must not be empty")
	}
	if !protocol.ValidPackageName(o.pkg) {
		return cmdutil.Result{}, fault.Usage(casefile.CodeMissingTargetPackage, "--target-package must look like com.example.app")
	}
	label := o.label
	if label == "" {
		label = o.pkg
	}
	if o.output != "" {
		if err := checkCaseOutput(o.output, "", true); err != nil {
			return cmdutil.Result{}, err
		}
	}
	tpl := map[string]any{
		"caseName": o.name, "caseDesc": "AI 编写的 SoloPi 用例", "targetAppPackage": o.pkg, "targetAppLabel": label,
		"recordMode": "local", "advanceSettings": "", "priority": casefile.DefaultPriority,
		"operationLog": map[string]any{"steps": []any{map[string]any{
			"operationId": "ai-" + o.name, "operationIndex": 0, "stepId": "ai-step-001",
			"operationMethod": map[string]any{"actionEnum": "SLEEP", "encrypt": false, "safeEncrypt": false, "operationParam": map[string]any{"text": "1000"}},
		}}},
	}
	raw, err := json.Marshal(tpl)
	if err != nil {
		return cmdutil.Result{}, fmt.Errorf("encode template: %w", err)
	}
	c, err := casefile.Parse(raw)
	if err != nil {
		return cmdutil.Result{}, caseFileError(err)
	}
	n, _, err := casefile.Normalize(c, casefile.NormalizeOptions{})
	if err != nil {
		return cmdutil.Result{}, caseFileError(err)
	}
	b, err := casefile.MarshalAuthoring(n)
	if err != nil {
		return cmdutil.Result{}, caseFileError(err)
	}
	out := map[string]any{"success": true, "caseName": n.CaseName}
	if o.output == "" {
		out["case"] = decodeCaseJSON(b)
		return cmdutil.OK(out), nil
	}
	return writeCaseResult(out, o.output, b)
}

type caseValidateOptions struct {
	file, output, runningParams string
	compat                      bool
	confirm, clearRunning       bool
}

func newCmdCaseValidate(e cmdutil.Env) *cli.Command {
	o := &caseValidateOptions{}
	return &cli.Command{
		Name:      "case-validate",
		Usage:     "check a case file locally: JSON Schema, normalisation and authoring policy",
		UsageText: "solopi case-validate --file CASE.json [--output FILE] [--confirm-high-risk] [--running-params-file F | --clear-running-params]",
		Flags: append(append([]cli.Flag{caseFileFlag(&o.file)}, replacedOutputFlags(&o.output, &o.compat)...), confirmFlag(&o.confirm),
			&cli.StringFlag{Name: "running-params-file", Destination: &o.runningParams, Usage: "set advanceSettings.runningParam from this JSON file"},
			&cli.BoolFlag{Name: "clear-running-params", Destination: &o.clearRunning, Usage: "remove advanceSettings.runningParam"}),
		Action: cmdutil.Local(e, func(context.Context, *cmdutil.Globals) (cmdutil.Result, error) { return caseValidate(o) }),
	}
}

func caseValidate(o *caseValidateOptions) (cmdutil.Result, error) {
	if o.runningParams != "" && o.clearRunning {
		return cmdutil.Result{}, fault.Usage(replay.CodeInvalidRunOption, "--running-params-file and --clear-running-params exclude each other")
	}
	if o.output != "" {
		if err := checkCaseOutput(o.output, o.file, true); err != nil {
			return cmdutil.Result{}, err
		}
	}
	c, err := readCaseFile(o.file)
	if err != nil {
		return cmdutil.Result{}, err
	}
	switch {
	case o.runningParams != "":
		rp, err := readLocalInput(o.runningParams, "running params file")
		if err != nil {
			return cmdutil.Result{}, err
		}
		if c, err = casefile.SetRunningParams(c, rp); err != nil {
			return cmdutil.Result{}, caseFileError(err)
		}
	case o.clearRunning:
		if c, err = casefile.ClearRunningParams(c); err != nil {
			return cmdutil.Result{}, caseFileError(err)
		}
	}
	n, hr, err := casefile.Normalize(c, casefile.NormalizeOptions{ConfirmHighRisk: o.confirm})
	if err != nil {
		return cmdutil.Result{}, caseFileError(err)
	}
	rp, err := casefile.GetRunningParams(n)
	if err != nil {
		return cmdutil.Result{}, caseFileError(err)
	}
	if hr == nil {
		hr = []casefile.HighRiskStep{}
	}
	out := map[string]any{"success": true, "valid": true, "caseName": n.CaseName, "stepCount": len(n.Steps),
		"highRiskConfirmed": len(hr) > 0, "confirmedHighRiskSteps": hr, "runningParams": rp}
	b, err := casefile.MarshalImportFile(n)
	if err != nil {
		return cmdutil.Result{}, caseFileError(err)
	}
	if o.output == "" {
		out["case"] = decodeCaseJSON(b)
		return cmdutil.OK(out), nil
	}
	return writeCaseResult(out, o.output, b)
}

// writeCaseResult writes a case-get, case-template or case-validate
// --output file where solopi-ai writes it (replacing an existing file) and
// says where and whether it replaced one.
func writeCaseResult(out map[string]any, output string, data []byte) (cmdutil.Result, error) {
	fr, err := caseOutput(true).WriteFile(output, data)
	if err != nil {
		return cmdutil.Result{}, err
	}
	out["output"] = fr.Path
	out["outputReplaced"] = fr.Replaced
	return cmdutil.OK(out), nil
}

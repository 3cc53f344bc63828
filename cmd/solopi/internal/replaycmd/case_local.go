package replaycmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
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

// caseTemplate is upstream's template: one SLEEP 1000 step.
func caseTemplate(o *caseTemplateOptions) (cmdutil.Result, error) {
	if o.output != "" {
		if err := replay.CheckCaseOutput(o.output, "", true); err != nil {
			return cmdutil.Result{}, err
		}
	}
	l, err := replay.CaseTemplate(o.name, o.pkg, o.label)
	if err != nil {
		return cmdutil.Result{}, err
	}
	return emitCase(l, o.output)
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
	l, err := replay.ValidateCaseFile(replay.CaseValidateOptions{File: o.file, Output: o.output, RunningParamsFile: o.runningParams,
		ClearRunning: o.clearRunning, ConfirmHighRisk: o.confirm})
	if err != nil {
		return cmdutil.Result{}, err
	}
	return emitCase(l, o.output)
}

package main

import (
	"context"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
)

// modelCommands are solopi-ai's nine model-* commands, which deploy and
// gate on-device decision models (signed ExecuTorch packages) through the
// companion app com.alipay.hulu.agentmodel. solopi deploys no such model:
// each command keeps its name and answers exit 3 not_supported with what
// to use instead, whatever flags it is given.
var modelCommands = []struct{ name, usage, instead string }{
	{"model-verify", "solopi-ai: verify a signed on-device model package (not supported)",
		"verify the package with solopi-ai's model-verify; solopi's verify-run decides explore steps with --decision-provider static, cloud or vision"},
	{"model-health", "solopi-ai: the on-device model companion's runtime health (not supported)",
		"use solopi-ai's model-health; `solopi doctor` checks SoloPi itself"},
	{"model-install", "solopi-ai: install a model package into the companion app (not supported)",
		"use solopi-ai's model-install; solopi's verify-run uses --decision-provider static, cloud or vision instead of an on-device model"},
	{"model-status", "solopi-ai: the companion's installed and active model versions (not supported)",
		"use solopi-ai's model-status"},
	{"model-activate", "solopi-ai: activate an installed model version (not supported)",
		"use solopi-ai's model-activate"},
	{"model-rollback", "solopi-ai: roll the active model back to the previous version (not supported)",
		"use solopi-ai's model-rollback"},
	{"model-infer", "solopi-ai: run one inference on the on-device model (not supported)",
		"use solopi-ai's model-infer; for decisions from a model on the host use `solopi verify-run --decision-provider vision` or `solopi agent-run`"},
	{"model-benchmark", "solopi-ai: benchmark the on-device model (not supported)",
		"use solopi-ai's model-benchmark"},
	{"model-release-check", "solopi-ai: gate a model release on benchmark and evaluation reports (not supported)",
		"use solopi-ai's model-release-check; its reports come from an on-device model solopi does not deploy"},
}

// newModelCommands registers solopi-ai's model-* commands as refusals.
func newModelCommands(e cmdutil.Env) []*cli.Command {
	cmds := make([]*cli.Command, 0, len(modelCommands))
	for _, m := range modelCommands {
		refuse := cmdutil.Local(e, func(context.Context, *cmdutil.Globals) (cmdutil.Result, error) {
			return cmdutil.Result{}, fault.Usage(fault.CodeNotSupported,
				m.name+" is not supported: solopi does not deploy on-device decision models (solopi-ai's signed ExecuTorch packages and its com.alipay.hulu.agentmodel companion)").
				With("command", m.name).With("insteadUse", m.instead)
		})
		cmds = append(cmds, &cli.Command{
			Name:            m.name,
			Usage:           m.usage,
			UsageText:       "solopi " + m.name + " [solopi-ai's flags, all ignored]\n\nAlways exit 3 not_supported: solopi does not deploy on-device decision models.",
			SkipFlagParsing: true,
			Action: func(c *cli.Context) error {
				// The flags are not parsed: --help is looked for here.
				if slices.ContainsFunc(c.Args().Slice(), func(a string) bool { return a == "--help" || a == "-h" }) {
					cli.HelpPrinter(c.App.Writer, c.Command.CustomHelpTemplate, c.Command)
					return nil
				}
				return refuse(c)
			},
		})
	}
	return cmds
}

package verifycmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/replay"
	"github.com/solopi-dev/solopi/verify"
)

// initOptions are verify-init's flags.
type initOptions struct {
	fromCase, caseName, output string
	overwrite                  bool
}

type initResult struct {
	Success     bool                 `json:"success"`
	Output      string               `json:"output"`
	Steps       int                  `json:"steps"`
	Checkpoints int                  `json:"checkpoints"`
	Complete    bool                 `json:"complete"`
	Skipped     []verify.SkippedStep `json:"skipped"`
	Next        string               `json:"next"`
}

// newCmdInit is verify-init: a requirement drafted from a recorded case.
func newCmdInit(e cmdutil.Env) *cli.Command {
	var o initOptions
	local := cmdutil.Local(e, func(ctx context.Context, _ *cmdutil.Globals) (cmdutil.Result, error) {
		b, err := cmdutil.ReadInput(o.fromCase, "case")
		if err != nil {
			return cmdutil.Result{}, err
		}
		c, err := casefile.Load(b)
		if err != nil {
			return cmdutil.Result{}, err
		}
		return runInit(o, c)
	})
	onDevice := cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
		s, err := d.Session(ctx, true)
		if err != nil {
			return cmdutil.Result{}, err
		}
		defer s.Close()
		dc, err := replay.GetCase(ctx, s.Device, o.caseName)
		if err != nil {
			return cmdutil.Result{}, err
		}
		return runInit(o, dc.Case)
	})
	return &cli.Command{
		Name:  "verify-init",
		Usage: "draft a requirement from a recorded case: its steps, a checkpoint per assertion (local with --from-case)",
		UsageText: "solopi verify-init (--from-case CASE.json | --case NAME) --output REQUIREMENT.json [--overwrite]\n\n" +
			"Each CLICK, LONG_CLICK, INPUT, BACK, HOME, SLEEP and SCROLL step becomes a stable step, each\n" +
			"ASSERT a checkpoint with a draft acceptance criterion (before the first step: a precondition);\n" +
			"skipped[] lists the steps with no typed action. Reword the criteria, then compile.\n\nExample:\n" +
			"  solopi verify-init --from-case login-ok.json --output login.requirement.json\n" +
			"  solopi verify-compile --file login.requirement.json --output login.plan.json",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "from-case", Destination: &o.fromCase, Usage: "a case file (exported or authoring form)"},
			&cli.StringFlag{Name: "case", Destination: &o.caseName, Usage: "a case stored on the phone, by name"},
			&cli.StringFlag{Name: "output", Destination: &o.output, Usage: "the requirement file to write", Required: true},
			&cli.BoolFlag{Name: "overwrite", Destination: &o.overwrite, Usage: "replace an existing requirement file"},
		},
		// Exactly one of --from-case and --case: the parser checks it
		// (cmdutil's usage rules).
		Action: func(c *cli.Context) error {
			if o.fromCase != "" {
				return local(c)
			}
			return onDevice(c)
		},
	}
}

func runInit(o initOptions, c *casefile.Case) (cmdutil.Result, error) {
	sk, err := verify.SkeletonFromCase(c)
	if err != nil {
		return cmdutil.Result{}, err
	}
	data, err := sk.Marshal()
	if err != nil {
		return cmdutil.Result{}, fault.Wrap(fault.Internal, fault.CodeEncodingFailed, "cannot encode the requirement", err)
	}
	out := artifacts.Output{Mode: artifacts.ModeOf(o.overwrite), MakeParents: true}
	abs, err := out.CheckFile(o.output)
	if err != nil {
		return cmdutil.Result{}, err
	}
	res, err := out.WriteFile(abs, data)
	if err != nil {
		return cmdutil.Result{}, err
	}
	skipped := sk.Skipped
	if skipped == nil {
		skipped = []verify.SkippedStep{}
	}
	return cmdutil.OK(initResult{
		Success: true, Output: res.Path, Steps: sk.Steps, Checkpoints: sk.Checkpoints, Complete: sk.Complete,
		Skipped: skipped, Next: "solopi verify-compile --file " + res.Path + " --output PLAN.json",
	}), nil
}

package replaycmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/solopi/replay"
)

// The local step commands: case-step-list and the step edits (add,
// update, delete, move, copy), which write the edited case to a new file.

type caseStepListOptions struct {
	file  string
	index int
}

func newCmdCaseStepList(e cmdutil.Env) *cli.Command {
	o := &caseStepListOptions{}
	return &cli.Command{
		Name:      "case-step-list",
		Usage:     "list a case file's steps (local; refused steps are shown with authoringAllowed:false)",
		UsageText: "solopi case-step-list --file CASE.json [--index N]",
		Flags:     []cli.Flag{caseFileFlag(&o.file), &cli.IntFlag{Name: "index", Destination: &o.index, Usage: "only this 0-based step"}},
		Action: cmdutil.Local(e, func(_ context.Context, g *cmdutil.Globals) (cmdutil.Result, error) {
			var idx *int
			if g.Changed("index") {
				idx = &o.index
			}
			m, err := replay.CaseStepList(o.file, idx)
			if err != nil {
				return cmdutil.Result{}, err
			}
			return cmdutil.OK(m), nil
		}),
	}
}

// stepEditOptions are the options every step edit shares: the case file,
// the new file and the high-risk confirmation.
type stepEditOptions struct {
	file, output, stepFile string
	overwrite, confirm     bool
	index, to              int
}

// indexFlag binds a required 0-based step index.
func indexFlag(name, usage string, into *int) cli.Flag {
	return &cli.IntFlag{Name: name, Destination: into, Usage: usage, Required: true}
}

// outputFlags bind the edit's --output (created exclusively) and
// --overwrite.
func (o *stepEditOptions) outputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "output", Destination: &o.output, Usage: "write the resulting case to this file (created exclusively)", Required: true},
		&cli.BoolFlag{Name: "overwrite", Destination: &o.overwrite, Usage: "replace an existing --output file (never the source)"},
	}
}

func (o *stepEditOptions) stepFileFlag() cli.Flag {
	return &cli.StringFlag{Name: "step-file", Destination: &o.stepFile, Usage: "one step object", Required: true}
}

// edit is the run function of one step edit: check the output first, edit
// (the casefile package re-normalises the whole case and applies the
// policy to the affected step), write exclusively.
func (o *stepEditOptions) edit(fn func(g *cmdutil.Globals, cs *casefile.Case, opts casefile.EditOptions) (*casefile.EditResult, error)) func(context.Context, *cmdutil.Globals) (cmdutil.Result, error) {
	return func(_ context.Context, g *cmdutil.Globals) (cmdutil.Result, error) {
		return caseStepEdit(o, func(cs *casefile.Case, opts casefile.EditOptions) (*casefile.EditResult, error) {
			return fn(g, cs, opts)
		})
	}
}

func newCmdCaseStepAdd(e cmdutil.Env) *cli.Command {
	o := &stepEditOptions{}
	out := o.outputFlags()
	return &cli.Command{
		Name:      "case-step-add",
		Usage:     "insert a step from a step file (local; appended unless --at)",
		UsageText: "solopi case-step-add --file CASE.json --step-file STEP.json --output NEW.json [--at N] [--overwrite] [--confirm-high-risk]",
		Flags: []cli.Flag{caseFileFlag(&o.file), o.stepFileFlag(), out[0],
			&cli.IntFlag{Name: "at", Destination: &o.index, Usage: "0-based position (default: append)"}, out[1], confirmFlag(&o.confirm)},
		Action: cmdutil.Local(e, o.edit(func(g *cmdutil.Globals, cs *casefile.Case, opts casefile.EditOptions) (*casefile.EditResult, error) {
			st, err := replay.ReadStepFile(o.stepFile)
			if err != nil {
				return nil, err
			}
			// A negative --at is an index like any other: refused.
			if g.Changed("at") {
				return casefile.Insert(cs, o.index, st, opts)
			}
			return casefile.Append(cs, st, opts)
		})),
	}
}

func newCmdCaseStepUpdate(e cmdutil.Env) *cli.Command {
	o := &stepEditOptions{}
	return &cli.Command{
		Name:      "case-step-update",
		Usage:     "replace one step with a step file (local; stepId and operationId are inherited when absent)",
		UsageText: "solopi case-step-update --file CASE.json --index N --step-file STEP.json --output NEW.json [--overwrite] [--confirm-high-risk]",
		Flags: append([]cli.Flag{caseFileFlag(&o.file), indexFlag("index", "0-based step to replace", &o.index), o.stepFileFlag()},
			append(o.outputFlags(), confirmFlag(&o.confirm))...),
		Action: cmdutil.Local(e, o.edit(func(_ *cmdutil.Globals, cs *casefile.Case, opts casefile.EditOptions) (*casefile.EditResult, error) {
			st, err := replay.ReadStepFile(o.stepFile)
			if err != nil {
				return nil, err
			}
			return casefile.Update(cs, o.index, st, opts)
		})),
	}
}

func newCmdCaseStepDelete(e cmdutil.Env) *cli.Command {
	o := &stepEditOptions{}
	return &cli.Command{
		Name:      "case-step-delete",
		Usage:     "delete one step (local; the last step cannot be deleted)",
		UsageText: "solopi case-step-delete --file CASE.json --index N --output NEW.json [--overwrite]",
		Flags:     append([]cli.Flag{caseFileFlag(&o.file), indexFlag("index", "0-based step to delete", &o.index)}, o.outputFlags()...),
		Action: cmdutil.Local(e, o.edit(func(_ *cmdutil.Globals, cs *casefile.Case, _ casefile.EditOptions) (*casefile.EditResult, error) {
			return casefile.Delete(cs, o.index)
		})),
	}
}

func newCmdCaseStepMove(e cmdutil.Env) *cli.Command {
	o := &stepEditOptions{}
	return &cli.Command{
		Name:      "case-step-move",
		Usage:     "move one step (local)",
		UsageText: "solopi case-step-move --file CASE.json --from-index N --to-index M --output NEW.json [--overwrite] [--confirm-high-risk]",
		Flags: append([]cli.Flag{caseFileFlag(&o.file), indexFlag("from-index", "0-based step to move", &o.index), indexFlag("to-index", "0-based target position", &o.to)},
			append(o.outputFlags(), confirmFlag(&o.confirm))...),
		Action: cmdutil.Local(e, o.edit(func(_ *cmdutil.Globals, cs *casefile.Case, opts casefile.EditOptions) (*casefile.EditResult, error) {
			return casefile.Move(cs, o.index, o.to, opts)
		})),
	}
}

func newCmdCaseStepCopy(e cmdutil.Env) *cli.Command {
	o := &stepEditOptions{}
	return &cli.Command{
		Name:      "case-step-copy",
		Usage:     "copy one step to another position (local; the copy gets <stepId>-copy)",
		UsageText: "solopi case-step-copy --file CASE.json --index N --to-index M --output NEW.json [--overwrite] [--confirm-high-risk]",
		Flags: append([]cli.Flag{caseFileFlag(&o.file), indexFlag("index", "0-based step to copy", &o.index), indexFlag("to-index", "0-based target position", &o.to)},
			append(o.outputFlags(), confirmFlag(&o.confirm))...),
		Action: cmdutil.Local(e, o.edit(func(_ *cmdutil.Globals, cs *casefile.Case, opts casefile.EditOptions) (*casefile.EditResult, error) {
			return casefile.Copy(cs, o.index, o.to, opts)
		})),
	}
}

// caseStepEdit is the shared flow of add/update/delete/move/copy
// (replay.CaseStepEdit).
func caseStepEdit(o *stepEditOptions, edit replay.StepEdit) (cmdutil.Result, error) {
	m, err := replay.CaseStepEdit(o.file, o.output, o.overwrite, o.confirm, edit)
	if err != nil {
		return cmdutil.Result{}, err
	}
	return cmdutil.OK(m), nil
}

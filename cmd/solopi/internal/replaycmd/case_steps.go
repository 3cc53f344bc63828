package replaycmd

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/replay"
)

// The local step commands: case-step-list and the step edits (add,
// update, delete, move, copy), which write the edited case to a new file
// (--output) or replace the case file atomically (--in-place). add and
// update take the step from a file (--step-file) or inline (--step).

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
// where the result goes (a new file or the case file itself), the step of
// add and update, and the high-risk confirmation.
type stepEditOptions struct {
	file, output, stepFile, step string
	overwrite, confirm, inPlace  bool
	index, to                    int
}

// indexFlag binds a required 0-based step index.
func indexFlag(name, usage string, into *int) cli.Flag {
	return &cli.IntFlag{Name: name, Destination: into, Usage: usage, Required: true}
}

// outputFlags bind the edit's --output (created exclusively), --overwrite
// and --in-place (the parser requires exactly one of --output and
// --in-place: cmdutil's usage rules).
func (o *stepEditOptions) outputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "output", Destination: &o.output, Usage: "write the resulting case to this file (created exclusively)"},
		&cli.BoolFlag{Name: "overwrite", Destination: &o.overwrite, Usage: "replace an existing --output file (never the source; --in-place always replaces)"},
		&cli.BoolFlag{Name: "in-place", Destination: &o.inPlace, Usage: "replace the --file case atomically with the result (unchanged on any refusal)"},
	}
}

// stepFlags bind the step of add and update: --step-file or --step (the
// parser requires exactly one).
func (o *stepEditOptions) stepFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "step-file", Destination: &o.stepFile, Usage: "file holding one step object"},
		&cli.StringFlag{Name: "step", Destination: &o.step, Usage: "one step object as inline JSON, e.g. '{\"operationMethod\":{\"actionEnum\":\"BACK\"}}'"},
	}
}

// readStep is the step of add and update: the inline --step value or the
// --step-file, parsed and checked alike (casefile.ParseStepFrom). An
// inline step's errors name the flag where a file's name the file.
func (o *stepEditOptions) readStep(g *cmdutil.Globals) (casefile.Step, error) {
	if !g.Changed("step") {
		return replay.ReadStepFile(o.stepFile)
	}
	st, err := casefile.ParseStepFrom([]byte(o.step), "the --step value")
	if err != nil {
		if e := replay.CaseFileError(err); e != nil {
			return casefile.Step{}, e.With("flag", "--step")
		}
		return casefile.Step{}, err
	}
	return st, nil
}

// edit is the run function of one step edit: check the output first, edit
// (the casefile package re-normalises the whole case and applies the
// policy to the affected step), write the new file (created exclusively
// unless --overwrite) or, with --in-place, replace the case file.
func (o *stepEditOptions) edit(fn func(g *cmdutil.Globals, cs *casefile.Case, opts casefile.EditOptions) (*casefile.EditResult, error)) func(context.Context, *cmdutil.Globals) (cmdutil.Result, error) {
	return func(_ context.Context, g *cmdutil.Globals) (cmdutil.Result, error) {
		return caseStepEdit(o, func(cs *casefile.Case, opts casefile.EditOptions) (*casefile.EditResult, error) {
			return fn(g, cs, opts)
		})
	}
}

// editStep is the run function of add and update: after the --output
// rules (checked first, as by every edit), the step (--step or
// --step-file) is read and checked before the case, so that its errors
// name where it came from (the flag or the step file); then the edit runs
// as edit's.
func (o *stepEditOptions) editStep(fn func(g *cmdutil.Globals, cs *casefile.Case, st casefile.Step, opts casefile.EditOptions) (*casefile.EditResult, error)) func(context.Context, *cmdutil.Globals) (cmdutil.Result, error) {
	return func(ctx context.Context, g *cmdutil.Globals) (cmdutil.Result, error) {
		if !o.inPlace {
			if err := replay.CheckCaseOutput(o.output, o.file, o.overwrite); err != nil {
				return cmdutil.Result{}, err
			}
		}
		st, err := o.readStep(g)
		if err != nil {
			return cmdutil.Result{}, err
		}
		return o.edit(func(g *cmdutil.Globals, cs *casefile.Case, opts casefile.EditOptions) (*casefile.EditResult, error) {
			return fn(g, cs, st, opts)
		})(ctx, g)
	}
}

func newCmdCaseStepAdd(e cmdutil.Env) *cli.Command {
	o := &stepEditOptions{}
	out := o.outputFlags()
	return &cli.Command{
		Name:      "case-step-add",
		Usage:     "insert a step given inline or in a step file (local; appended unless --at)",
		UsageText: "solopi case-step-add --file CASE.json (--step-file STEP.json | --step JSON) (--output NEW.json [--overwrite] | --in-place) [--at N] [--confirm-high-risk]",
		Flags: append(append([]cli.Flag{caseFileFlag(&o.file)}, o.stepFlags()...), out[0],
			&cli.IntFlag{Name: "at", Destination: &o.index, Usage: "0-based position (default: append)"}, out[1], out[2], confirmFlag(&o.confirm)),
		Action: cmdutil.Local(e, o.editStep(func(g *cmdutil.Globals, cs *casefile.Case, st casefile.Step, opts casefile.EditOptions) (*casefile.EditResult, error) {
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
		Usage:     "replace one step with a step given inline or in a step file (local; stepId and operationId are inherited when absent)",
		UsageText: "solopi case-step-update --file CASE.json --index N (--step-file STEP.json | --step JSON) (--output NEW.json [--overwrite] | --in-place) [--confirm-high-risk]",
		Flags: append(append([]cli.Flag{caseFileFlag(&o.file), indexFlag("index", "0-based step to replace", &o.index)}, o.stepFlags()...),
			append(o.outputFlags(), confirmFlag(&o.confirm))...),
		Action: cmdutil.Local(e, o.editStep(func(_ *cmdutil.Globals, cs *casefile.Case, st casefile.Step, opts casefile.EditOptions) (*casefile.EditResult, error) {
			return casefile.Update(cs, o.index, st, opts)
		})),
	}
}

func newCmdCaseStepDelete(e cmdutil.Env) *cli.Command {
	o := &stepEditOptions{}
	return &cli.Command{
		Name:      "case-step-delete",
		Usage:     "delete one step (local; the last step cannot be deleted)",
		UsageText: "solopi case-step-delete --file CASE.json --index N (--output NEW.json [--overwrite] | --in-place)",
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
		UsageText: "solopi case-step-move --file CASE.json --from-index N --to-index M (--output NEW.json [--overwrite] | --in-place) [--confirm-high-risk]",
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
		UsageText: "solopi case-step-copy --file CASE.json --index N --to-index M (--output NEW.json [--overwrite] | --in-place) [--confirm-high-risk]",
		Flags: append([]cli.Flag{caseFileFlag(&o.file), indexFlag("index", "0-based step to copy", &o.index), indexFlag("to-index", "0-based target position", &o.to)},
			append(o.outputFlags(), confirmFlag(&o.confirm))...),
		Action: cmdutil.Local(e, o.edit(func(_ *cmdutil.Globals, cs *casefile.Case, opts casefile.EditOptions) (*casefile.EditResult, error) {
			return casefile.Copy(cs, o.index, o.to, opts)
		})),
	}
}

// caseStepEdit is the shared flow of add/update/delete/move/copy
// (replay.CaseStepEdit), in place with --in-place.
func caseStepEdit(o *stepEditOptions, edit replay.StepEdit) (cmdutil.Result, error) {
	if o.inPlace {
		m, err := caseStepEditInPlace(o.file, o.confirm, edit)
		if err != nil {
			return cmdutil.Result{}, err
		}
		return cmdutil.OK(m), nil
	}
	m, err := replay.CaseStepEdit(o.file, o.output, o.overwrite, o.confirm, edit)
	if err != nil {
		return cmdutil.Result{}, err
	}
	return cmdutil.OK(m), nil
}

// caseStepEditInPlace is --in-place: the case file must be a regular file
// the output policy may replace (not a symbolic link, its directory
// writable); the edit runs exactly as with --output (replay.CaseStepEdit:
// same reading, checks, errors and authoring form), into a new file in a
// private temporary directory; that file's content then replaces the case
// file atomically (artifacts, Replace mode: a temporary file beside it,
// renamed over it). Any refusal happens before the rename, so the case
// file is either unchanged or wholly the edited case. Its mode never
// becomes looser: 0600 when the edited case holds secrets or the file was
// 0600.
func caseStepEditInPlace(file string, confirm bool, edit replay.StepEdit) (*replay.StepEditResult, error) {
	replace := artifacts.Output{Mode: artifacts.Replace}
	abs, err := replace.CheckFile(file)
	if err != nil {
		return nil, inPlaceError(err, file)
	}
	src, _ := os.Stat(abs) // a missing file is refused by the edit's own read
	tmp, err := os.MkdirTemp("", "solopi-case-step-*")
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, fault.CodeOutputWriteFailed, "cannot create a temporary directory for the edit", err).With("output", abs)
	}
	defer os.RemoveAll(tmp)
	staged := filepath.Join(tmp, filepath.Base(abs))
	m, err := replay.CaseStepEdit(file, staged, false, confirm, edit)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(staged)
	st, serr := os.Stat(staged)
	if err = errors.Join(err, serr); err != nil {
		return nil, fault.Wrap(fault.Invalid, fault.CodeOutputWriteFailed, "cannot read the edited case back", err).With("output", abs)
	}
	replace.Perm = st.Mode().Perm()
	if src != nil {
		replace.Perm &= src.Mode().Perm()
	}
	if replace.Perm == 0 {
		replace.Perm = 0o600 // 0 is the policy's default (0644): never looser than the file was
	}
	fr, err := replace.WriteFile(abs, data)
	if err != nil {
		return nil, inPlaceError(err, file)
	}
	m.Output, m.InPlace = fr.Path, true
	return m, nil
}

// inPlaceError names the case file of an --in-place refusal as file (the
// output policy names it output) with the cause as reason, as the
// --output rules name theirs.
func inPlaceError(err error, file string) error {
	e := fault.From(err).With("file", file)
	if e.Err != nil {
		e.With("reason", e.Err.Error())
	}
	return e
}

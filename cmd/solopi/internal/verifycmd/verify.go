package verifycmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/verify"
)

// Commands are the requirement → plan → verdict commands:
// verify-normalize, verify-compile and verify-validate need no device;
// verify-run runs a plan on the phone (solopi-ai's flags, JSON and exit
// codes).
func Commands(e cmdutil.Env) []*cli.Command { return commands(e, verifyRunHooks{}) }

// commands are Commands with verify-run's hooks (the binary gives none).
func commands(e cmdutil.Env, h verifyRunHooks) []*cli.Command {
	return []*cli.Command{newCmdInit(e), newCmdNormalize(e), newCmdCompile(e), newCmdValidate(e), newCmdVerifyRun(e, h)}
}

// requirementFlag binds --file, the requirement a command reads.
func requirementFlag(into *string) cli.Flag {
	return &cli.StringFlag{Name: "file", Destination: into, Usage: "requirement JSON (solopi.ai.requirement/v1)", Required: true}
}

func newCmdNormalize(e cmdutil.Env) *cli.Command {
	var file, output string
	return &cli.Command{
		Name:      "verify-normalize",
		Usage:     "check a requirement's shape and print it normalized (local; bindings and flows stay unresolved)",
		UsageText: "solopi verify-normalize --file REQUIREMENT.json [--output FILE]",
		Flags:     []cli.Flag{requirementFlag(&file), &cli.StringFlag{Name: "output", Destination: &output, Usage: "also write the normalized requirement here"}},
		Action: cmdutil.Local(e, func(context.Context, *cmdutil.Globals) (cmdutil.Result, error) {
			return verifyNormalize(file, output)
		}),
	}
}

func newCmdCompile(e cmdutil.Env) *cli.Command {
	var file, output, casesDir string
	return &cli.Command{
		Name:  "verify-compile",
		Usage: "compile a requirement into a fingerprinted verification plan and SoloPi cases (local)",
		UsageText: "solopi verify-compile --file REQUIREMENT.json --output PLAN.json [--cases-dir DIR]\n\n" +
			"warnings[] lists every matches pattern without ^…$: on the phone a compiled ASSERT matches the\n" +
			"whole text, while a dynamic checkpoint is judged on the host by search.\n\nExample:\n  solopi verify-compile --file login.requirement.json --output login.plan.json --cases-dir ./cases",
		Flags: []cli.Flag{requirementFlag(&file),
			&cli.StringFlag{Name: "output", Destination: &output, Usage: "verification plan JSON to write", Required: true},
			&cli.StringFlag{Name: "cases-dir", Destination: &casesDir, Usage: "also write each distinct compiled case to DIR/<caseName>.json"}},
		Action: cmdutil.Local(e, func(context.Context, *cmdutil.Globals) (cmdutil.Result, error) {
			return verifyCompile(file, output, casesDir)
		}),
	}
}

func newCmdValidate(e cmdutil.Env) *cli.Command {
	var plan string
	return &cli.Command{
		Name:      "verify-validate",
		Usage:     "check a verification plan offline: its fingerprint, structure and compiled cases (local)",
		UsageText: "solopi verify-validate --plan PLAN.json",
		Flags:     []cli.Flag{&cli.StringFlag{Name: "plan", Destination: &plan, Usage: "verification plan JSON", Required: true}},
		Action: cmdutil.Local(e, func(context.Context, *cmdutil.Globals) (cmdutil.Result, error) {
			return verifyValidate(plan)
		}),
	}
}

func readRequirement(file string) (*verify.Document, error) {
	b, err := cmdutil.ReadInput(file, "requirement")
	if err != nil {
		return nil, err
	}
	return verify.ParseRequirement(b)
}

// writeOutput publishes a command's output file through the output-path
// policy: whole or not at all, parents created, an existing regular file
// replaced as solopi-ai does, a symbolic link or a directory refused; it
// also refuses to overwrite the input file.
func writeOutput(path, input string, data []byte) (string, error) {
	out := artifacts.Output{Mode: artifacts.Replace, MakeParents: true}
	abs, err := out.CheckFile(path)
	if err != nil {
		return "", err
	}
	if input != "" {
		oi, oerr := os.Stat(abs)
		ii, ierr := os.Stat(input)
		if oerr == nil && ierr == nil && os.SameFile(oi, ii) {
			return "", fault.Usage(fault.CodeInvalidOutputPath, "the output path is the input file").With("output", abs)
		}
	}
	res, err := out.WriteFile(abs, data)
	return res.Path, err
}

func verifyNormalize(file, output string) (cmdutil.Result, error) {
	doc, err := readRequirement(file)
	if err != nil {
		return cmdutil.Result{}, err
	}
	n, err := verify.Normalize(doc)
	if err != nil {
		return cmdutil.Result{}, err
	}
	tree := n.Tree()
	if output != "" {
		data, err := verify.MarshalNormalized(n)
		if err != nil {
			return cmdutil.Result{}, fault.Wrap(fault.Internal, fault.CodeEncodingFailed, "cannot encode the normalized requirement", err)
		}
		if tree["output"], err = writeOutput(output, file, data); err != nil {
			return cmdutil.Result{}, err
		}
	}
	// Printed through canonical JSON so that numbers keep Python's form
	// (1.0, 1e+16) and the output hashes to sourceFingerprint without
	// "output".
	out, err := canonjson.Marshal(tree)
	if err != nil {
		return cmdutil.Result{}, fault.Wrap(fault.Internal, fault.CodeEncodingFailed, "cannot encode the normalized requirement", err)
	}
	return cmdutil.OK(json.RawMessage(out)), nil
}

type verifyCompileResult struct {
	Success         bool             `json:"success"`
	PlanFingerprint string           `json:"planFingerprint"`
	ScenarioCount   int              `json:"scenarioCount"`
	CaseCount       int              `json:"caseCount"`
	Output          string           `json:"output"`
	Cases           []string         `json:"cases"`
	Warnings        []verify.Warning `json:"warnings"`
}

func verifyCompile(file, output, casesDir string) (cmdutil.Result, error) {
	doc, err := readRequirement(file)
	if err != nil {
		return cmdutil.Result{}, err
	}
	plan, err := verify.Compile(doc)
	if err != nil {
		return cmdutil.Result{}, err
	}
	data, err := verify.MarshalPlan(plan)
	if err != nil {
		return cmdutil.Result{}, fault.Wrap(fault.Internal, fault.CodeEncodingFailed, "cannot encode the plan", err)
	}
	res := verifyCompileResult{
		Success: true, PlanFingerprint: plan.Fingerprint, ScenarioCount: len(plan.Scenarios),
		CaseCount: plan.CaseCount(), Cases: []string{}, Warnings: plan.Warnings,
	}
	if res.Warnings == nil {
		res.Warnings = []verify.Warning{}
	}
	if res.Output, err = writeOutput(output, file, data); err != nil {
		return cmdutil.Result{}, err
	}
	if casesDir != "" {
		for _, c := range plan.Cases() {
			data, err := verify.MarshalCase(c)
			if err != nil {
				return cmdutil.Result{}, fault.Wrap(fault.Internal, fault.CodeEncodingFailed, "cannot encode a compiled case", err)
			}
			p, err := writeOutput(filepath.Join(casesDir, c.Name+".json"), file, data)
			if err != nil {
				return cmdutil.Result{}, err
			}
			res.Cases = append(res.Cases, p)
		}
	}
	return cmdutil.OK(res), nil
}

type verifyValidateResult struct {
	Success bool `json:"success"`
	verify.Summary
}

func verifyValidate(planFile string) (cmdutil.Result, error) {
	b, err := cmdutil.ReadInput(planFile, "plan")
	if err != nil {
		return cmdutil.Result{}, err
	}
	_, sum, err := verify.LoadPlan(b)
	if err != nil {
		return cmdutil.Result{}, err
	}
	return cmdutil.OK(verifyValidateResult{Success: true, Summary: *sum}), nil
}

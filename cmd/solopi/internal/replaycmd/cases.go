package replaycmd

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/replay"
)

// Error codes of the local case commands.
const (
	codeCaseFileUnreadable = "case_file_unreadable"
	CodeSchemaViolation    = "case_schema_violation"
	CodeOutputIsSource     = "output_is_source"
	codeStagingCleanup     = "staging_cleanup_failed"
	maxCaseFileBytes       = 16 << 20
)

func caseCommands(exit *int, e cmdutil.Env) []*cli.Command {
	fileFlag := &cli.StringFlag{Name: "file", Usage: "SoloPi case JSON (exported or authoring form)", Required: true}
	outFlag := func(required bool) cli.Flag {
		return &cli.StringFlag{Name: "output", Usage: "write the resulting case to this file (created exclusively)", Required: required}
	}
	overwrite := &cli.BoolFlag{Name: "overwrite", Usage: "replace an existing --output file (never the source)"}
	// case-get, case-template and case-validate write where solopi-ai
	// writes: an existing file is replaced (atomically, never through a
	// symlink); --overwrite is accepted and changes nothing.
	replaceOut := &cli.StringFlag{Name: "output", Usage: "write the case to this file (an existing file is replaced atomically; a symlink is refused)"}
	replaceOverwrite := &cli.BoolFlag{Name: "overwrite", Usage: "accepted for compatibility: an existing --output file is always replaced"}
	confirm := &cli.BoolFlag{Name: "confirm-high-risk", Usage: "accept CLEAR_DATA, KILL_PROCESS and JUMP_TO_PAGE steps"}
	index := func(name, usage string) cli.Flag {
		return &cli.IntFlag{Name: name, Usage: usage, Required: true}
	}
	local := func(fn func(c *cli.Context) (outcome.Result, error)) cli.ActionFunc {
		return cmdutil.Action(exit, e, func(ctx context.Context, g *cmdutil.Globals, c *cli.Context) (outcome.Result, error) { return fn(c) })
	}
	return []*cli.Command{
		{
			Name: "cases", Usage: "list the cases stored in SoloPi", UsageText: "solopi cases",
			Action: cmdutil.DeviceAction(exit, e, func(ctx context.Context, c *cli.Context, d cmdutil.DeviceDeps) (outcome.Result, error) {
				return casesList(ctx, d)
			}),
		},
		{
			Name:  "case-get",
			Usage: "read one case back from SoloPi exactly as a replay will run it (id, fingerprint, inlined steps)",
			UsageText: "solopi case-get --case NAME [--output FILE] [--show-secrets]\n\n" +
				"Parameter values are shown as [redacted] unless --show-secrets: SoloPi encrypts step parameters by\n" +
				"default and its read-back cannot say which ones were encrypted.",
			Flags: []cli.Flag{&cli.StringFlag{Name: "case", Usage: "case name", Required: true}, replaceOut, replaceOverwrite,
				&cli.BoolFlag{Name: "show-secrets", Usage: "print the decrypted parameter values"}},
			Action: cmdutil.DeviceAction(exit, e, func(ctx context.Context, c *cli.Context, d cmdutil.DeviceDeps) (outcome.Result, error) {
				return caseGet(ctx, d, c.String("case"), c.String("output"), c.Bool("show-secrets"))
			}),
		},
		{
			Name:      "case-template",
			Usage:     "write a minimal valid case (one SLEEP step) to start authoring from (local)",
			UsageText: "solopi case-template --name NAME --target-package PKG [--target-label LABEL] [--output FILE]",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "name", Usage: "case name", Required: true},
				&cli.StringFlag{Name: "target-package", Usage: "app under test", Required: true},
				&cli.StringFlag{Name: "target-label", Usage: "app label (default: the package)"},
				replaceOut, replaceOverwrite,
			},
			Action: local(func(c *cli.Context) (outcome.Result, error) {
				return caseTemplate(c.String("name"), c.String("target-package"), c.String("target-label"), c.String("output"))
			}),
		},
		{
			Name:      "case-validate",
			Usage:     "check a case file locally: JSON Schema, normalisation and authoring policy",
			UsageText: "solopi case-validate --file CASE.json [--output FILE] [--confirm-high-risk] [--running-params-file F | --clear-running-params]",
			Flags: []cli.Flag{fileFlag, replaceOut, replaceOverwrite, confirm,
				&cli.StringFlag{Name: "running-params-file", Usage: "set advanceSettings.runningParam from this JSON file"},
				&cli.BoolFlag{Name: "clear-running-params", Usage: "remove advanceSettings.runningParam"}},
			Action: local(func(c *cli.Context) (outcome.Result, error) {
				return caseValidate(caseValidateOptions{file: c.String("file"), output: c.String("output"),
					confirm: c.Bool("confirm-high-risk"), runningParams: c.String("running-params-file"), clearRunning: c.Bool("clear-running-params")})
			}),
		},
		{
			Name:  "case-import",
			Usage: "import a case file into SoloPi (normalised locally, staged under a random name, receipt checked)",
			UsageText: "solopi case-import --file CASE.json [--replace] [--confirm-high-risk] [--import-timeout 15] [--poll-interval 0.2]\n\n" +
				"The staged file is always removed afterwards; the output reports the cleanup.",
			Flags: []cli.Flag{fileFlag, confirm,
				&cli.BoolFlag{Name: "replace", Usage: "replace every case with the same name"},
				&cli.Float64Flag{Name: "import-timeout", Usage: "seconds to wait for the receipt", Value: 15},
				&cli.Float64Flag{Name: "poll-interval", Usage: "longest pause between receipt polls, seconds", Value: 0.2}},
			Action: cmdutil.DeviceAction(exit, e, func(ctx context.Context, c *cli.Context, d cmdutil.DeviceDeps) (outcome.Result, error) {
				timeout, poll, err := replayWait(c, "import-timeout")
				if err != nil {
					return outcome.Result{}, err
				}
				return caseImport(ctx, d, c.String("file"), c.Bool("confirm-high-risk"), replay.ImportOptions{Replace: c.Bool("replace"), Timeout: timeout, PollInterval: poll})
			}),
		},
		{
			Name:      "case-delete",
			Usage:     "delete the newest case with this exact name from SoloPi",
			UsageText: "solopi case-delete --case NAME [--delete-timeout 15] [--poll-interval 0.2]",
			Flags: []cli.Flag{&cli.StringFlag{Name: "case", Usage: "case name (also sent as confirmCaseName)", Required: true},
				&cli.Float64Flag{Name: "delete-timeout", Usage: "seconds to wait for the receipt", Value: 15},
				&cli.Float64Flag{Name: "poll-interval", Usage: "longest pause between receipt polls, seconds", Value: 0.2}},
			Action: cmdutil.DeviceAction(exit, e, func(ctx context.Context, c *cli.Context, d cmdutil.DeviceDeps) (outcome.Result, error) {
				timeout, poll, err := replayWait(c, "delete-timeout")
				if err != nil {
					return outcome.Result{}, err
				}
				return caseDelete(ctx, d, c.String("case"), timeout, poll)
			}),
		},
		{
			Name:      "case-step-list",
			Usage:     "list a case file's steps (local; refused steps are shown with authoringAllowed:false)",
			UsageText: "solopi case-step-list --file CASE.json [--index N]",
			Flags:     []cli.Flag{fileFlag, &cli.IntFlag{Name: "index", Usage: "only this 0-based step"}},
			Action: local(func(c *cli.Context) (outcome.Result, error) {
				idx := -1
				if c.IsSet("index") {
					idx = c.Int("index")
					if idx < 0 {
						return outcome.Result{}, fault.Usage(casefile.CodeStepIndexOutOfRange, "--index must be 0 or more")
					}
				}
				return caseStepList(c.String("file"), idx)
			}),
		},
		{
			Name:      "case-step-add",
			Usage:     "insert a step from a step file (local; appended unless --at)",
			UsageText: "solopi case-step-add --file CASE.json --step-file STEP.json --output NEW.json [--at N] [--overwrite] [--confirm-high-risk]",
			Flags: []cli.Flag{fileFlag, &cli.StringFlag{Name: "step-file", Usage: "one step object", Required: true}, outFlag(true),
				&cli.IntFlag{Name: "at", Usage: "0-based position (default: append)"}, overwrite, confirm},
			Action: local(func(c *cli.Context) (outcome.Result, error) {
				return caseStepEdit(c, func(cs *casefile.Case, opts casefile.EditOptions) (*casefile.EditResult, error) {
					st, err := readStepFile(c.String("step-file"))
					if err != nil {
						return nil, err
					}
					// A negative --at is an index like any other: refused.
					if c.IsSet("at") {
						return casefile.Insert(cs, c.Int("at"), st, opts)
					}
					return casefile.Append(cs, st, opts)
				})
			}),
		},
		{
			Name:      "case-step-update",
			Usage:     "replace one step with a step file (local; stepId and operationId are inherited when absent)",
			UsageText: "solopi case-step-update --file CASE.json --index N --step-file STEP.json --output NEW.json [--overwrite] [--confirm-high-risk]",
			Flags: []cli.Flag{fileFlag, index("index", "0-based step to replace"), &cli.StringFlag{Name: "step-file", Usage: "one step object", Required: true},
				outFlag(true), overwrite, confirm},
			Action: local(func(c *cli.Context) (outcome.Result, error) {
				return caseStepEdit(c, func(cs *casefile.Case, opts casefile.EditOptions) (*casefile.EditResult, error) {
					st, err := readStepFile(c.String("step-file"))
					if err != nil {
						return nil, err
					}
					return casefile.Update(cs, c.Int("index"), st, opts)
				})
			}),
		},
		{
			Name:      "case-step-delete",
			Usage:     "delete one step (local; the last step cannot be deleted)",
			UsageText: "solopi case-step-delete --file CASE.json --index N --output NEW.json [--overwrite]",
			Flags:     []cli.Flag{fileFlag, index("index", "0-based step to delete"), outFlag(true), overwrite},
			Action: local(func(c *cli.Context) (outcome.Result, error) {
				return caseStepEdit(c, func(cs *casefile.Case, _ casefile.EditOptions) (*casefile.EditResult, error) {
					return casefile.Delete(cs, c.Int("index"))
				})
			}),
		},
		{
			Name:      "case-step-move",
			Usage:     "move one step (local)",
			UsageText: "solopi case-step-move --file CASE.json --from-index N --to-index M --output NEW.json [--overwrite] [--confirm-high-risk]",
			Flags:     []cli.Flag{fileFlag, index("from-index", "0-based step to move"), index("to-index", "0-based target position"), outFlag(true), overwrite, confirm},
			Action: local(func(c *cli.Context) (outcome.Result, error) {
				return caseStepEdit(c, func(cs *casefile.Case, opts casefile.EditOptions) (*casefile.EditResult, error) {
					return casefile.Move(cs, c.Int("from-index"), c.Int("to-index"), opts)
				})
			}),
		},
		{
			Name:      "case-step-copy",
			Usage:     "copy one step to another position (local; the copy gets <stepId>-copy)",
			UsageText: "solopi case-step-copy --file CASE.json --index N --to-index M --output NEW.json [--overwrite] [--confirm-high-risk]",
			Flags:     []cli.Flag{fileFlag, index("index", "0-based step to copy"), index("to-index", "0-based target position"), outFlag(true), overwrite, confirm},
			Action: local(func(c *cli.Context) (outcome.Result, error) {
				return caseStepEdit(c, func(cs *casefile.Case, opts casefile.EditOptions) (*casefile.EditResult, error) {
					return casefile.Copy(cs, c.Int("index"), c.Int("to-index"), opts)
				})
			}),
		},
	}
}

func casesList(ctx context.Context, d cmdutil.DeviceDeps) (outcome.Result, error) {
	return cmdutil.WithDevice(ctx, d, func(d *device.Device) (outcome.Result, error) {
		m, err := replay.ListCases(ctx, d)
		if err != nil {
			return outcome.Result{}, err
		}
		return outcome.OK(m), nil
	})
}

func caseGet(ctx context.Context, d cmdutil.DeviceDeps, name, output string, showSecrets bool) (outcome.Result, error) {
	if name == "" {
		return outcome.Result{}, fault.Usage(replay.CodeInvalidRunOption, "--case must not be empty")
	}
	if output != "" {
		// Checked before the device is contacted.
		if err := checkCaseOutput(output, "", true); err != nil {
			return outcome.Result{}, err
		}
	}
	return cmdutil.WithDevice(ctx, d, func(d *device.Device) (outcome.Result, error) {
		dc, err := replay.GetCase(ctx, d, name)
		if err != nil {
			return outcome.Result{}, err
		}
		out := map[string]any{"success": true, "caseName": dc.Name, "caseId": dc.ID, "caseFingerprint": dc.Fingerprint, "stepCount": dc.StepCount()}
		obj, n := dc.Object, 0
		if !showSecrets {
			obj, n = replay.RedactParams(dc.Object)
		}
		out["redactedParams"] = n
		if output == "" {
			out["case"] = obj
			return outcome.OK(out), nil
		}
		b, err := artifacts.MarshalIndent(obj)
		if err != nil {
			return outcome.Result{}, fmt.Errorf("encode case: %w", err)
		}
		return writeCaseResult(out, output, b)
	})
}

// writeCaseResult writes a case-get, case-template or case-validate
// --output file where solopi-ai writes it (replacing an existing file) and
// says where and whether it replaced one.
func writeCaseResult(out map[string]any, output string, data []byte) (outcome.Result, error) {
	fr, err := caseOutput(true).WriteFile(output, data)
	if err != nil {
		return outcome.Result{}, err
	}
	out["output"] = fr.Path
	out["outputReplaced"] = fr.Replaced
	return outcome.OK(out), nil
}

// caseTemplate builds upstream's template: one SLEEP 1000 step.
func caseTemplate(name, pkg, label, output string) (outcome.Result, error) {
	if name == "" {
		return outcome.Result{}, fault.Usage(casefile.CodeMissingCaseName, "--name must not be empty")
	}
	if !protocol.ValidPackageName(pkg) {
		return outcome.Result{}, fault.Usage(casefile.CodeMissingTargetPackage, "--target-package must look like com.example.app")
	}
	if label == "" {
		label = pkg
	}
	if output != "" {
		if err := checkCaseOutput(output, "", true); err != nil {
			return outcome.Result{}, err
		}
	}
	tpl := map[string]any{
		"caseName": name, "caseDesc": "AI 编写的 SoloPi 用例", "targetAppPackage": pkg, "targetAppLabel": label,
		"recordMode": "local", "advanceSettings": "", "priority": casefile.DefaultPriority,
		"operationLog": map[string]any{"steps": []any{map[string]any{
			"operationId": "ai-" + name, "operationIndex": 0, "stepId": "ai-step-001",
			"operationMethod": map[string]any{"actionEnum": "SLEEP", "encrypt": false, "safeEncrypt": false, "operationParam": map[string]any{"text": "1000"}},
		}}},
	}
	raw, err := json.Marshal(tpl)
	if err != nil {
		return outcome.Result{}, fmt.Errorf("encode template: %w", err)
	}
	c, err := casefile.Parse(raw)
	if err != nil {
		return outcome.Result{}, caseFileError(err)
	}
	n, _, err := casefile.Normalize(c, casefile.NormalizeOptions{})
	if err != nil {
		return outcome.Result{}, caseFileError(err)
	}
	b, err := casefile.MarshalAuthoring(n)
	if err != nil {
		return outcome.Result{}, caseFileError(err)
	}
	out := map[string]any{"success": true, "caseName": n.CaseName}
	if output == "" {
		out["case"] = decodeCaseJSON(b)
		return outcome.OK(out), nil
	}
	return writeCaseResult(out, output, b)
}

type caseValidateOptions struct {
	file, output, runningParams string
	confirm, clearRunning       bool
}

func caseValidate(o caseValidateOptions) (outcome.Result, error) {
	if o.runningParams != "" && o.clearRunning {
		return outcome.Result{}, fault.Usage(replay.CodeInvalidRunOption, "--running-params-file and --clear-running-params exclude each other")
	}
	if o.output != "" {
		if err := checkCaseOutput(o.output, o.file, true); err != nil {
			return outcome.Result{}, err
		}
	}
	c, err := readCaseFile(o.file)
	if err != nil {
		return outcome.Result{}, err
	}
	switch {
	case o.runningParams != "":
		rp, err := readLocalInput(o.runningParams, "running params file")
		if err != nil {
			return outcome.Result{}, err
		}
		if c, err = casefile.SetRunningParams(c, rp); err != nil {
			return outcome.Result{}, caseFileError(err)
		}
	case o.clearRunning:
		if c, err = casefile.ClearRunningParams(c); err != nil {
			return outcome.Result{}, caseFileError(err)
		}
	}
	n, hr, err := casefile.Normalize(c, casefile.NormalizeOptions{ConfirmHighRisk: o.confirm})
	if err != nil {
		return outcome.Result{}, caseFileError(err)
	}
	rp, err := casefile.GetRunningParams(n)
	if err != nil {
		return outcome.Result{}, caseFileError(err)
	}
	if hr == nil {
		hr = []casefile.HighRiskStep{}
	}
	out := map[string]any{"success": true, "valid": true, "caseName": n.CaseName, "stepCount": len(n.Steps),
		"highRiskConfirmed": len(hr) > 0, "confirmedHighRiskSteps": hr, "runningParams": rp}
	b, err := casefile.MarshalImportFile(n)
	if err != nil {
		return outcome.Result{}, caseFileError(err)
	}
	if o.output == "" {
		out["case"] = decodeCaseJSON(b)
		return outcome.OK(out), nil
	}
	return writeCaseResult(out, o.output, b)
}

// caseImport normalises and checks the case before any device contact,
// then imports it and reports the receipt and the staging cleanup.
func caseImport(ctx context.Context, d cmdutil.DeviceDeps, file string, confirm bool, o replay.ImportOptions) (outcome.Result, error) {
	store := d.G.Env.SecretsStore()
	c, err := readCaseFile(file)
	if err != nil {
		return outcome.Result{}, err
	}
	n, hr, err := casefile.Normalize(c, casefile.NormalizeOptions{ConfirmHighRisk: confirm})
	if err != nil {
		return outcome.Result{}, caseFileError(err)
	}
	if hr == nil {
		hr = []casefile.HighRiskStep{}
	}
	return cmdutil.WithDevice(ctx, d, func(d *device.Device) (outcome.Result, error) {
		rep, err := replay.ImportCase(ctx, d, n, o)
		if err != nil {
			e := fault.From(err)
			if rep != nil {
				e.With("requestId", rep.RequestID).With("cleanup", rep.Cleanup)
			}
			return outcome.Result{}, e.With("caseName", n.CaseName)
		}
		out := map[string]any{}
		for k, v := range rep.Receipt {
			out[k] = v
		}
		out["requestId"] = rep.RequestID
		out["cleanup"] = rep.Cleanup
		out["confirmedHighRiskSteps"] = hr
		out["redaction"] = recordSecrets(ctx, d, store, n, rep.Receipt)
		if ok, _ := rep.Cleanup["success"].(bool); !ok {
			// The case was imported but its staged copy may still be on
			// the device's shared storage: say so with a failing exit.
			out["success"] = false
			out["errorCode"] = codeStagingCleanup
			out["error"] = "the case was imported but the staged file could not be confirmed removed"
			return outcome.Result{Value: out, Exit: outcome.ExitTransport}, nil
		}
		return outcome.OK(out), nil
	})
}

// recordSecrets leaves the local record of which parameters of the
// imported case are encrypted (positions, never values), for the runs of
// this case on this computer to redact exactly those values. Without it a
// run redacts the input-bearing parameters; a failure is reported, not
// fatal: the import itself succeeded.
func recordSecrets(ctx context.Context, d *device.Device, store replay.SecretsStore, n *casefile.Case, receipt map[string]any) map[string]any {
	refs := casefile.EncryptedParams(n)
	out := map[string]any{"encryptedParams": len(refs)}
	id, _ := device.WireObject(receipt).Integer("caseId")
	p, err := replay.RecordSecrets(ctx, d, store, n, id)
	if err != nil {
		out["recordError"] = err.Error()
		return out
	}
	out["record"] = p
	return out
}

func caseDelete(ctx context.Context, d cmdutil.DeviceDeps, name string, timeout, poll time.Duration) (outcome.Result, error) {
	if name == "" {
		return outcome.Result{}, fault.Usage(replay.CodeInvalidRunOption, "--case must not be empty")
	}
	return cmdutil.WithDevice(ctx, d, func(d *device.Device) (outcome.Result, error) {
		out, reqID, err := replay.DeleteCase(ctx, d, name, timeout, poll)
		if err != nil {
			return outcome.Result{}, fault.From(err).With("requestId", reqID).With("caseName", name)
		}
		return outcome.OK(out), nil
	})
}

func caseStepList(file string, index int) (outcome.Result, error) {
	c, err := readCaseFile(file)
	if err != nil {
		return outcome.Result{}, err
	}
	steps, err := casefile.List(c)
	if err != nil {
		return outcome.Result{}, caseFileError(err)
	}
	total := len(steps)
	if index >= 0 {
		if index >= total {
			return outcome.Result{}, fault.Usagef(casefile.CodeStepIndexOutOfRange, "step index %d is out of range 0..%d", index, total-1)
		}
		steps = steps[index : index+1]
	}
	abs, _ := filepath.Abs(file)
	return outcome.OK(map[string]any{"success": true, "caseName": c.CaseName, "source": abs, "stepCount": total, "steps": steps}), nil
}

// caseStepEdit is the shared flow of add/update/delete/move/copy: check
// the output first, edit (the casefile package re-normalises the whole
// case and applies the policy to the affected step), write exclusively.
func caseStepEdit(c *cli.Context, edit func(cs *casefile.Case, opts casefile.EditOptions) (*casefile.EditResult, error)) (outcome.Result, error) {
	file, output, overwrite := c.String("file"), c.String("output"), c.Bool("overwrite")
	if err := checkCaseOutput(output, file, overwrite); err != nil {
		return outcome.Result{}, err
	}
	cs, err := readCaseFile(file)
	if err != nil {
		return outcome.Result{}, err
	}
	res, err := edit(cs, casefile.EditOptions{ConfirmHighRisk: c.Bool("confirm-high-risk")})
	if err != nil {
		return outcome.Result{}, caseFileError(err)
	}
	b, err := casefile.MarshalAuthoring(res.Case)
	if err != nil {
		return outcome.Result{}, caseFileError(err)
	}
	abs, err := writeCaseOutput(output, b, overwrite)
	if err != nil {
		return outcome.Result{}, err
	}
	src, _ := filepath.Abs(file)
	out := map[string]any{"success": true, "operation": res.Operation, "caseName": res.Case.CaseName, "source": src, "output": abs,
		"stepCount": res.StepCount, "affectedIndex": res.AffectedIndex}
	if res.Operation == "delete" {
		out["removedStepId"] = res.RemovedStepID
	} else {
		out["highRiskConfirmed"] = res.HighRiskConfirmed
		out["step"] = res.Step
	}
	return outcome.OK(out), nil
}

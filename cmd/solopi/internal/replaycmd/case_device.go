package replaycmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/replay"
)

// The case commands that talk to SoloPi: cases, case-get, case-import,
// case-delete.

func newCmdCases(e cmdutil.Env) *cli.Command {
	return &cli.Command{
		Name: "cases", Usage: "list the cases stored in SoloPi", UsageText: "solopi cases",
		Action: cmdutil.OnDevice(e, casesList),
	}
}

func casesList(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
	return cmdutil.WithDevice(ctx, d, func(d *device.Device) (cmdutil.Result, error) {
		m, err := replay.ListCases(ctx, d)
		if err != nil {
			return cmdutil.Result{}, err
		}
		return cmdutil.OK(m), nil
	})
}

type caseGetOptions struct {
	name, output string
	compat       bool
	showSecrets  bool
}

func newCmdCaseGet(e cmdutil.Env) *cli.Command {
	o := &caseGetOptions{}
	return &cli.Command{
		Name:  "case-get",
		Usage: "read one case back from SoloPi exactly as a replay will run it (id, fingerprint, inlined steps)",
		UsageText: "solopi case-get --case NAME [--output FILE] [--show-secrets]\n\n" +
			"Parameter values are shown as [redacted] unless --show-secrets: SoloPi encrypts step parameters by\n" +
			"default and its read-back cannot say which ones were encrypted.",
		Flags: append(append([]cli.Flag{&cli.StringFlag{Name: "case", Destination: &o.name, Usage: "case name", Required: true}},
			replacedOutputFlags(&o.output, &o.compat)...),
			&cli.BoolFlag{Name: "show-secrets", Destination: &o.showSecrets, Usage: "print the decrypted parameter values"}),
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			return caseGet(ctx, d, o)
		}),
	}
}

func caseGet(ctx context.Context, d cmdutil.DeviceDeps, o *caseGetOptions) (cmdutil.Result, error) {
	if o.name == "" {
		return cmdutil.Result{}, fault.Usage(fault.CodeInvalidOption, "--case must not be empty")
	}
	if o.output != "" {
		// Checked before the device is contacted.
		if err := replay.CheckCaseOutput(o.output, "", true); err != nil {
			return cmdutil.Result{}, err
		}
	}
	return cmdutil.WithDevice(ctx, d, func(d *device.Device) (cmdutil.Result, error) {
		dc, err := replay.GetCase(ctx, d, o.name)
		if err != nil {
			return cmdutil.Result{}, err
		}
		exp, err := dc.Export(o.showSecrets)
		if err != nil {
			return cmdutil.Result{}, err
		}
		return emitCase(exp, o.output)
	})
}

type caseImportOptions struct {
	file    string
	confirm bool
	replace bool
	wait    receiptWait
}

func newCmdCaseImport(e cmdutil.Env) *cli.Command {
	o := &caseImportOptions{}
	return &cli.Command{
		Name:  "case-import",
		Usage: "import a case file into SoloPi (normalised locally, staged under a random name, receipt checked)",
		UsageText: "solopi case-import --file CASE.json [--replace] [--confirm-high-risk] [--import-timeout 15] [--poll-interval 0.2]\n\n" +
			"The staged file is always removed afterwards; the output reports the cleanup.",
		Flags: append([]cli.Flag{caseFileFlag(&o.file), confirmFlag(&o.confirm),
			&cli.BoolFlag{Name: "replace", Destination: &o.replace, Usage: "replace every case with the same name"}},
			o.wait.flags("import-timeout", 15, 0.2)...),
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			return caseImport(ctx, d, o)
		}),
	}
}

// caseImport normalises and checks the case before any device contact,
// then imports it and reports the receipt and the staging cleanup.
func caseImport(ctx context.Context, d cmdutil.DeviceDeps, o *caseImportOptions) (cmdutil.Result, error) {
	store := d.G.Env.SecretsStore()
	p, err := replay.PrepareImport(o.file, o.confirm)
	if err != nil {
		return cmdutil.Result{}, err
	}
	n, hr := p.Case, p.HighRisk
	io := replay.ImportOptions{Replace: o.replace, Timeout: o.wait.timeout, PollInterval: o.wait.poll}
	return cmdutil.WithDevice(ctx, d, func(d *device.Device) (cmdutil.Result, error) {
		rep, err := replay.ImportCase(ctx, d, n, io)
		if err != nil {
			e := fault.From(err)
			if rep != nil {
				e.With("requestId", rep.RequestID).With("cleanup", rep.Cleanup)
			}
			return cmdutil.Result{}, e.With("caseName", n.CaseName)
		}
		out := importResult{RequestID: rep.RequestID, Cleanup: rep.Cleanup, ConfirmedHighRiskSteps: hr,
			Redaction: replay.RecordImportSecrets(ctx, d, store, p, rep.Receipt)}
		if !rep.Cleanup.Done() {
			// The case was imported but its staged copy may still be on
			// the device's shared storage: say so with a failing exit.
			failed := false
			out.Success, out.ErrorCode = &failed, fault.CodeStagingCleanupFailed
			out.Error = "the case was imported but the staged file could not be confirmed removed"
			return cmdutil.WithKind(out.over(rep.Receipt), fault.Transport), nil
		}
		return cmdutil.OK(out.over(rep.Receipt)), nil
	})
}

type caseDeleteOptions struct {
	name string
	wait receiptWait
}

func newCmdCaseDelete(e cmdutil.Env) *cli.Command {
	o := &caseDeleteOptions{}
	return &cli.Command{
		Name:      "case-delete",
		Usage:     "delete the newest case with this exact name from SoloPi",
		UsageText: "solopi case-delete --case NAME [--delete-timeout 15] [--poll-interval 0.2]",
		Flags: append([]cli.Flag{&cli.StringFlag{Name: "case", Destination: &o.name, Usage: "case name (also sent as confirmCaseName)", Required: true}},
			o.wait.flags("delete-timeout", 15, 0.2)...),
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			return caseDelete(ctx, d, o)
		}),
	}
}

func caseDelete(ctx context.Context, d cmdutil.DeviceDeps, o *caseDeleteOptions) (cmdutil.Result, error) {
	if o.name == "" {
		return cmdutil.Result{}, fault.Usage(fault.CodeInvalidOption, "--case must not be empty")
	}
	return cmdutil.WithDevice(ctx, d, func(d *device.Device) (cmdutil.Result, error) {
		out, reqID, err := replay.DeleteCase(ctx, d, o.name, o.wait.timeout, o.wait.poll)
		if err != nil {
			return cmdutil.Result{}, fault.From(err).With("requestId", reqID).With("caseName", o.name)
		}
		return cmdutil.OK(out), nil
	})
}

package replaycmd

import (
	"bufio"
	"bytes"
	"context"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/report"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/replay"
)

// batchFlagValues are the options of run-repeat and run-batch.
type batchFlagValues struct {
	runFlagValues
	continueOnFailure bool
	suite             suiteFlagValues
}

// flags bind the shared run flags, --continue-on-failure and more. Each
// command gets its own flag slice: appending to a shared one would let one
// command's flags overwrite the other's.
func (v *batchFlagValues) flags(more ...cli.Flag) []cli.Flag {
	fl := append(v.runFlagValues.flags(false), &cli.BoolFlag{Name: "continue-on-failure", Destination: &v.continueOnFailure, Usage: "run every requested case even after a non-pass"})
	return append(fl, more...)
}

func newCmdRunRepeat(e cmdutil.Env) *cli.Command {
	v := &batchFlagValues{}
	var caseName string
	var times int
	return &cli.Command{
		Name:  "run-repeat",
		Usage: "replay one case N times, one run at a time, and aggregate the verdicts",
		UsageText: "solopi run-repeat --case NAME --times N [--continue-on-failure] [--artifacts ROOT] [--junit FILE]\n\n" +
			"Artifacts go to ROOT/batch-<batchId>/NNN-<case>/. Exit 0 only when every run passed.\n\nExample:\n  solopi run-repeat --case login-smoke --times 20 --continue-on-failure --artifacts ./flaky",
		Flags: v.flags(
			&cli.StringFlag{Name: "case", Destination: &caseName, Usage: "SoloPi case name", Required: true},
			&cli.IntFlag{Name: "times", Destination: &times, Usage: "number of runs (> 0)", Required: true}),
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			if times < 1 || times > 10000 {
				return cmdutil.Result{}, fault.Usage(fault.CodeInvalidOption, "--times must be between 1 and 10000")
			}
			cases := make([]string, times)
			for i := range cases {
				cases[i] = caseName
			}
			return runSequence(ctx, d, v, "solopi.run-repeat", cases)
		}),
	}
}

func newCmdRunBatch(e cmdutil.Env) *cli.Command {
	v := &batchFlagValues{}
	cases := &cli.StringSlice{}
	var casesFile string
	fl := v.flags(
		&cli.StringSliceFlag{Name: "case", Destination: cases, Usage: "SoloPi case name (repeatable, in order)"},
		&cli.StringFlag{Name: "cases-file", Destination: &casesFile, Usage: "file with one case name per line"})
	return &cli.Command{
		Name:  "run-batch",
		Usage: "replay several cases one at a time (regression batch) and aggregate the verdicts",
		UsageText: "solopi run-batch --case A --case B ... | --cases-file FILE [--continue-on-failure] [--artifacts ROOT] [--junit FILE]\n" +
			"solopi run-batch [--case A] [--file F.json]... [--dir CASES] [--devices all|S1,S2] [--shard-all]\n" +
			"                 [--retries N] [--infra-retries 2] [--fail-on-flaky] [--reimport] [--replace]\n" +
			"                 [--history PATH | --no-history] [--artifacts ROOT] [--junit FILE]\n\n" +
			"FILE holds one case name per line (blank lines and lines starting with # are ignored).\n" +
			"Stops at the first non-pass unless --continue-on-failure. Exit 0 only when every run passed.\n\n" +
			"With case files (--file, --dir), --devices, retries or a history the batch is a suite: every case runs\n" +
			"(the longest first) on the next free phone; a case that fails then passes on a retry is flaky; exit 0\n" +
			"when every case passed or was flaky, 2 when one failed (or was flaky with --fail-on-flaky), 4 when one\n" +
			"could not run for infrastructure reasons, 130 interrupted. Evidence: ROOT/batch-<id>/<case>/attempt-<n>/;\n" +
			"the JUnit has one testsuite per phone. A phone another solopi process holds is waited for up to the\n" +
			"global --device-wait.\n\nExamples:\n  solopi run-batch --cases-file smoke.txt --continue-on-failure --artifacts ./out --junit ./out/junit.xml\n" +
			"  solopi report ./out   # regenerate the reports and the index ./out/report.html\n" +
			"  solopi run-batch --dir ./cases --devices all --retries 1 --artifacts ./out --junit ./out/junit.xml",
		Flags: append(fl, v.suite.flags()...),
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			names := append([]string(nil), cases.Value()...)
			if casesFile != "" {
				more, err := readCasesFile(casesFile)
				if err != nil {
					return cmdutil.Result{}, err
				}
				names = append(names, more...)
			}
			if v.suite.wanted(d.G) {
				// A suite runs every case: --continue-on-failure changes
				// nothing there.
				return runSuite(ctx, d, suiteRun{name: "solopi.run-batch", v: &v.runFlagValues, s: &v.suite, names: names})
			}
			return runSequence(ctx, d, v, "solopi.run-batch", names)
		}),
	}
}

// readCasesFile reads one case name per line; names keep inner spaces,
// only the line ending and surrounding blanks are dropped.
func readCasesFile(path string) ([]string, error) {
	b, err := artifacts.Input{What: "--cases-file", Code: "cases_file_unreadable"}.Read(path)
	if err != nil {
		return nil, err
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\ufeff"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fault.Wrap(fault.Invalid, fault.CodeCasesFileUnreadable, "cannot read --cases-file", err).With("path", path)
	}
	return out, nil
}

// runSequence is run-repeat and run-batch: local checks, the batch, the
// JUnit report (one testcase per requested run, not-reached ones skipped).
func runSequence(ctx context.Context, d cmdutil.DeviceDeps, v *batchFlagValues, suite string, cases []string) (cmdutil.Result, error) {
	ro, err := v.options(d.G)
	if err != nil {
		return cmdutil.Result{}, err
	}
	o := replay.BatchOptions{Run: ro, Cases: cases, ContinueOnFailure: v.continueOnFailure}
	if err := replay.ValidateBatch(o); err != nil {
		return cmdutil.Result{}, err
	}
	if v.junit != "" {
		if _, err := artifacts.JUnitOutput(o.Run.Overwrite).CheckFile(v.junit); err != nil {
			return cmdutil.Result{}, err
		}
	}
	return cmdutil.WithDevice(ctx, d, func(d *device.Device) (cmdutil.Result, error) {
		b := replay.RunBatch(ctx, d, o)
		if b.Payload == nil {
			// The batch could not start (its directory): nothing ran.
			return cmdutil.Result{}, b.Err
		}
		out := b.Payload
		res := cmdutil.WithFailure(out, b.Err)
		for _, r := range out.Results {
			// Each sub-run's exit code, as the run command would exit.
			r.ExitCode = outcome.ExitOf(b.Children[r.Index-1].Report.Err)
		}
		for _, ch := range b.Children {
			if ch.Report != nil {
				writeRunReport(ch.Report)
			}
		}
		writeBatchEvidence(b)
		if v.junit != "" {
			abs, err := writeJUnit(v.junit, o.Run.Overwrite, b.JUnitSuite(suite, outcome.ExitOf))
			switch {
			case err == nil:
				out.JUnit = abs
			case res.Exit == outcome.ExitOK:
				// As a run's: a passing batch fails without its report.
				f := junitFailure(err)
				out.JUnitError, out.Success, out.ErrorCode, out.Error = err.Error(), false, f.Code, f.Message
				res = cmdutil.WithKind(out, fault.Invalid)
			default:
				out.JUnitError = err.Error()
			}
		}
		return res, nil
	})
}

// writeBatchEvidence writes the batch's summary, batch.json (the object
// the command prints, sub-runs already redacted), into its artifacts root
// and renders report.html there (the sub-runs' reports are written
// above). Failures are warnings in the result (batchJsonError,
// reportError), never a changed verdict.
func writeBatchEvidence(b *replay.BatchReport) {
	if b.ArtifactsRoot == "" {
		return
	}
	out := b.Payload
	out.BatchJSON, out.BatchJSONError = writeSummary(b.ArtifactsRoot, out)
	if out.BatchJSONError != "" {
		return
	}
	res, err := report.Write(b.ArtifactsRoot, report.Options{})
	if err != nil {
		out.ReportError = err.Error()
		return
	}
	out.Report = res.Path
	out.Index, out.IndexError = writeIndex(filepath.Dir(b.ArtifactsRoot))
}

// writeSummary writes batch.json, the printed object as it is so far, into
// the batch directory: its path, or why it could not be written.
func writeSummary(dir string, v any) (path, problem string) {
	summary, err := artifacts.MarshalIndent(v)
	if err == nil {
		_, err = artifacts.Output{Mode: artifacts.Exclusive, MakeParents: true}.WriteFile(filepath.Join(dir, batchSummaryFile), summary)
	}
	if err != nil {
		return "", err.Error()
	}
	return filepath.Join(dir, batchSummaryFile), ""
}

// batchSummaryFile is the batch summary's name in its artifacts root.
const batchSummaryFile = "batch.json"

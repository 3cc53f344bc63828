package replaycmd

import (
	"bufio"
	"bytes"
	"context"
	"os"
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

func batchCommands(exit *int, e cmdutil.Env) []*cli.Command {
	// Each command gets its own flag slice: appending to a shared one
	// would let one command's flags overwrite the other's.
	seqFlags := func(more ...cli.Flag) []cli.Flag {
		fl := append(runFlags(false), &cli.BoolFlag{Name: "continue-on-failure", Usage: "run every requested case even after a non-pass"})
		return append(fl, more...)
	}
	return []*cli.Command{
		{
			Name:  "run-repeat",
			Usage: "replay one case N times, one run at a time, and aggregate the verdicts",
			UsageText: "solopi run-repeat --case NAME --times N [--continue-on-failure] [--artifacts ROOT] [--junit FILE]\n\n" +
				"Artifacts go to ROOT/batch-<batchId>/NNN-<case>/. Exit 0 only when every run passed.\n\nExample:\n  solopi run-repeat --case login-smoke --times 20 --continue-on-failure --artifacts ./flaky",
			Flags: seqFlags(
				&cli.StringFlag{Name: "case", Usage: "SoloPi case name", Required: true},
				&cli.IntFlag{Name: "times", Usage: "number of runs (> 0)", Required: true}),
			Action: cmdutil.DeviceAction(exit, e, func(ctx context.Context, c *cli.Context, d cmdutil.DeviceDeps) (outcome.Result, error) {
				n := c.Int("times")
				if n < 1 || n > 10000 {
					return outcome.Result{}, fault.Usage(replay.CodeInvalidRunOption, "--times must be between 1 and 10000")
				}
				cases := make([]string, n)
				for i := range cases {
					cases[i] = c.String("case")
				}
				return runSequence(ctx, c, d, "solopi.run-repeat", cases)
			}),
		},
		{
			Name:  "run-batch",
			Usage: "replay several cases one at a time (regression batch) and aggregate the verdicts",
			UsageText: "solopi run-batch --case A --case B ... | --cases-file FILE [--continue-on-failure] [--artifacts ROOT] [--junit FILE]\n\n" +
				"FILE holds one case name per line (blank lines and lines starting with # are ignored).\n" +
				"Stops at the first non-pass unless --continue-on-failure. Exit 0 only when every run passed.\n\nExample:\n  solopi run-batch --cases-file smoke.txt --continue-on-failure --artifacts ./out --junit ./out/junit.xml\n  solopi report ./out   # regenerate the batch report",
			Flags: seqFlags(
				&cli.StringSliceFlag{Name: "case", Usage: "SoloPi case name (repeatable, in order)"},
				&cli.StringFlag{Name: "cases-file", Usage: "file with one case name per line"}),
			Action: cmdutil.DeviceAction(exit, e, func(ctx context.Context, c *cli.Context, d cmdutil.DeviceDeps) (outcome.Result, error) {
				cases := append([]string(nil), c.StringSlice("case")...)
				if f := c.String("cases-file"); f != "" {
					more, err := readCasesFile(f)
					if err != nil {
						return outcome.Result{}, err
					}
					cases = append(cases, more...)
				}
				return runSequence(ctx, c, d, "solopi.run-batch", cases)
			}),
		},
	}
}

// readCasesFile reads one case name per line; names keep inner spaces,
// only the line ending and surrounding blanks are dropped.
func readCasesFile(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, "cases_file_unreadable", "cannot read --cases-file", err).With("path", path)
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
		return nil, fault.Wrap(fault.Invalid, "cases_file_unreadable", "cannot read --cases-file", err).With("path", path)
	}
	return out, nil
}

// runSequence is run-repeat and run-batch: local checks, the batch, the
// JUnit report (one testcase per requested run, not-reached ones skipped).
func runSequence(ctx context.Context, c *cli.Context, d cmdutil.DeviceDeps, suite string, cases []string) (outcome.Result, error) {
	ro, err := runOptionsFrom(c, d.G)
	if err != nil {
		return outcome.Result{}, err
	}
	o := replay.BatchOptions{Run: ro, Cases: cases, ContinueOnFailure: c.Bool("continue-on-failure")}
	return runBatchWith(ctx, d, o, suite, c.String("junit"))
}

func runBatchWith(ctx context.Context, d cmdutil.DeviceDeps, o replay.BatchOptions, suite, junit string) (outcome.Result, error) {
	if err := replay.ValidateBatch(o); err != nil {
		return outcome.Result{}, err
	}
	if junit != "" {
		if _, err := artifacts.JUnitOutput(o.Run.Overwrite).CheckFile(junit); err != nil {
			return outcome.Result{}, err
		}
	}
	return cmdutil.WithDevice(ctx, d, func(d *device.Device) (outcome.Result, error) {
		b := replay.RunBatch(ctx, d, o)
		exit := outcome.ExitOf(b.Err)
		if results, ok := b.Payload["results"].([]map[string]any); ok {
			// Each sub-run's exit code, as the run command would exit.
			for _, r := range results {
				i, _ := r["index"].(int)
				r["exitCode"] = outcome.ExitOf(b.Children[i-1].Report.Err)
			}
		}
		for _, ch := range b.Children {
			if ch.Report != nil {
				writeRunReport(ch.Report)
			}
		}
		writeBatchEvidence(b)
		if junit != "" {
			exit = writeJUnitReport(b.Payload, junit, o.Run.Overwrite, exit, b.JUnitSuite(suite, outcome.ExitOf))
		}
		return outcome.Result{Value: b.Payload, Exit: exit}, nil
	})
}

// writeBatchEvidence writes the batch's summary, batch.json (the object
// the command prints, sub-runs already redacted), into its artifacts root
// and renders report.html there (the sub-runs' reports are written
// above). Failures are warnings in the payload (batchJsonError,
// reportError), never a changed verdict.
func writeBatchEvidence(b *replay.BatchReport) {
	if b.ArtifactsRoot == "" {
		return
	}
	summary, err := artifacts.MarshalIndent(b.Payload)
	if err == nil {
		_, err = artifacts.Output{Mode: artifacts.Exclusive, MakeParents: true}.WriteFile(filepath.Join(b.ArtifactsRoot, batchSummaryFile), summary)
	}
	if err != nil {
		b.Payload["batchJsonError"] = err.Error()
		return
	}
	b.Payload["batchJson"] = filepath.Join(b.ArtifactsRoot, batchSummaryFile)
	res, err := report.Write(b.ArtifactsRoot, report.Options{})
	if err != nil {
		b.Payload["reportError"] = err.Error()
		return
	}
	b.Payload["report"] = res.Path
}

// batchSummaryFile is the batch summary's name in its artifacts root.
const batchSummaryFile = "batch.json"

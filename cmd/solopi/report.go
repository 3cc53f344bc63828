package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/perfstats"
	"github.com/solopi-dev/solopi/report"
)

// reportOptions are the report command's arguments.
type reportOptions struct {
	dir        string
	trajectory string
}

// reportResult is the JSON report prints.
type reportResult struct {
	Success bool        `json:"success"`
	Report  string      `json:"report"`
	Kind    report.Kind `json:"kind"`
}

func reportCommand(exit *int, e Env) *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "write report.html for an evidence directory (run, batch, verify-run, agent-run or perf), older ones included",
		Description: "Local only: reads the evidence files and writes DIR/report.html (one self-contained file, no script,\n" +
			"images linked beside it). A performance directory of CSV files is analysed first (analysis.json and charts/).",
		UsageText: "solopi report DIR [--trajectory FILE]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "trajectory", Usage: "agent-run: the trajectory file inside DIR, when DIR holds several"},
		},
		Action: Action(exit, e, func(ctx context.Context, g *Globals, c *cli.Context) (outcome.Result, error) {
			if c.NArg() != 1 {
				return outcome.Result{}, fault.Usage(report.CodeNotDirectory, "name exactly one evidence directory: solopi report DIR")
			}
			return runReport(ctx, reportOptions{dir: c.Args().First(), trajectory: c.String("trajectory")})
		}),
	}
}

func runReport(ctx context.Context, o reportOptions) (outcome.Result, error) {
	ropts := report.Options{Trajectory: o.trajectory}
	kind, err := report.Detect(o.dir, ropts)
	if err != nil {
		return outcome.Result{}, err
	}
	if kind == report.KindPerf {
		if err := EnsurePerfAnalysis(ctx, o.dir); err != nil {
			return outcome.Result{}, err
		}
	}
	res, err := report.Write(o.dir, ropts)
	if err != nil {
		return outcome.Result{}, err
	}
	return outcome.OK(reportResult{Success: true, Report: res.Path, Kind: res.Kind}), nil
}

// EnsurePerfAnalysis analyses a perf-stop --output directory that has
// only its CSV files: the statistics go to analysis.json, the charts to
// charts/, as perf-analyze would write them.
func EnsurePerfAnalysis(ctx context.Context, dir string) error {
	path := filepath.Join(dir, report.PerfAnalysisFile)
	if _, err := os.Lstat(path); err == nil {
		return nil // already analysed (or not a plain file: Write reports it)
	}
	a, err := perfstats.AnalyzePerformance(ctx, perfstats.PerfAnalyzeOptions{Input: dir, Output: filepath.Join(dir, "charts"), Overwrite: true})
	if err != nil {
		return err
	}
	return SavePerfAnalysis(dir, a)
}

// SavePerfAnalysis writes a into dir as the analysis the report reads.
func SavePerfAnalysis(dir string, a *perfstats.PerfAnalysis) error {
	path := filepath.Join(dir, report.PerfAnalysisFile)
	b, err := artifacts.MarshalIndent(a)
	if err != nil {
		return fault.Wrap(fault.Internal, report.CodeWriteFailed, "cannot encode the performance analysis", err)
	}
	_, err = (artifacts.Output{Mode: artifacts.Exclusive}).WriteFile(path, b)
	return err
}

// EvidenceReport is where a command wrote the report of its evidence
// directory, or why it could not: the evidence stands without it, so a
// failed report does not fail the command.
type EvidenceReport struct {
	Report      string `json:"report,omitempty"`
	ReportError string `json:"reportError,omitempty"`
}

// ReportOf writes dir/report.html unless err (from preparing the
// evidence) already says why not.
func ReportOf(dir string, o report.Options, err error) EvidenceReport {
	if err == nil {
		var res report.Result
		if res, err = report.Write(dir, o); err == nil {
			return EvidenceReport{Report: res.Path}
		}
	}
	return EvidenceReport{ReportError: err.Error()}
}

// AddTo records r in a command's object.
func (r EvidenceReport) AddTo(m map[string]any) {
	if r.Report != "" {
		m["report"] = r.Report
	}
	if r.ReportError != "" {
		m["reportError"] = r.ReportError
	}
}

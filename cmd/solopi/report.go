package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
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

func reportCommand(exit *int, e cmdutil.Env) *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "write report.html for an evidence directory (run, batch, verify-run, agent-run or perf), older ones included",
		Description: "Local only: reads the evidence files and writes DIR/report.html (one self-contained file, no script,\n" +
			"images linked beside it). A performance directory of CSV files is analysed first (analysis.json and charts/).",
		UsageText: "solopi report DIR [--trajectory FILE]\n\nExample:\n  solopi report ./out/login && xdg-open ./out/login/report.html",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "trajectory", Usage: "agent-run: the trajectory file inside DIR, when DIR holds several"},
		},
		Action: cmdutil.Action(exit, e, func(ctx context.Context, g *cmdutil.Globals, c *cli.Context) (outcome.Result, error) {
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
		if err := cmdutil.EnsurePerfAnalysis(ctx, o.dir); err != nil {
			return outcome.Result{}, err
		}
	}
	res, err := report.Write(o.dir, ropts)
	if err != nil {
		return outcome.Result{}, err
	}
	return outcome.OK(reportResult{Success: true, Report: res.Path, Kind: res.Kind}), nil
}

package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/report"
)

// reportOptions are the report command's arguments.
type reportOptions struct {
	trajectory string
}

// reportResult is the JSON report prints.
type reportResult struct {
	Success bool        `json:"success"`
	Report  string      `json:"report"`
	Kind    report.Kind `json:"kind"`
}

func newCmdReport(e cmdutil.Env) *cli.Command {
	o := &reportOptions{}
	return &cli.Command{
		Name:  "report",
		Usage: "write report.html for an evidence directory (run, batch, suite, verify-run, agent-run or perf) or an artifacts root, older ones included",
		Description: "Local only: reads the evidence files and writes DIR/report.html (one self-contained file, no network,\n" +
			"images linked beside it). A performance directory of CSV files is analysed first (analysis.json and charts/).\n" +
			"An artifacts root (run-batch --artifacts ROOT) gets every batch-<id>/report.html rewritten and ROOT/report.html,\n" +
			"the index of its batches, newest first.",
		UsageText: "solopi report DIR [--trajectory FILE]\n\nExample:\n  solopi report ./out/login && xdg-open ./out/login/report.html\n  solopi report ./out   # every batch under ./out and the index ./out/report.html",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "trajectory", Destination: &o.trajectory, Usage: "agent-run: the trajectory file inside DIR, when DIR holds several"},
		},
		Action: cmdutil.Local(e, func(ctx context.Context, g *cmdutil.Globals) (cmdutil.Result, error) {
			dirs := g.Args()
			if len(dirs) != 1 {
				return cmdutil.Result{}, fault.Usage(fault.CodeNotADirectory, "name exactly one evidence directory: solopi report DIR")
			}
			return runReport(ctx, dirs[0], o.trajectory)
		}),
	}
}

func runReport(ctx context.Context, dir, trajectory string) (cmdutil.Result, error) {
	ropts := report.Options{Trajectory: trajectory}
	kind, err := report.Detect(dir, ropts)
	if err != nil {
		return cmdutil.Result{}, err
	}
	if kind == report.KindPerf {
		if err := cmdutil.EnsurePerfAnalysis(ctx, dir); err != nil {
			return cmdutil.Result{}, err
		}
	}
	res, err := report.Write(dir, ropts)
	if err != nil {
		return cmdutil.Result{}, err
	}
	return cmdutil.OK(reportResult{Success: true, Report: res.Path, Kind: res.Kind}), nil
}

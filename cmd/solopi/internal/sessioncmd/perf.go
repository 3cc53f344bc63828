package sessioncmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/perfstats"
	"github.com/solopi-dev/solopi/report"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/sessions"
)

func runPerfList(ctx context.Context, d cmdutil.DeviceDeps, _ struct{}) (outcome.Result, error) {
	return onDeviceMap(ctx, d, func(ctx context.Context, dev *device.Device) (map[string]any, error) {
		m, _, err := sessions.PerfItems(ctx, dev)
		return m, err
	})
}

func runPerfCurrent(ctx context.Context, d cmdutil.DeviceDeps, _ struct{}) (outcome.Result, error) {
	return onDeviceMap(ctx, d, sessions.PerfCurrent)
}

func parsePerfStart(c *cli.Context) (sessions.PerfStartOptions, error) {
	o := sessions.PerfStartOptions{TargetPackage: c.String("target-package"), Global: c.Bool("global"), Items: sessions.ParseItems(c.String("items"))}
	if err := o.Validate(); err != nil {
		return o, err
	}
	var err error
	o.SessionTimings, err = timings(c, "ack-timeout")
	return o, err
}

func parsePerfStop(c *cli.Context) (sessions.PerfStopOptions, error) {
	o := sessions.PerfStopOptions{SessionID: c.String("session-id"), Output: c.String("output"), Overwrite: c.Bool("overwrite")}
	if err := sessions.CheckPerfSessionID(o.SessionID, true); err != nil {
		return o, err
	}
	if _, err := sessions.CheckDirOutput(o.Output, o.Overwrite); err != nil {
		return o, err
	}
	var err error
	o.SessionTimings, err = timings(c, "stop-timeout")
	return o, err
}

// runPerfStop stops the recording; with --output the pulled directory is
// analysed (analysis.json, charts/) and gets its report.html.
func runPerfStop(ctx context.Context, d cmdutil.DeviceDeps, o sessions.PerfStopOptions) (outcome.Result, error) {
	return onDevice(ctx, d, func(ctx context.Context, dev *device.Device) (*sessions.SessionResult, error) {
		res, err := sessions.StopPerformance(ctx, dev, o)
		if err != nil || o.Output == "" {
			return res, err
		}
		err = cmdutil.EnsurePerfAnalysis(ctx, o.Output)
		cmdutil.ReportOf(o.Output, report.Options{}, err).AddTo(res.Object)
		return res, nil
	})
}

func parseDisplayStatus(c *cli.Context) (string, error) {
	id := c.String("session-id")
	return id, sessions.CheckPerfSessionID(id, false)
}

func parseDisplayStop(c *cli.Context) (stopOptions, error) {
	o, err := parseStop("stop-timeout")(c)
	if err != nil {
		return o, err
	}
	return o, sessions.CheckPerfSessionID(o.sessionID, true)
}

func parsePerfAnalyze(c *cli.Context) (perfstats.PerfAnalyzeOptions, error) {
	return perfstats.PerfAnalyzeOptions{Input: c.String("input"), Output: c.String("output"), Overwrite: c.Bool("overwrite")}, nil
}

// perfAnalyzeResult is perf-analyze's object: the analysis and, with
// --output, the report written beside the charts.
type perfAnalyzeResult struct {
	*perfstats.PerfAnalysis
	cmdutil.EvidenceReport
}

// runPerfAnalyze is local: no device is selected or contacted. With
// --output the charts directory becomes an evidence directory of its own:
// the charts, analysis.json and report.html.
func runPerfAnalyze(ctx context.Context, _ cmdutil.DeviceDeps, o perfstats.PerfAnalyzeOptions) (outcome.Result, error) {
	res, err := perfstats.AnalyzePerformance(ctx, o)
	if err != nil {
		return outcome.Result{}, err
	}
	out := perfAnalyzeResult{PerfAnalysis: res}
	if o.Output != "" {
		out.EvidenceReport = cmdutil.ReportOf(o.Output, report.Options{}, cmdutil.SavePerfAnalysis(o.Output, res))
	}
	return outcome.OK(out), nil
}

func perfStartFlags(what string) []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "target-package", Usage: "app to measure (installed on the device)"},
		&cli.BoolFlag{Name: "global", Usage: "measure the whole device instead of one app (sent as targetApp=-)"},
		&cli.StringFlag{Name: "items", Usage: "comma-separated item keys from perf-list, e.g. CPU,Memory,FPS", Required: true},
	}, timingFlags("ack-timeout", 30, 0.5, what)...)
}

func perfCommands(exit *int, e cmdutil.Env) []*cli.Command {
	return []*cli.Command{
		{
			Name:      "perf-list",
			Usage:     "list the performance items the device can collect",
			UsageText: "solopi perf-list",
			Action:    sessionAction(exit, e, noOptions, runPerfList),
		},
		{
			Name:      "perf-current",
			Usage:     "show the current performance values (sampledAt, values by display name)",
			UsageText: "solopi perf-current",
			Action:    sessionAction(exit, e, noOptions, runPerfCurrent),
		},
		{
			Name:  "perf-start",
			Usage: "start collecting performance data under a new session",
			Description: "Exit 0 once `recording`; unsupported items or `failed` are exit 2. On timeout or Ctrl-C the\n" +
				"session this command started is stopped again (124/130 with sessionId, phase and cleanup).",
			UsageText: "solopi perf-start (--target-package PKG | --global) --items CPU,Memory [--ack-timeout 30] [--poll-interval 0.5]",
			Flags:     perfStartFlags("the recording to start"),
			Action:    sessionAction(exit, e, parsePerfStart, sessionCall(sessions.StartPerformance)),
		},
		{
			Name:      "perf-status",
			Usage:     "show the performance recording snapshot",
			UsageText: "solopi perf-status [--session-id ID]",
			Flags:     []cli.Flag{sessionIDFlag(false, "exit 2 unless the device's recording is this session")},
			Action:    sessionAction(exit, e, sessionIDOption, sessionCall(sessions.PerfStatus)),
		},
		{
			Name:  "perf-stop",
			Usage: "stop our performance recording and optionally pull its CSV files",
			Description: "`stopped` means the device saved the data, not that performance was good. Incomplete cleanup\n" +
				"(stopping with stopRetryable) re-sends the stop at most 3 times within --stop-timeout. With --output\n" +
				"only records/performance-<sessionId> is pulled, and it must hold at least one non-empty CSV; it is then\n" +
				"analysed like perf-analyze (analysis.json, charts/) and gets report.html (\"report\" in the JSON).",
			UsageText: "solopi perf-stop --session-id ID [--output DIR [--overwrite]] [--stop-timeout 60] [--poll-interval 0.5]",
			Flags: append([]cli.Flag{
				sessionIDFlag(true, "the sessionId perf-start printed"),
				&cli.StringFlag{Name: "output", Usage: "local directory for the CSV files (must not exist unless --overwrite)"},
				&cli.BoolFlag{Name: "overwrite", Usage: "replace an existing --output directory"},
			}, timingFlags("stop-timeout", 60, 0.5, "the recording to be saved")...),
			Action: sessionAction(exit, e, parsePerfStop, runPerfStop),
		},
		{
			Name:  "perf-display-start",
			Usage: "start a live performance monitor lease",
			Description: "Refused while a performance recording or another monitor owns the metric provider. Exit 0 once\n" +
				"`running` with the requested target and items; timeout or Ctrl-C stop the lease again.",
			UsageText: "solopi perf-display-start (--target-package PKG | --global) --items CPU,Memory [--ack-timeout 30] [--poll-interval 0.5]",
			Flags:     perfStartFlags("the monitor to run"),
			Action:    sessionAction(exit, e, parsePerfStart, sessionCall(sessions.StartPerfDisplay)),
		},
		{
			Name:      "perf-display-status",
			Usage:     "show the live monitor snapshot and its values",
			UsageText: "solopi perf-display-status [--session-id ID]",
			Flags:     []cli.Flag{sessionIDFlag(false, "exit 2 (values withheld) unless the device's monitor is this session")},
			Action:    sessionAction(exit, e, parseDisplayStatus, sessionCall(sessions.PerfDisplayStatus)),
		},
		{
			Name:      "perf-display-stop",
			Usage:     "stop our live monitor lease",
			UsageText: "solopi perf-display-stop --session-id ID [--stop-timeout 60] [--poll-interval 0.5]",
			Flags:     append([]cli.Flag{sessionIDFlag(true, "the sessionId perf-display-start printed")}, timingFlags("stop-timeout", 60, 0.5, "the monitor to stop")...),
			Action:    sessionAction(exit, e, parseDisplayStop, stopCall(sessions.StopPerfDisplay)),
		},
		{
			Name:  "perf-analyze",
			Usage: "describe a pulled performance directory: statistics per metric and an SVG chart each",
			Description: "Local only. Reads every *.csv under --input (UTF-8, UTF-8 with BOM, or GBK whose names stay\n" +
				"undecoded) and reports min, median, p90 (nearest rank), max, mean and FPS/jank figures. With --output\n" +
				"one SVG line chart per metric is written there, with analysis.json and report.html (the statistics table and\n" +
				"the charts). Nothing is judged pass or fail.",
			UsageText: "solopi perf-analyze --input DIR [--output CHARTS_DIR [--overwrite]]",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "input", Usage: "directory pulled by perf-stop --output", Required: true},
				&cli.StringFlag{Name: "output", Usage: "directory for the SVG charts, analysis.json and report.html (must not exist unless --overwrite)"},
				&cli.BoolFlag{Name: "overwrite", Usage: "replace an existing --output directory"},
			},
			Action: sessionAction(exit, e, parsePerfAnalyze, runPerfAnalyze),
		},
	}
}

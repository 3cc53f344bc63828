package sessioncmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/perfstats"
	"github.com/solopi-dev/solopi/report"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/sessions"
)

func newCmdPerfList(e cmdutil.Env) *cli.Command {
	return newCmdQuery(e, "perf-list", "list the performance items the device can collect",
		func(ctx context.Context, dev *device.Device) (map[string]any, error) {
			m, _, err := sessions.PerfItems(ctx, dev)
			return m, err
		})
}

func newCmdPerfCurrent(e cmdutil.Env) *cli.Command {
	return newCmdQuery(e, "perf-current", "show the current performance values (sampledAt, values by display name)", sessions.PerfCurrent)
}

// perfStartValues are the flags of perf-start and perf-display-start.
type perfStartValues struct {
	o     sessions.PerfStartOptions
	items string
}

func (v *perfStartValues) flags(what string) []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "target-package", Destination: &v.o.TargetPackage, Usage: "app to measure (installed on the device)"},
		&cli.BoolFlag{Name: "global", Destination: &v.o.Global, Usage: "measure the whole device instead of one app (sent as targetApp=-)"},
		&cli.StringFlag{Name: "items", Destination: &v.items, Usage: "comma-separated item keys from perf-list, e.g. CPU,Memory,FPS", Required: true},
	}, timingFlags(&v.o.SessionTimings, "ack-timeout", 30, 0.5, what)...)
}

// start checks the options before any device contact and starts.
func (v *perfStartValues) start(fn func(ctx context.Context, dev *device.Device, o sessions.PerfStartOptions) (*sessions.StartResult, error)) func(context.Context, cmdutil.DeviceDeps) (cmdutil.Result, error) {
	return func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
		o := v.o
		o.Items = sessions.ParseItems(v.items)
		if err := o.Validate(); err != nil {
			return cmdutil.Result{}, err
		}
		return cmdutil.DeviceQuery(ctx, d, func(ctx context.Context, dev *device.Device) (*sessions.StartResult, error) { return fn(ctx, dev, o) })
	}
}

func newCmdPerfStart(e cmdutil.Env) *cli.Command {
	v := &perfStartValues{}
	return &cli.Command{
		Name:  "perf-start",
		Usage: "start collecting performance data under a new session",
		Description: "Exit 0 once `recording`; unsupported items or `failed` are exit 2. On timeout or Ctrl-C the\n" +
			"session this command started is stopped again (124/130 with sessionId, phase and cleanup).",
		UsageText: "solopi perf-start (--target-package PKG | --global) --items CPU,Memory [--ack-timeout 30] [--poll-interval 0.5]",
		Flags:     v.flags("the recording to start"),
		Action:    cmdutil.OnDevice(e, v.start(sessions.StartPerformance)),
	}
}

func newCmdPerfStatus(e cmdutil.Env) *cli.Command {
	return newCmdStatus(e, "perf-status", "show the performance recording snapshot", "exit 2 unless the device's recording is this session",
		sessions.CheckSessionID, sessions.PerfStatus)
}

func newCmdPerfStop(e cmdutil.Env) *cli.Command {
	o := &sessions.PerfStopOptions{}
	return &cli.Command{
		Name:  "perf-stop",
		Usage: "stop our performance recording and optionally pull its CSV files",
		Description: "`stopped` means the device saved the data, not that performance was good. Incomplete cleanup\n" +
			"(stopping with stopRetryable) re-sends the stop at most 3 times within --stop-timeout. With --output\n" +
			"only records/performance-<sessionId> is pulled, and it must hold at least one non-empty CSV; it is then\n" +
			"analysed like perf-analyze (analysis.json, charts/) and gets report.html (\"report\" in the JSON).",
		UsageText: "solopi perf-stop --session-id ID [--output DIR [--overwrite]] [--stop-timeout 60] [--poll-interval 0.5]",
		Flags: append([]cli.Flag{
			sessionIDFlag(&o.SessionID, true, "the sessionId perf-start printed"),
			&cli.StringFlag{Name: "output", Destination: &o.Output, Usage: "local directory for the CSV files (must not exist unless --overwrite)"},
			&cli.BoolFlag{Name: "overwrite", Destination: &o.Overwrite, Usage: "replace an existing --output directory"},
		}, timingFlags(&o.SessionTimings, "stop-timeout", 60, 0.5, "the recording to be saved")...),
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			if err := sessions.CheckPerfSessionID(o.SessionID, true); err != nil {
				return cmdutil.Result{}, err
			}
			if _, err := sessions.CheckDirOutput(o.Output, o.Overwrite); err != nil {
				return cmdutil.Result{}, err
			}
			return cmdutil.DeviceQuery(ctx, d, func(ctx context.Context, dev *device.Device) (*perfStopResult, error) {
				return perfStop(ctx, dev, *o)
			})
		}),
	}
}

// perfStop stops the recording; with --output the pulled directory is
// analysed (analysis.json, charts/) and gets its report.html.
func perfStop(ctx context.Context, dev *device.Device, o sessions.PerfStopOptions) (*perfStopResult, error) {
	stop, err := sessions.StopPerformance(ctx, dev, o)
	if err != nil {
		return nil, err
	}
	res := &perfStopResult{PerfStopResult: stop}
	if o.Output != "" {
		res.EvidenceReport = cmdutil.ReportOf(o.Output, report.Options{}, cmdutil.EnsurePerfAnalysis(ctx, o.Output))
	}
	return res, nil
}

// perfStopResult is what perf-stop prints: the stop's object with, after
// --output, the report of the pulled directory beside its keys.
type perfStopResult struct {
	*sessions.PerfStopResult
	cmdutil.EvidenceReport
}

// MarshalJSON lays the stop's fields and the report over the snapshot.
func (r perfStopResult) MarshalJSON() ([]byte, error) {
	// A copy of the stop's type without its MarshalJSON: embedded as it
	// is, that method would be promoted and print the stop alone.
	type stop sessions.PerfStopResult
	return canonjson.Overlay{Base: r.Snapshot, Fields: struct {
		*stop
		cmdutil.EvidenceReport
	}{(*stop)(r.PerfStopResult), r.EvidenceReport}}.MarshalJSON()
}

func newCmdPerfDisplayStart(e cmdutil.Env) *cli.Command {
	v := &perfStartValues{}
	return &cli.Command{
		Name:  "perf-display-start",
		Usage: "start a live performance monitor lease",
		Description: "Refused while a performance recording or another monitor owns the metric provider. Exit 0 once\n" +
			"`running` with the requested target and items; timeout or Ctrl-C stop the lease again.",
		UsageText: "solopi perf-display-start (--target-package PKG | --global) --items CPU,Memory [--ack-timeout 30] [--poll-interval 0.5]",
		Flags:     v.flags("the monitor to run"),
		Action:    cmdutil.OnDevice(e, v.start(sessions.StartPerfDisplay)),
	}
}

func newCmdPerfDisplayStatus(e cmdutil.Env) *cli.Command {
	return newCmdStatus(e, "perf-display-status", "show the live monitor snapshot and its values", "exit 2 (values withheld) unless the device's monitor is this session",
		func(id string) error { return sessions.CheckPerfSessionID(id, false) }, sessions.PerfDisplayStatus)
}

func newCmdPerfDisplayStop(e cmdutil.Env) *cli.Command {
	return stopCommand{
		name: "perf-display-stop", usage: "stop our live monitor lease",
		usageText: "solopi perf-display-stop --session-id ID [--stop-timeout 60] [--poll-interval 0.5]",
		idUsage:   "the sessionId perf-display-start printed", timeoutName: "stop-timeout", timeout: 60, what: "the monitor to stop",
		check: func(id string) error { return sessions.CheckPerfSessionID(id, true) },
		stop:  sessions.StopPerfDisplay,
	}.command(e)
}

func newCmdPerfAnalyze(e cmdutil.Env) *cli.Command {
	o := &perfstats.PerfAnalyzeOptions{}
	return &cli.Command{
		Name:  "perf-analyze",
		Usage: "describe a pulled performance directory: statistics per metric and an SVG chart each",
		Description: "Local only. Reads every *.csv under --input (UTF-8, UTF-8 with BOM, or GBK whose names stay\n" +
			"undecoded) and reports min, median, p90 (nearest rank), max, mean and FPS/jank figures. With --output\n" +
			"one SVG line chart per metric is written there, with analysis.json and report.html (the statistics table and\n" +
			"the charts). Nothing is judged pass or fail.",
		UsageText: "solopi perf-analyze --input DIR [--output CHARTS_DIR [--overwrite]]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "input", Destination: &o.Input, Usage: "directory pulled by perf-stop --output", Required: true},
			&cli.StringFlag{Name: "output", Destination: &o.Output, Usage: "directory for the SVG charts, analysis.json and report.html (must not exist unless --overwrite)"},
			&cli.BoolFlag{Name: "overwrite", Destination: &o.Overwrite, Usage: "replace an existing --output directory"},
		},
		Action: cmdutil.Local(e, func(ctx context.Context, _ *cmdutil.Globals) (cmdutil.Result, error) { return runPerfAnalyze(ctx, *o) }),
	}
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
func runPerfAnalyze(ctx context.Context, o perfstats.PerfAnalyzeOptions) (cmdutil.Result, error) {
	res, err := perfstats.AnalyzePerformance(ctx, o)
	if err != nil {
		return cmdutil.Result{}, err
	}
	out := perfAnalyzeResult{PerfAnalysis: res}
	if o.Output != "" {
		out.EvidenceReport = cmdutil.ReportOf(o.Output, report.Options{}, cmdutil.SavePerfAnalysis(o.Output, res))
	}
	return cmdutil.OK(out), nil
}

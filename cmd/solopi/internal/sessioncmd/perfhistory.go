package sessioncmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/sessions"
)

func newCmdPerfHistoryList(e cmdutil.Env) *cli.Command {
	var limit int
	return &cli.Command{
		Name:      "perf-history-list",
		Usage:     "list saved performance records on the device",
		UsageText: "solopi perf-history-list [--limit 100]",
		Flags:     []cli.Flag{&cli.IntFlag{Name: "limit", Destination: &limit, Usage: "at most this many records, 1..500", Value: 100}},
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			if limit < 1 || limit > 500 {
				return cmdutil.Result{}, fault.Usage(fault.CodeInvalidLimit, "--limit must be between 1 and 500").With("limit", limit)
			}
			return cmdutil.DeviceQuery(ctx, d, func(ctx context.Context, dev *device.Device) (map[string]any, error) {
				return sessions.ListPerfHistory(ctx, dev, limit)
			})
		}),
	}
}

func newCmdPerfHistoryGet(e cmdutil.Env) *cli.Command {
	var id string
	return &cli.Command{
		Name:      "perf-history-get",
		Usage:     "show one saved performance record with file previews",
		UsageText: "solopi perf-history-get --id performance-<64 hex>",
		Flags:     []cli.Flag{&cli.StringFlag{Name: "id", Destination: &id, Usage: "record id from perf-history-list", Required: true}},
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			if err := sessions.CheckPerfHistoryID(id); err != nil {
				return cmdutil.Result{}, err
			}
			return cmdutil.DeviceQuery(ctx, d, func(ctx context.Context, dev *device.Device) (map[string]any, error) {
				return sessions.GetPerfHistory(ctx, dev, id)
			})
		}),
	}
}

func newCmdPerfHistoryDelete(e cmdutil.Env) *cli.Command {
	var id string
	var t sessions.SessionTimings
	return &cli.Command{
		Name:      "perf-history-delete",
		Usage:     "delete one saved performance record (exit 0 only when the device deleted it)",
		UsageText: "solopi perf-history-delete --id performance-<64 hex> [--delete-timeout 30] [--poll-interval 0.2]",
		Flags: append([]cli.Flag{&cli.StringFlag{Name: "id", Destination: &id, Usage: "record id from perf-history-list", Required: true}},
			timingFlags(&t, "delete-timeout", 30, 0.2, "the deletion receipt")...),
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			if err := sessions.CheckPerfHistoryID(id); err != nil {
				return cmdutil.Result{}, err
			}
			return cmdutil.DeviceQuery(ctx, d, func(ctx context.Context, dev *device.Device) (*sessions.PerfHistoryDeleteResult, error) {
				return sessions.DeletePerfHistory(ctx, dev, id, t)
			})
		}),
	}
}

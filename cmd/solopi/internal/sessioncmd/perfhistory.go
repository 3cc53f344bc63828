package sessioncmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/sessions"
)

func runPerfHistoryList(ctx context.Context, d cmdutil.DeviceDeps, limit int) (outcome.Result, error) {
	return onDeviceMap(ctx, d, func(ctx context.Context, dev *device.Device) (map[string]any, error) {
		return sessions.ListPerfHistory(ctx, dev, limit)
	})
}

func runPerfHistoryGet(ctx context.Context, d cmdutil.DeviceDeps, id string) (outcome.Result, error) {
	return onDeviceMap(ctx, d, func(ctx context.Context, dev *device.Device) (map[string]any, error) {
		return sessions.GetPerfHistory(ctx, dev, id)
	})
}

type perfHistoryDeleteOptions struct {
	id string
	t  sessions.SessionTimings
}

func runPerfHistoryDelete(ctx context.Context, d cmdutil.DeviceDeps, o perfHistoryDeleteOptions) (outcome.Result, error) {
	return onDevice(ctx, d, func(ctx context.Context, dev *device.Device) (*sessions.SessionResult, error) {
		return sessions.DeletePerfHistory(ctx, dev, o.id, o.t)
	})
}

func perfHistoryCommands(exit *int, e cmdutil.Env) []*cli.Command {
	return []*cli.Command{
		{
			Name:      "perf-history-list",
			Usage:     "list saved performance records on the device",
			UsageText: "solopi perf-history-list [--limit 100]",
			Flags:     []cli.Flag{&cli.IntFlag{Name: "limit", Usage: "at most this many records, 1..500", Value: 100}},
			Action: sessionAction(exit, e, func(c *cli.Context) (int, error) {
				l := c.Int("limit")
				if l < 1 || l > 500 {
					return l, fault.Usage(sessions.CodeInvalidPerfLimit, "--limit must be between 1 and 500")
				}
				return l, nil
			}, runPerfHistoryList),
		},
		{
			Name:      "perf-history-get",
			Usage:     "show one saved performance record with file previews",
			UsageText: "solopi perf-history-get --id performance-<64 hex>",
			Flags:     []cli.Flag{&cli.StringFlag{Name: "id", Usage: "record id from perf-history-list", Required: true}},
			Action: sessionAction(exit, e, func(c *cli.Context) (string, error) {
				id := c.String("id")
				return id, sessions.CheckPerfHistoryID(id)
			}, runPerfHistoryGet),
		},
		{
			Name:      "perf-history-delete",
			Usage:     "delete one saved performance record (exit 0 only when the device deleted it)",
			UsageText: "solopi perf-history-delete --id performance-<64 hex> [--delete-timeout 30] [--poll-interval 0.2]",
			Flags: append([]cli.Flag{&cli.StringFlag{Name: "id", Usage: "record id from perf-history-list", Required: true}},
				timingFlags("delete-timeout", 30, 0.2, "the deletion receipt")...),
			Action: sessionAction(exit, e, func(c *cli.Context) (perfHistoryDeleteOptions, error) {
				o := perfHistoryDeleteOptions{id: c.String("id")}
				if err := sessions.CheckPerfHistoryID(o.id); err != nil {
					return o, err
				}
				var err error
				o.t, err = timings(c, "delete-timeout")
				return o, err
			}, runPerfHistoryDelete),
		},
	}
}

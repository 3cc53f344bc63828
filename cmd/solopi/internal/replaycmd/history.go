package replaycmd

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/replay"
)

func historyCommands(exit *int, e cmdutil.Env) []*cli.Command {
	return []*cli.Command{
		{
			Name:      "replay-history-list",
			Usage:     "list saved replay records (bounded; the list contract is checked)",
			UsageText: "solopi replay-history-list [--limit 100]",
			Flags:     []cli.Flag{&cli.IntFlag{Name: "limit", Usage: "records to return, 1..500", Value: 100}},
			Action: cmdutil.DeviceAction(exit, e, func(ctx context.Context, c *cli.Context, d cmdutil.DeviceDeps) (outcome.Result, error) {
				return historyList(ctx, d, c.Int("limit"))
			}),
		},
		{
			Name:      "replay-history-get",
			Usage:     "show one saved replay record by its opaque id",
			UsageText: "solopi replay-history-get --id replay-<64 hex>",
			Flags:     []cli.Flag{&cli.StringFlag{Name: "id", Usage: "record id from replay-history-list", Required: true}},
			Action: cmdutil.DeviceAction(exit, e, func(ctx context.Context, c *cli.Context, d cmdutil.DeviceDeps) (outcome.Result, error) {
				return historyGet(ctx, d, c.String("id"))
			}),
		},
		{
			Name:  "replay-history-delete",
			Usage: "delete one saved replay record (confirmId = id) and wait for its receipt",
			UsageText: "solopi replay-history-delete --id replay-<64 hex> [--delete-timeout 30] [--poll-interval 0.2]\n\n" +
				"Exit 0 only when the device confirms the deletion.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "id", Usage: "record id from replay-history-list", Required: true},
				&cli.Float64Flag{Name: "delete-timeout", Usage: "seconds to wait for the receipt", Value: 30},
				&cli.Float64Flag{Name: "poll-interval", Usage: "longest pause between receipt polls, seconds", Value: 0.2},
			},
			Action: cmdutil.DeviceAction(exit, e, func(ctx context.Context, c *cli.Context, d cmdutil.DeviceDeps) (outcome.Result, error) {
				timeout, poll, err := replayWait(c, "delete-timeout")
				if err != nil {
					return outcome.Result{}, err
				}
				return historyDelete(ctx, d, c.String("id"), timeout, poll)
			}),
		},
	}
}

func historyList(ctx context.Context, d cmdutil.DeviceDeps, limit int) (outcome.Result, error) {
	if limit < 1 || limit > 500 {
		return outcome.Result{}, fault.Usage(replay.CodeInvalidHistoryLimit, "--limit must be between 1 and 500")
	}
	return cmdutil.WithDevice(ctx, d, func(d *device.Device) (outcome.Result, error) {
		m, err := replay.ListReplayHistory(ctx, d, limit)
		if err != nil {
			return outcome.Result{}, err
		}
		return outcome.OK(m), nil
	})
}

func historyGet(ctx context.Context, d cmdutil.DeviceDeps, id string) (outcome.Result, error) {
	// The id is checked before any device contact: a path-like id never
	// leaves the host.
	if err := replay.CheckReplayHistoryID(id); err != nil {
		return outcome.Result{}, err
	}
	return cmdutil.WithDevice(ctx, d, func(d *device.Device) (outcome.Result, error) {
		m, err := replay.GetReplayHistory(ctx, d, id)
		if err != nil {
			return outcome.Result{}, err
		}
		return outcome.OK(m), nil
	})
}

func historyDelete(ctx context.Context, d cmdutil.DeviceDeps, id string, timeout, poll time.Duration) (outcome.Result, error) {
	if err := replay.CheckReplayHistoryID(id); err != nil {
		return outcome.Result{}, err
	}
	return cmdutil.WithDevice(ctx, d, func(d *device.Device) (outcome.Result, error) {
		res, err := replay.DeleteReplayHistory(ctx, d, id, timeout, poll)
		if err != nil {
			var e *fault.Error
			if res != nil && asOutcomeError(err, &e) {
				// The requestId lets the user look the receipt up later.
				e.With("requestId", res.RequestID)
			}
			return outcome.Result{}, err
		}
		return outcome.OK(res.Object), nil
	})
}

package replaycmd

import (
	"context"
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/replay"
)

func newCmdHistoryList(e cmdutil.Env) *cli.Command {
	var limit int
	return &cli.Command{
		Name:      "replay-history-list",
		Usage:     "list saved replay records (bounded; the list contract is checked)",
		UsageText: "solopi replay-history-list [--limit 100]",
		Flags:     []cli.Flag{&cli.IntFlag{Name: "limit", Destination: &limit, Usage: "records to return, 1..500", Value: 100}},
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			return historyList(ctx, d, limit)
		}),
	}
}

func historyList(ctx context.Context, d cmdutil.DeviceDeps, limit int) (cmdutil.Result, error) {
	if err := replay.CheckReplayHistoryLimit(limit); err != nil {
		return cmdutil.Result{}, err
	}
	store := d.G.Env.SecretsStore()
	return cmdutil.WithDevice(ctx, d, func(d *device.Device) (cmdutil.Result, error) {
		m, err := replay.ListReplayHistory(ctx, d, limit, store)
		if err != nil {
			return cmdutil.Result{}, err
		}
		// The device's list, echoed with the case secrets hidden; the host
		// adds no field but the marks of content it withholds.
		return cmdutil.OK(m), nil
	})
}

func newCmdHistoryGet(e cmdutil.Env) *cli.Command {
	var id string
	return &cli.Command{
		Name:      "replay-history-get",
		Usage:     "show one saved replay record by its opaque id",
		UsageText: "solopi replay-history-get --id replay-<64 hex>",
		Flags:     []cli.Flag{&cli.StringFlag{Name: "id", Destination: &id, Usage: "record id from replay-history-list", Required: true}},
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			return historyGet(ctx, d, id)
		}),
	}
}

func historyGet(ctx context.Context, d cmdutil.DeviceDeps, id string) (cmdutil.Result, error) {
	// The id is checked before any device contact: a path-like id never
	// leaves the host.
	if err := replay.CheckReplayHistoryID(id); err != nil {
		return cmdutil.Result{}, err
	}
	store := d.G.Env.SecretsStore()
	return cmdutil.WithDevice(ctx, d, func(d *device.Device) (cmdutil.Result, error) {
		m, err := replay.GetReplayHistory(ctx, d, id, store)
		if err != nil {
			return cmdutil.Result{}, err
		}
		// The device's record, echoed as the list's records are.
		return cmdutil.OK(m), nil
	})
}

func newCmdHistoryDelete(e cmdutil.Env) *cli.Command {
	var id string
	w := &receiptWait{}
	return &cli.Command{
		Name:  "replay-history-delete",
		Usage: "delete one saved replay record (confirmId = id) and wait for its receipt",
		UsageText: "solopi replay-history-delete --id replay-<64 hex> [--delete-timeout 30] [--poll-interval 0.2]\n\n" +
			"Exit 0 only when the device confirms the deletion.",
		Flags: append([]cli.Flag{&cli.StringFlag{Name: "id", Destination: &id, Usage: "record id from replay-history-list", Required: true}},
			w.flags("delete-timeout", 30, 0.2)...),
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			return historyDelete(ctx, d, id, w)
		}),
	}
}

func historyDelete(ctx context.Context, d cmdutil.DeviceDeps, id string, w *receiptWait) (cmdutil.Result, error) {
	if err := replay.CheckReplayHistoryID(id); err != nil {
		return cmdutil.Result{}, err
	}
	return cmdutil.WithDevice(ctx, d, func(d *device.Device) (cmdutil.Result, error) {
		res, err := replay.DeleteReplayHistory(ctx, d, id, w.timeout, w.poll)
		if err != nil {
			var e *fault.Error
			if res != nil && errors.As(err, &e) {
				// The requestId lets the user look the receipt up later.
				e.With("requestId", res.RequestID)
			}
			return cmdutil.Result{}, err
		}
		return cmdutil.OK(res), nil
	})
}

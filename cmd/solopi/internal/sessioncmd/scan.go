package sessioncmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/sessions"
)

func runScanStart(ctx context.Context, d cmdutil.DeviceDeps, t sessions.SessionTimings) (outcome.Result, error) {
	return onDevice(ctx, d, func(ctx context.Context, dev *device.Device) (*sessions.SessionResult, error) {
		return sessions.StartScan(ctx, dev, t)
	})
}

func runScanStatus(ctx context.Context, d cmdutil.DeviceDeps, id string) (outcome.Result, error) {
	return onDevice(ctx, d, func(ctx context.Context, dev *device.Device) (*sessions.SessionResult, error) {
		return sessions.ScanStatus(ctx, dev, id)
	})
}

func runScanCancel(ctx context.Context, d cmdutil.DeviceDeps, o stopOptions) (outcome.Result, error) {
	return onDevice(ctx, d, func(ctx context.Context, dev *device.Device) (*sessions.SessionResult, error) {
		return sessions.CancelScan(ctx, dev, o.sessionID, o.t)
	})
}

func scanCommands(exit *int, e cmdutil.Env) []*cli.Command {
	return []*cli.Command{
		{
			Name:  "scan-start",
			Usage: "open a protocol camera scan session (QR and barcodes)",
			Description: "Exit 0 when the scan page waits for the tester (pending-camera-permission or scanning, see\n" +
				"userActionRequired) or already completed; only `completed` carries content. Scanned content is never\n" +
				"executed. On timeout or Ctrl-C the session is cancelled again (124/130).",
			UsageText: "solopi scan-start [--ack-timeout 30] [--poll-interval 0.5]",
			Flags:     timingFlags("ack-timeout", 30, 0.5, "the scan page to open"),
			Action: sessionAction(exit, e, func(c *cli.Context) (sessions.SessionTimings, error) {
				return timings(c, "ack-timeout")
			}, runScanStart),
		},
		{
			Name:      "scan-status",
			Usage:     "show the scan snapshot (exit 2 when failed)",
			UsageText: "solopi scan-status [--session-id ID]",
			Flags:     []cli.Flag{sessionIDFlag(false, "exit 2 unless the device's scan is this session")},
			Action:    sessionAction(exit, e, sessionIDOption, runScanStatus),
		},
		{
			Name:      "scan-cancel",
			Usage:     "cancel our scan session (exit 0 only when it ends cancelled)",
			UsageText: "solopi scan-cancel --session-id ID [--cancel-timeout 15] [--poll-interval 0.5]",
			Flags:     append([]cli.Flag{sessionIDFlag(true, "the sessionId scan-start printed")}, timingFlags("cancel-timeout", 15, 0.5, "the scan to end")...),
			Action:    sessionAction(exit, e, parseStop("cancel-timeout"), runScanCancel),
		},
	}
}

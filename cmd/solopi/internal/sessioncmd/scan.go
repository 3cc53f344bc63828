package sessioncmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/sessions"
)

func newCmdScanStart(e cmdutil.Env) *cli.Command {
	var t sessions.SessionTimings
	return &cli.Command{
		Name:  "scan-start",
		Usage: "open a protocol camera scan session (QR and barcodes)",
		Description: "Exit 0 when the scan page waits for the tester (pending-camera-permission or scanning, see\n" +
			"userActionRequired) or already completed; only `completed` carries content. Scanned content is never\n" +
			"executed. On timeout or Ctrl-C the session is cancelled again (124/130).",
		UsageText: "solopi scan-start [--ack-timeout 30] [--poll-interval 0.5]",
		Flags:     timingFlags(&t, "ack-timeout", 30, 0.5, "the scan page to open"),
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			return cmdutil.DeviceQuery(ctx, d, func(ctx context.Context, dev *device.Device) (*sessions.ScanStartResult, error) {
				return sessions.StartScan(ctx, dev, t)
			})
		}),
	}
}

func newCmdScanStatus(e cmdutil.Env) *cli.Command {
	return newCmdStatus(e, "scan-status", "show the scan snapshot (exit 2 when failed)", "exit 2 unless the device's scan is this session",
		sessions.CheckSessionID, sessions.ScanStatus)
}

func newCmdScanCancel(e cmdutil.Env) *cli.Command {
	return stopCommand{
		name: "scan-cancel", usage: "cancel our scan session (exit 0 only when it ends cancelled)",
		usageText: "solopi scan-cancel --session-id ID [--cancel-timeout 15] [--poll-interval 0.5]",
		idUsage:   "the sessionId scan-start printed", timeoutName: "cancel-timeout", timeout: 15, what: "the scan to end",
		stop: sessions.CancelScan,
	}.command(e)
}

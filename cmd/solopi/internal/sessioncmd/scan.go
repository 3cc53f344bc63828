package sessioncmd

import (
	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/solopi/sessions"
)

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
			}, sessionCall(sessions.StartScan)),
		},
		{
			Name:      "scan-status",
			Usage:     "show the scan snapshot (exit 2 when failed)",
			UsageText: "solopi scan-status [--session-id ID]",
			Flags:     []cli.Flag{sessionIDFlag(false, "exit 2 unless the device's scan is this session")},
			Action:    sessionAction(exit, e, sessionIDOption, sessionCall(sessions.ScanStatus)),
		},
		{
			Name:      "scan-cancel",
			Usage:     "cancel our scan session (exit 0 only when it ends cancelled)",
			UsageText: "solopi scan-cancel --session-id ID [--cancel-timeout 15] [--poll-interval 0.5]",
			Flags:     append([]cli.Flag{sessionIDFlag(true, "the sessionId scan-start printed")}, timingFlags("cancel-timeout", 15, 0.5, "the scan to end")...),
			Action:    sessionAction(exit, e, parseStop("cancel-timeout"), stopCall(sessions.CancelScan)),
		},
	}
}

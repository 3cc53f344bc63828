package sessioncmd

import (
	"context"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/sessions"
)

func newCmdRecordStart(e cmdutil.Env) *cli.Command {
	o := &sessions.RecordStartOptions{}
	return &cli.Command{
		Name:  "record-start",
		Usage: "start an interactive recording of a new case on the device",
		Description: "Exit 0 only when the session reaches `recording` (the tester may now operate the phone);\n" +
			"`failed` is exit 2. On timeout or Ctrl-C the session this command started is stopped (exit 124/130,\n" +
			"with sessionId, phase and cleanup).",
		UsageText: "solopi record-start --name CASE --target-package PKG [--description TEXT] [--ack-timeout 30] [--poll-interval 0.5]",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "name", Destination: &o.CaseName, Usage: "case name", Required: true},
			&cli.StringFlag{Name: "target-package", Destination: &o.TargetPackage, Usage: "app under test (must be installed)", Required: true},
			&cli.StringFlag{Name: "description", Destination: &o.Description, Usage: "case description"},
		}, timingFlags(&o.SessionTimings, "ack-timeout", 30, 0.5, "the recording to start")...),
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			if strings.TrimSpace(o.CaseName) == "" {
				return cmdutil.Result{}, fault.Usage(fault.CodeInvalidOption, "--name must not be blank")
			}
			if strings.TrimSpace(o.TargetPackage) == "" {
				return cmdutil.Result{}, fault.Usage(fault.CodeInvalidOption, "--target-package must not be blank")
			}
			return cmdutil.DeviceQuery(ctx, d, func(ctx context.Context, dev *device.Device) (*sessions.StartResult, error) {
				return sessions.StartRecording(ctx, dev, *o)
			})
		}),
	}
}

func newCmdRecordStatus(e cmdutil.Env) *cli.Command {
	return newCmdStatus(e, "record-status", "show the interactive recording snapshot", "exit 2 unless the device's recording is this session",
		sessions.CheckSessionID, sessions.RecordingStatus)
}

func newCmdRecordStop(e cmdutil.Env) *cli.Command {
	return stopCommand{
		name: "record-stop", usage: "stop our interactive recording and wait until it is saved",
		description: "Exit 0 when the session is `stopped` (with caseId, or cancelledBeforeStart when it never began);\n" +
			"exit 2 when it failed or the device's session is not --session-id.",
		usageText: "solopi record-stop --session-id ID [--stop-timeout 60] [--poll-interval 0.5]",
		idUsage:   "the sessionId record-start printed", timeoutName: "stop-timeout", timeout: 60, what: "the recording to be saved",
		stop: sessions.StopRecording,
	}.command(e)
}

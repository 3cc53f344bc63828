package sessioncmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/sessions"
)

func newCmdScreenRecordStart(e cmdutil.Env) *cli.Command {
	var cfg sessions.ScreenRecordConfig
	var t sessions.SessionTimings
	return &cli.Command{
		Name:  "screen-record-start",
		Usage: "start a standalone MP4 screen recording (MediaProjection) on the device",
		Description: "A person must confirm the Android MediaProjection dialog: pending-user-confirmation is not\n" +
			"success. Exit 0 once `recording`; on timeout or Ctrl-C the session is stopped again (124/130).",
		UsageText: "solopi screen-record-start [--resolution 720x480] [--bitrate-kbps 2500] [--frame-rate 30] [--duration 300] [--ack-timeout 120] [--poll-interval 0.5]",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "resolution", Destination: &cfg.Resolution, Usage: "WIDTHxHEIGHT, even numbers 128..4096", Value: "720x480"},
			&cli.IntFlag{Name: "bitrate-kbps", Destination: &cfg.BitrateKbps, Usage: "video bitrate, 100..50000", Value: 2500},
			&cli.IntFlag{Name: "frame-rate", Destination: &cfg.FrameRate, Usage: "frames per second, 1..120", Value: 30},
			&cli.IntFlag{Name: "duration", Destination: &cfg.DurationSec, Usage: "seconds before the device stops on its own, 1..3600", Value: 300},
		}, timingFlags(&t, "ack-timeout", 120, 0.5, "the recording to start")...),
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			if err := cfg.Validate(); err != nil {
				return cmdutil.Result{}, err
			}
			return cmdutil.DeviceQuery(ctx, d, func(ctx context.Context, dev *device.Device) (*sessions.StartResult, error) {
				return sessions.StartScreenRecording(ctx, dev, cfg, t)
			})
		}),
	}
}

func newCmdScreenRecordStatus(e cmdutil.Env) *cli.Command {
	return newCmdStatus(e, "screen-record-status", "show the screen recording snapshot", "exit 2 unless the device's screen recording is this session",
		sessions.CheckSessionID, sessions.ScreenRecordingStatus)
}

func newCmdScreenRecordStop(e cmdutil.Env) *cli.Command {
	o := &sessions.ScreenStopOptions{}
	return &cli.Command{
		Name:  "screen-record-stop",
		Usage: "stop our screen recording and optionally pull its MP4",
		Description: "With --output, only the MP4 this session published inside capturesRoot is pulled; its size must\n" +
			"equal fileSize and its SHA-256 the device's. A session stopped before it began has no MP4.",
		UsageText: "solopi screen-record-stop --session-id ID [--output FILE.mp4 [--overwrite]] [--stop-timeout 60] [--poll-interval 0.5]",
		Flags: append([]cli.Flag{
			sessionIDFlag(&o.SessionID, true, "the sessionId screen-record-start printed"),
			&cli.StringFlag{Name: "output", Destination: &o.Output, Usage: "local MP4 path (must not exist unless --overwrite)"},
			&cli.BoolFlag{Name: "overwrite", Destination: &o.Overwrite, Usage: "replace an existing --output file"},
		}, timingFlags(&o.SessionTimings, "stop-timeout", 60, 0.5, "the recording to stop")...),
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			if err := sessions.RequireSessionID(o.SessionID); err != nil {
				return cmdutil.Result{}, err
			}
			// The output is refused before the device is contacted.
			if _, err := sessions.CheckScreenOutput(o.Output, o.Overwrite); err != nil {
				return cmdutil.Result{}, err
			}
			return cmdutil.DeviceQuery(ctx, d, func(ctx context.Context, dev *device.Device) (*sessions.ScreenStopResult, error) {
				return sessions.StopScreenRecording(ctx, dev, *o)
			})
		}),
	}
}

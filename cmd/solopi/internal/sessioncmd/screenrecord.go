package sessioncmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/sessions"
)

type screenStartOptions struct {
	cfg sessions.ScreenRecordConfig
	t   sessions.SessionTimings
}

func parseScreenStart(c *cli.Context) (screenStartOptions, error) {
	o := screenStartOptions{cfg: sessions.ScreenRecordConfig{Resolution: c.String("resolution"), BitrateKbps: c.Int("bitrate-kbps"),
		FrameRate: c.Int("frame-rate"), DurationSec: c.Int("duration")}}
	if err := o.cfg.Validate(); err != nil {
		return o, err
	}
	var err error
	o.t, err = timings(c, "ack-timeout")
	return o, err
}

func runScreenStart(ctx context.Context, d cmdutil.DeviceDeps, o screenStartOptions) (outcome.Result, error) {
	return onDevice(ctx, d, func(ctx context.Context, dev *device.Device) (*sessions.SessionResult, error) {
		return sessions.StartScreenRecording(ctx, dev, o.cfg, o.t)
	})
}

func parseScreenStop(c *cli.Context) (sessions.ScreenStopOptions, error) {
	o := sessions.ScreenStopOptions{SessionID: c.String("session-id"), Output: c.String("output"), Overwrite: c.Bool("overwrite")}
	if err := sessions.RequireSessionID(o.SessionID); err != nil {
		return o, err
	}
	// The output is refused before the device is contacted.
	if _, err := sessions.CheckScreenOutput(o.Output, o.Overwrite); err != nil {
		return o, err
	}
	var err error
	o.SessionTimings, err = timings(c, "stop-timeout")
	return o, err
}

func screenRecordCommands(exit *int, e cmdutil.Env) []*cli.Command {
	return []*cli.Command{
		{
			Name:  "screen-record-start",
			Usage: "start a standalone MP4 screen recording (MediaProjection) on the device",
			Description: "A person must confirm the Android MediaProjection dialog: pending-user-confirmation is not\n" +
				"success. Exit 0 once `recording`; on timeout or Ctrl-C the session is stopped again (124/130).",
			UsageText: "solopi screen-record-start [--resolution 720x480] [--bitrate-kbps 2500] [--frame-rate 30] [--duration 300] [--ack-timeout 120] [--poll-interval 0.5]",
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "resolution", Usage: "WIDTHxHEIGHT, even numbers 128..4096", Value: "720x480"},
				&cli.IntFlag{Name: "bitrate-kbps", Usage: "video bitrate, 100..50000", Value: 2500},
				&cli.IntFlag{Name: "frame-rate", Usage: "frames per second, 1..120", Value: 30},
				&cli.IntFlag{Name: "duration", Usage: "seconds before the device stops on its own, 1..3600", Value: 300},
			}, timingFlags("ack-timeout", 120, 0.5, "the recording to start")...),
			Action: sessionAction(exit, e, parseScreenStart, runScreenStart),
		},
		{
			Name:      "screen-record-status",
			Usage:     "show the screen recording snapshot",
			UsageText: "solopi screen-record-status [--session-id ID]",
			Flags:     []cli.Flag{sessionIDFlag(false, "exit 2 unless the device's screen recording is this session")},
			Action:    sessionAction(exit, e, sessionIDOption, sessionCall(sessions.ScreenRecordingStatus)),
		},
		{
			Name:  "screen-record-stop",
			Usage: "stop our screen recording and optionally pull its MP4",
			Description: "With --output, only the MP4 this session published inside capturesRoot is pulled; its size must\n" +
				"equal fileSize and its SHA-256 the device's. A session stopped before it began has no MP4.",
			UsageText: "solopi screen-record-stop --session-id ID [--output FILE.mp4 [--overwrite]] [--stop-timeout 60] [--poll-interval 0.5]",
			Flags: append([]cli.Flag{
				sessionIDFlag(true, "the sessionId screen-record-start printed"),
				&cli.StringFlag{Name: "output", Usage: "local MP4 path (must not exist unless --overwrite)"},
				&cli.BoolFlag{Name: "overwrite", Usage: "replace an existing --output file"},
			}, timingFlags("stop-timeout", 60, 0.5, "the recording to stop")...),
			Action: sessionAction(exit, e, parseScreenStop, sessionCall(sessions.StopScreenRecording)),
		},
	}
}

package sessioncmd

import (
	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/sessions"
)

func parseVideoStart(c *cli.Context) (sessions.VideoAnalysisOptions, error) {
	o := sessions.VideoAnalysisOptions{VideoPath: c.String("video-path"), ActionOffsetMs: c.Int64("action-offset-ms"),
		DifferenceThreshold: c.Float64("difference-threshold"), Wait: c.Bool("wait")}
	if c.Bool("no-wait") {
		if c.IsSet("wait") {
			return o, fault.Usage(sessions.CodeInvalidOption, "give only one of --wait and --no-wait")
		}
		o.Wait = false
	}
	var err error
	if o.AckTimeout, err = cmdutil.Seconds("ack-timeout", c.Float64("ack-timeout")); err != nil {
		return o, err
	}
	if o.AnalysisTimeout, err = cmdutil.Seconds("analysis-timeout", c.Float64("analysis-timeout")); err != nil {
		return o, err
	}
	if o.Interval, err = cmdutil.Seconds("poll-interval", c.Float64("poll-interval")); err != nil {
		return o, err
	}
	return o, o.Validate()
}

func videoCommands(exit *int, e cmdutil.Env) []*cli.Command {
	return []*cli.Command{
		{
			Name:  "video-analysis-start",
			Usage: "measure the visual response time of a device MP4 in SoloPi's ScreenCaptures directory",
			Description: "The video stays on the device (nothing is uploaded). Exit 0 when completed (or analyzing with\n" +
				"--no-wait); a failed analysis or a stored rejection (plugin missing, another analysis running, bad\n" +
				"path) is exit 2. There is no cancel: on timeout the device gives up after 5 minutes.",
			UsageText: "solopi video-analysis-start --video-path /sdcard/solopi/ScreenCaptures/X.mp4 --action-offset-ms MS --difference-threshold F [--no-wait]",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "video-path", Usage: "device MP4 directly inside .../ScreenCaptures/", Required: true},
				&cli.Int64Flag{Name: "action-offset-ms", Usage: "when the action happened in the video, 0..3600000 ms", Required: true},
				&cli.Float64Flag{Name: "difference-threshold", Usage: "frame difference ratio, 0 < F <= 1", Required: true},
				&cli.BoolFlag{Name: "wait", Usage: "wait for the analysis to finish (default)", Value: true},
				&cli.BoolFlag{Name: "no-wait", Usage: "return once the device accepted the request"},
				&cli.Float64Flag{Name: "ack-timeout", Usage: "seconds to wait for the receipt", Value: 15},
				&cli.Float64Flag{Name: "analysis-timeout", Usage: "seconds to wait for the analysis", Value: 120},
				&cli.Float64Flag{Name: "poll-interval", Usage: "seconds between receipt polls", Value: 0.5},
			},
			Action: sessionAction(exit, e, parseVideoStart, sessionCall(sessions.StartVideoAnalysis)),
		},
		{
			Name:      "video-analysis-status",
			Usage:     "show the receipt of one video analysis",
			UsageText: "solopi video-analysis-status --request-id ID",
			Flags:     []cli.Flag{&cli.StringFlag{Name: "request-id", Usage: "the requestId video-analysis-start printed", Required: true}},
			Action: sessionAction(exit, e, func(c *cli.Context) (string, error) {
				id := c.String("request-id")
				return id, sessions.CheckAnalysisRequestID(id)
			}, sessionCall(sessions.VideoAnalysisStatus)),
		},
	}
}

package sessioncmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/sessions"
)

func newCmdVideoAnalysisStart(e cmdutil.Env) *cli.Command {
	o := &sessions.VideoAnalysisOptions{}
	var noWait bool
	return &cli.Command{
		Name:  "video-analysis-start",
		Usage: "measure the visual response time of a device MP4 in SoloPi's ScreenCaptures directory",
		Description: "The video stays on the device (nothing is uploaded). Exit 0 when completed (or analyzing with\n" +
			"--no-wait); a failed analysis or a stored rejection (plugin missing, another analysis running, bad\n" +
			"path) is exit 2. There is no cancel: on timeout the device gives up after 5 minutes.",
		UsageText: "solopi video-analysis-start --video-path /sdcard/solopi/ScreenCaptures/X.mp4 --action-offset-ms MS --difference-threshold F [--no-wait]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "video-path", Destination: &o.VideoPath, Usage: "device MP4 directly inside .../ScreenCaptures/", Required: true},
			&cli.Int64Flag{Name: "action-offset-ms", Destination: &o.ActionOffsetMs, Usage: "when the action happened in the video, 0..3600000 ms", Required: true},
			&cli.Float64Flag{Name: "difference-threshold", Destination: &o.DifferenceThreshold, Usage: "frame difference ratio, 0 < F <= 1", Required: true},
			&cli.BoolFlag{Name: "wait", Destination: &o.Wait, Usage: "wait for the analysis to finish (default)", Value: true},
			&cli.BoolFlag{Name: "no-wait", Destination: &noWait, Usage: "return once the device accepted the request"},
			cmdutil.Seconds("ack-timeout", "seconds to wait for the receipt", 15, &o.AckTimeout),
			cmdutil.Seconds("analysis-timeout", "seconds to wait for the analysis", 120, &o.AnalysisTimeout),
			cmdutil.Seconds("poll-interval", "seconds between receipt polls", 0.5, &o.Interval),
		},
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			if noWait {
				if d.G.Changed("wait") {
					return cmdutil.Result{}, fault.Usage(fault.CodeInvalidOption, "give only one of --wait and --no-wait")
				}
				o.Wait = false
			}
			if err := o.Validate(); err != nil {
				return cmdutil.Result{}, err
			}
			return cmdutil.DeviceQuery(ctx, d, func(ctx context.Context, dev *device.Device) (map[string]any, error) {
				return sessions.StartVideoAnalysis(ctx, dev, *o)
			})
		}),
	}
}

func newCmdVideoAnalysisStatus(e cmdutil.Env) *cli.Command {
	var id string
	return &cli.Command{
		Name:      "video-analysis-status",
		Usage:     "show the receipt of one video analysis",
		UsageText: "solopi video-analysis-status --request-id ID",
		Flags:     []cli.Flag{&cli.StringFlag{Name: "request-id", Destination: &id, Usage: "the requestId video-analysis-start printed", Required: true}},
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			if err := sessions.CheckAnalysisRequestID(id); err != nil {
				return cmdutil.Result{}, err
			}
			return cmdutil.DeviceQuery(ctx, d, func(ctx context.Context, dev *device.Device) (map[string]any, error) {
				return sessions.VideoAnalysisStatus(ctx, dev, id)
			})
		}),
	}
}

package sessioncmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/sessions"
)

func newCmdStressStart(e cmdutil.Env) *cli.Command {
	o := &sessions.StressOptions{}
	return &cli.Command{
		Name:  "stress-start",
		Usage: "put the device under bounded CPU and/or memory load",
		Description: "Exit 0 once `running`; the device stops the load by itself after --duration. Stress is never\n" +
			"left running by this command: on failure, timeout (124) or Ctrl-C (130) it stops its own session.",
		UsageText: "solopi stress-start [--cpu-count N --cpu-percent P] [--memory MB] [--duration 60] [--ack-timeout 30] [--poll-interval 0.5]",
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "cpu-count", Destination: &o.CPUCount, Usage: "busy CPUs, 1..online CPUs (with --cpu-percent)"},
			&cli.IntFlag{Name: "cpu-percent", Destination: &o.CPUPercent, Usage: "load per busy CPU, 1..100 (with --cpu-count)"},
			&cli.IntFlag{Name: "memory", Destination: &o.MemoryMB, Usage: "memory to hold, 1..2048 MB"},
			&cli.IntFlag{Name: "duration", Destination: &o.DurationSec, Usage: "seconds before the device removes the load, 1..3600", Value: 60},
		}, timingFlags(&o.SessionTimings, "ack-timeout", 30, 0.5, "the load to run")...),
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			// Given flags must be positive: 0 would silently mean "not
			// requested".
			for _, f := range []struct {
				name string
				v    int
			}{{"cpu-count", o.CPUCount}, {"cpu-percent", o.CPUPercent}, {"memory", o.MemoryMB}} {
				if d.G.Changed(f.name) && f.v < 1 {
					return cmdutil.Result{}, fault.Usagef(fault.CodeInvalidOption, "--%s must be at least 1", f.name)
				}
			}
			if err := o.Validate(); err != nil {
				return cmdutil.Result{}, err
			}
			return cmdutil.DeviceQuery(ctx, d, func(ctx context.Context, dev *device.Device) (*sessions.StartResult, error) {
				return sessions.StartStress(ctx, dev, *o)
			})
		}),
	}
}

func newCmdStressStatus(e cmdutil.Env) *cli.Command {
	return newCmdStatus(e, "stress-status", "show the stress snapshot", "exit 2 unless the device's stress session is this one",
		sessions.CheckSessionID, sessions.StressStatus)
}

func newCmdStressStop(e cmdutil.Env) *cli.Command {
	return stopCommand{
		name: "stress-stop", usage: "stop our stress session (exit 0 when stopped, also after the device's own auto-stop)",
		usageText: "solopi stress-stop --session-id ID [--stop-timeout 30] [--poll-interval 0.5]",
		idUsage:   "the sessionId stress-start printed", timeoutName: "stop-timeout", timeout: 30, what: "the load to be removed",
		stop: sessions.StopStress,
	}.command(e)
}

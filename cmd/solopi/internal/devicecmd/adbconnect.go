package devicecmd

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/readiness"
)

type adbConnectOptions struct {
	connectTimeout time.Duration
	readyTimeout   time.Duration
	pollInterval   time.Duration
}

func runAdbConnect(ctx context.Context, d cmdutil.DeviceDeps, o adbConnectOptions) (outcome.Result, error) {
	t, err := d.Transport(ctx)
	if err != nil {
		return outcome.Result{}, err
	}
	s, err := device.OpenSession(ctx, t, d.G.SessionOptions(false))
	if err != nil {
		if e := fault.From(err); e.Code == device.CodeNotInstalled {
			// solopi-ai's fields of the same refusal.
			e.With("connected", false).With("requiredUserAction", e.UserAction)
			return outcome.Result{}, e
		}
		return outcome.Result{}, err
	}
	defer s.Close()
	res, err := readiness.AdbConnect(ctx, s, readiness.AdbConnectOptions{
		ConnectTimeout: o.connectTimeout, ReadyTimeout: o.readyTimeout, PollInterval: o.pollInterval,
		Device: d.Device(ctx, t),
	})
	if err != nil {
		return outcome.Result{}, err
	}
	return outcome.OK(res), nil
}

func adbConnectCommand(exit *int, e cmdutil.Env) *cli.Command {
	return &cli.Command{
		Name:  "adb-connect",
		Usage: "open SoloPi's internal ADB connection when it is the only missing setup item, then prove it with doctor",
		Description: "Never answers the RSA dialog, never changes SoloPi's internal ADB address and never runs `adb tcpip`:\n" +
			"if the phone shows an RSA prompt, the tester accepts it. Exit 0 when connected and doctor is ready,\n" +
			"2 when refused or failed (userActionRequired says what to do), 4 on an inconsistent receipt, 124 on timeout.",
		UsageText: "solopi adb-connect [--connect-timeout 20] [--ready-timeout 5] [--poll-interval 0.25]",
		Flags: []cli.Flag{
			&cli.Float64Flag{Name: "connect-timeout", Usage: "seconds to wait for the connection receipt to turn terminal", Value: 20},
			&cli.Float64Flag{Name: "ready-timeout", Usage: "seconds to wait for doctor to become ready after connecting", Value: 5},
			&cli.Float64Flag{Name: "poll-interval", Usage: "seconds between receipt polls", Value: 0.25},
		},
		Action: cmdutil.Action(exit, e, func(ctx context.Context, g *cmdutil.Globals, c *cli.Context) (outcome.Result, error) {
			var o adbConnectOptions
			var err error
			if o.connectTimeout, err = cmdutil.Seconds("connect-timeout", c.Float64("connect-timeout")); err != nil {
				return outcome.Result{}, err
			}
			if o.readyTimeout, err = cmdutil.Seconds("ready-timeout", c.Float64("ready-timeout")); err != nil {
				return outcome.Result{}, err
			}
			if o.pollInterval, err = cmdutil.Seconds("poll-interval", c.Float64("poll-interval")); err != nil {
				return outcome.Result{}, err
			}
			return runAdbConnect(ctx, g.Deps(), o)
		}),
	}
}

package devicecmd

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/readiness"
)

type adbConnectOptions struct {
	connectTimeout time.Duration
	readyTimeout   time.Duration
	pollInterval   time.Duration
}

func newCmdAdbConnect(e cmdutil.Env) *cli.Command {
	o := &adbConnectOptions{}
	return &cli.Command{
		Name:  "adb-connect",
		Usage: "open SoloPi's internal ADB connection when it is the only missing setup item, then prove it with doctor",
		Description: "Never answers the RSA dialog, never changes SoloPi's internal ADB address and never runs `adb tcpip`:\n" +
			"if the phone shows an RSA prompt, the tester accepts it. Exit 0 when connected and doctor is ready,\n" +
			"2 when refused or failed (userActionRequired says what to do), 4 on an inconsistent receipt, 124 on timeout.",
		UsageText: "solopi adb-connect [--connect-timeout 20] [--ready-timeout 5] [--poll-interval 0.25]",
		Flags: []cli.Flag{
			cmdutil.Seconds("connect-timeout", "seconds to wait for the connection receipt to turn terminal", 20, &o.connectTimeout),
			cmdutil.Seconds("ready-timeout", "seconds to wait for doctor to become ready after connecting", 5, &o.readyTimeout),
			cmdutil.Seconds("poll-interval", "seconds between receipt polls", 0.25, &o.pollInterval),
		},
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			return runAdbConnect(ctx, d, o)
		}),
	}
}

func runAdbConnect(ctx context.Context, d cmdutil.DeviceDeps, o *adbConnectOptions) (cmdutil.Result, error) {
	t, err := d.Transport(ctx)
	if err != nil {
		return cmdutil.Result{}, err
	}
	s, err := device.OpenSession(ctx, t, d.SessionOptions(false))
	if err != nil {
		if e := fault.From(err); e.Code == fault.CodeSolopiNotInstalled {
			// solopi-ai's fields of the same refusal.
			e.With("connected", false).With("requiredUserAction", e.UserAction)
			return cmdutil.Result{}, e
		}
		return cmdutil.Result{}, err
	}
	defer s.Close()
	res, err := readiness.AdbConnect(ctx, s, readiness.AdbConnectOptions{
		ConnectTimeout: o.connectTimeout, ReadyTimeout: o.readyTimeout, PollInterval: o.pollInterval,
		Device: device.Describe(ctx, t),
	})
	if err != nil {
		return cmdutil.Result{}, err
	}
	return cmdutil.OK(res), nil
}

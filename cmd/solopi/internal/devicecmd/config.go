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

func newCmdConfigList(e cmdutil.Env) *cli.Command {
	return &cli.Command{
		Name:      "config-list",
		Usage:     "list SoloPi's 25 settings (sensitive values are never shown)",
		UsageText: "solopi config-list",
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			return cmdutil.SessionQuery(ctx, d, readiness.ConfigList)
		}),
	}
}

func newCmdConfigGet(e cmdutil.Env) *cli.Command {
	var key string
	return &cli.Command{
		Name:      "config-get",
		Usage:     "read one SoloPi setting (KEY_AES_KEY and KEY_GLOBAL_SETTINGS are always redacted)",
		UsageText: "solopi config-get --key KEY_REPLAY_AUTO_START",
		Flags:     []cli.Flag{&cli.StringFlag{Name: "key", Destination: &key, Usage: "setting key, e.g. KEY_MAX_WAIT_TIME", Required: true}},
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			return runConfigGet(ctx, d, key)
		}),
	}
}

func runConfigGet(ctx context.Context, d cmdutil.DeviceDeps, key string) (cmdutil.Result, error) {
	// An unknown key is refused before the device is touched.
	if err := readiness.CheckConfigKey(key); err != nil {
		return cmdutil.Result{}, err
	}
	return cmdutil.SessionQuery(ctx, d, func(ctx context.Context, s *device.Session) (any, error) {
		return readiness.ConfigGet(ctx, s, key)
	})
}

type configSetOptions struct {
	key, value   string
	ackTimeout   time.Duration
	pollInterval time.Duration
}

func newCmdConfigSet(e cmdutil.Env) *cli.Command {
	o := &configSetOptions{}
	return &cli.Command{
		Name:  "config-set",
		Usage: "change one of the 17 writable SoloPi settings and confirm it by reading it back",
		Description: "The 8 writable=false settings (upload addresses, plugin source, internal ADB address, global\n" +
			"parameters, encryption key, data directory, control port) are refused without contacting the device:\n" +
			"change them in the SoloPi app. Exit 0 only when the device reads back the new value.",
		UsageText: "solopi config-set --key KEY --value VALUE [--ack-timeout 15] [--poll-interval 0.2]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "key", Destination: &o.key, Usage: "setting key", Required: true},
			&cli.StringFlag{Name: "value", Destination: &o.value, Usage: "new value (true/false, a decimal integer, or text)", Required: true},
			cmdutil.Seconds("ack-timeout", "seconds to wait for the device to confirm the value", 15, &o.ackTimeout),
			cmdutil.Seconds("poll-interval", "seconds between read-backs", 0.2, &o.pollInterval),
		},
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			return runConfigSet(ctx, d, o)
		}),
	}
}

func runConfigSet(ctx context.Context, d cmdutil.DeviceDeps, o *configSetOptions) (cmdutil.Result, error) {
	// Read-only keys and bad values are refused locally, before any
	// mutation; a refusal solopi-ai makes from the device's config object
	// reads that object (a query) to print it.
	if _, _, err := readiness.CheckConfigSet(o.key, o.value); err != nil {
		if !readiness.NeedsDeviceConfig(err) {
			return cmdutil.Result{}, err
		}
		_, derr := cmdutil.WithSession(ctx, d, func(s *device.Session) (cmdutil.Result, error) {
			return cmdutil.Result{}, readiness.DeviceConfigRefusal(ctx, s, err)
		})
		if fault.IsInterrupt(derr) {
			return cmdutil.Result{}, derr
		}
		if fault.CodeOf(derr) != fault.CodeOf(err) {
			// No device to read the object from: the refusal stands with
			// the key's description from our table.
			return cmdutil.Result{}, err
		}
		return cmdutil.Result{}, derr
	}
	return cmdutil.WithSession(ctx, d, func(s *device.Session) (cmdutil.Result, error) {
		res, err := readiness.ConfigSet(ctx, s, o.key, o.value, readiness.ConfigSetOptions{AckTimeout: o.ackTimeout, PollInterval: o.pollInterval})
		if err != nil {
			return cmdutil.Result{}, err
		}
		return cmdutil.OK(res), nil
	})
}

package devicecmd

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/readiness"
)

func runConfigList(ctx context.Context, d cmdutil.DeviceDeps) (outcome.Result, error) {
	return sessionQuery(ctx, d, readiness.ConfigList)
}

func runConfigGet(ctx context.Context, d cmdutil.DeviceDeps, key string) (outcome.Result, error) {
	// An unknown key is refused before the device is touched.
	if err := readiness.CheckConfigKey(key); err != nil {
		return outcome.Result{}, err
	}
	return sessionQuery(ctx, d, func(ctx context.Context, s *device.Session) (map[string]any, error) {
		return readiness.ConfigGet(ctx, s, key)
	})
}

type configSetOptions struct {
	key, value   string
	ackTimeout   time.Duration
	pollInterval time.Duration
}

func runConfigSet(ctx context.Context, d cmdutil.DeviceDeps, o configSetOptions) (outcome.Result, error) {
	// Read-only keys and bad values are refused locally, before any device
	// contact (no adb, no session, no launch).
	if _, _, err := readiness.CheckConfigSet(o.key, o.value); err != nil {
		return outcome.Result{}, err
	}
	return cmdutil.WithSession(ctx, d, func(s *device.Session) (outcome.Result, error) {
		res, err := readiness.ConfigSet(ctx, s, o.key, o.value, readiness.ConfigSetOptions{AckTimeout: o.ackTimeout, PollInterval: o.pollInterval})
		if err != nil {
			return outcome.Result{}, err
		}
		return outcome.OK(res), nil
	})
}

func configCommands(exit *int, e cmdutil.Env) []*cli.Command {
	return []*cli.Command{
		{
			Name:      "config-list",
			Usage:     "list SoloPi's 25 settings (sensitive values are never shown)",
			UsageText: "solopi config-list",
			Action: cmdutil.Action(exit, e, func(ctx context.Context, g *cmdutil.Globals, c *cli.Context) (outcome.Result, error) {
				return runConfigList(ctx, g.Deps())
			}),
		},
		{
			Name:      "config-get",
			Usage:     "read one SoloPi setting (KEY_AES_KEY and KEY_GLOBAL_SETTINGS are always redacted)",
			UsageText: "solopi config-get --key KEY_REPLAY_AUTO_START",
			Flags:     []cli.Flag{&cli.StringFlag{Name: "key", Usage: "setting key, e.g. KEY_MAX_WAIT_TIME", Required: true}},
			Action: cmdutil.Action(exit, e, func(ctx context.Context, g *cmdutil.Globals, c *cli.Context) (outcome.Result, error) {
				return runConfigGet(ctx, g.Deps(), c.String("key"))
			}),
		},
		{
			Name:  "config-set",
			Usage: "change one of the 17 writable SoloPi settings and confirm it by reading it back",
			Description: "The 8 writable=false settings (upload addresses, plugin source, internal ADB address, global\n" +
				"parameters, encryption key, data directory, control port) are refused without contacting the device:\n" +
				"change them in the SoloPi app. Exit 0 only when the device reads back the new value.",
			UsageText: "solopi config-set --key KEY --value VALUE [--ack-timeout 15] [--poll-interval 0.2]",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "key", Usage: "setting key", Required: true},
				&cli.StringFlag{Name: "value", Usage: "new value (true/false, a decimal integer, or text)", Required: true},
				&cli.Float64Flag{Name: "ack-timeout", Usage: "seconds to wait for the device to confirm the value", Value: 15},
				&cli.Float64Flag{Name: "poll-interval", Usage: "seconds between read-backs", Value: 0.2},
			},
			Action: cmdutil.Action(exit, e, func(ctx context.Context, g *cmdutil.Globals, c *cli.Context) (outcome.Result, error) {
				o := configSetOptions{key: c.String("key"), value: c.String("value")}
				var err error
				if o.ackTimeout, err = cmdutil.Seconds("ack-timeout", c.Float64("ack-timeout")); err != nil {
					return outcome.Result{}, err
				}
				if o.pollInterval, err = cmdutil.Seconds("poll-interval", c.Float64("poll-interval")); err != nil {
					return outcome.Result{}, err
				}
				return runConfigSet(ctx, g.Deps(), o)
			}),
		},
	}
}

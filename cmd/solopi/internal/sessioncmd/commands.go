package sessioncmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/sessions"
)

// Commands are SoloPi's other session types and their data:
// record-*, screen-record-*, scan-*, video-analysis-*, perf-* (collection,
// live display, history, local analysis), stress-*, plugin-*.
func Commands(exit *int, e cmdutil.Env) []*cli.Command {
	var cmds []*cli.Command
	cmds = append(cmds, recordCommands(exit, e)...)
	cmds = append(cmds, screenRecordCommands(exit, e)...)
	cmds = append(cmds, scanCommands(exit, e)...)
	cmds = append(cmds, videoCommands(exit, e)...)
	cmds = append(cmds, perfCommands(exit, e)...)
	cmds = append(cmds, perfHistoryCommands(exit, e)...)
	cmds = append(cmds, stressCommands(exit, e)...)
	cmds = append(cmds, pluginCommands(exit, e)...)
	return cmds
}

// onDevice opens the SoloPi session (installed, control service ready),
// runs fn on its device channel and releases the session.
func onDevice(ctx context.Context, d cmdutil.DeviceDeps, fn func(ctx context.Context, dev *device.Device) (*sessions.SessionResult, error)) (outcome.Result, error) {
	return cmdutil.WithDevice(ctx, d, func(dev *device.Device) (outcome.Result, error) {
		res, err := fn(ctx, dev)
		if err != nil {
			return outcome.Result{}, err
		}
		return outcome.OK(res.Object), nil
	})
}

// onDeviceMap is onDevice for queries that return a plain object.
func onDeviceMap(ctx context.Context, d cmdutil.DeviceDeps, fn func(ctx context.Context, dev *device.Device) (map[string]any, error)) (outcome.Result, error) {
	return onDevice(ctx, d, func(ctx context.Context, dev *device.Device) (*sessions.SessionResult, error) {
		m, err := fn(ctx, dev)
		if err != nil {
			return nil, err
		}
		return &sessions.SessionResult{Object: m}, nil
	})
}

// timingFlags are a command's wait budget and poll interval flags.
func timingFlags(timeoutName string, timeout, poll float64, what string) []cli.Flag {
	return []cli.Flag{
		&cli.Float64Flag{Name: timeoutName, Usage: "seconds to wait for " + what, Value: timeout},
		&cli.Float64Flag{Name: "poll-interval", Usage: "seconds between status polls", Value: poll},
	}
}

// timings reads the flags of timingFlags.
func timings(c *cli.Context, timeoutName string) (sessions.SessionTimings, error) {
	var t sessions.SessionTimings
	var err error
	if t.Timeout, err = cmdutil.Seconds(timeoutName, c.Float64(timeoutName)); err != nil {
		return t, err
	}
	if t.Interval, err = cmdutil.Seconds("poll-interval", c.Float64("poll-interval")); err != nil {
		return t, err
	}
	return t, nil
}

func sessionIDFlag(required bool, usage string) cli.Flag {
	return &cli.StringFlag{Name: "session-id", Usage: usage, Required: required}
}

// sessionAction wires a command: parse flags into opts (no device
// contact), then run with the command's device.
func sessionAction[O any](exit *int, e cmdutil.Env, parse func(c *cli.Context) (O, error),
	run func(ctx context.Context, d cmdutil.DeviceDeps, o O) (outcome.Result, error)) cli.ActionFunc {
	return cmdutil.Action(exit, e, func(ctx context.Context, g *cmdutil.Globals, c *cli.Context) (outcome.Result, error) {
		o, err := parse(c)
		if err != nil {
			return outcome.Result{}, err
		}
		return run(ctx, g.Deps(), o)
	})
}

// noOptions parses nothing.
func noOptions(*cli.Context) (struct{}, error) { return struct{}{}, nil }

// sessionIDOption reads an optional --session-id, checked locally.
func sessionIDOption(c *cli.Context) (string, error) {
	id := c.String("session-id")
	return id, sessions.CheckSessionID(id)
}

// stopOptions are --session-id plus a timing pair.
type stopOptions struct {
	sessionID string
	t         sessions.SessionTimings
}

func parseStop(timeoutName string) func(c *cli.Context) (stopOptions, error) {
	return func(c *cli.Context) (stopOptions, error) {
		o := stopOptions{sessionID: c.String("session-id")}
		if err := sessions.RequireSessionID(o.sessionID); err != nil {
			return o, err
		}
		var err error
		o.t, err = timings(c, timeoutName)
		return o, err
	}
}

// sessionCall is the run function of a command that is one library call on
// the device with the parsed options.
func sessionCall[O any](fn func(ctx context.Context, dev *device.Device, o O) (*sessions.SessionResult, error)) func(ctx context.Context, d cmdutil.DeviceDeps, o O) (outcome.Result, error) {
	return func(ctx context.Context, d cmdutil.DeviceDeps, o O) (outcome.Result, error) {
		return onDevice(ctx, d, func(ctx context.Context, dev *device.Device) (*sessions.SessionResult, error) {
			return fn(ctx, dev, o)
		})
	}
}

// stopCall is sessionCall for a stop command: our session id and the wait.
func stopCall(fn func(ctx context.Context, dev *device.Device, id string, t sessions.SessionTimings) (*sessions.SessionResult, error)) func(ctx context.Context, d cmdutil.DeviceDeps, o stopOptions) (outcome.Result, error) {
	return sessionCall(func(ctx context.Context, dev *device.Device, o stopOptions) (*sessions.SessionResult, error) {
		return fn(ctx, dev, o.sessionID, o.t)
	})
}

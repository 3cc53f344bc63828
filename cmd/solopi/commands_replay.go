package main

import (
	"context"
	"errors"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/solopi/device"
)

// replayCommands are cases, replay runs, artifacts, batches and replay
// history: cases, case-*, run, run-repeat, run-batch, status, result,
// cancel, replay-history-*.
func replayCommands(exit *int, e env) []*cli.Command {
	var cmds []*cli.Command
	cmds = append(cmds, caseCommands(exit, e)...)
	cmds = append(cmds, runCommands(exit, e)...)
	cmds = append(cmds, batchCommands(exit, e)...)
	cmds = append(cmds, historyCommands(exit, e)...)
	return cmds
}

// replayOpener opens the device channel a command uses and returns a release
// function. Commands take it as a parameter so that their run functions
// can be tested against a scripted transport without a terminal or adb.
type replayOpener func(ctx context.Context) (*device.Device, func(), error)

// replaySessionOpener opens the command's device session (SoloPi checked,
// control service ready) without preserving the foreground: replay and
// case commands bring SoloPi forward on purpose.
func replaySessionOpener(ctx context.Context, g *globals) replayOpener {
	return func(ctx context.Context) (*device.Device, func(), error) {
		s, err := g.session(ctx, false)
		if err != nil {
			return nil, nil, err
		}
		return s.Device, s.Close, nil
	}
}

// replayDeviceAction adapts a device command: the run function gets the opener.
func replayDeviceAction(exit *int, e env, fn func(ctx context.Context, g *globals, c *cli.Context, open replayOpener) (outcome.Result, error)) cli.ActionFunc {
	return action(exit, e, func(ctx context.Context, g *globals, c *cli.Context) (outcome.Result, error) {
		return fn(ctx, g, c, replaySessionOpener(ctx, g))
	})
}

// replaySeconds reads a seconds flag as a positive duration.
func replaySeconds(c *cli.Context, name string) (time.Duration, error) {
	return seconds(name, c.Float64(name))
}

// replayWait reads the wait of a receipt-polling command: its timeout flag
// (timeoutFlag) and --poll-interval.
func replayWait(c *cli.Context, timeoutFlag string) (timeout, poll time.Duration, err error) {
	if timeout, err = replaySeconds(c, timeoutFlag); err != nil {
		return 0, 0, err
	}
	if poll, err = replaySeconds(c, "poll-interval"); err != nil {
		return 0, 0, err
	}
	return timeout, poll, nil
}

// withReplayDevice opens the device, runs fn and releases the device.
func withReplayDevice(ctx context.Context, open replayOpener, fn func(d *device.Device) (outcome.Result, error)) (outcome.Result, error) {
	d, release, err := open(ctx)
	if err != nil {
		return outcome.Result{}, err
	}
	if release != nil {
		defer release()
	}
	return fn(d)
}

// asOutcomeError is errors.As for *fault.Error.
func asOutcomeError(err error, target **fault.Error) bool {
	return errors.As(err, target)
}

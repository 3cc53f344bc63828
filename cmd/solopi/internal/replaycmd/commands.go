package replaycmd

import (
	"errors"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
)

// Commands are cases, replay runs, artifacts, batches and replay
// history: cases, case-*, run, run-repeat, run-batch, status, result,
// cancel, replay-history-*.
func Commands(exit *int, e cmdutil.Env) []*cli.Command {
	var cmds []*cli.Command
	cmds = append(cmds, caseCommands(exit, e)...)
	cmds = append(cmds, runCommands(exit, e)...)
	cmds = append(cmds, batchCommands(exit, e)...)
	cmds = append(cmds, historyCommands(exit, e)...)
	return cmds
}

// replaySeconds reads a seconds flag as a positive duration.
func replaySeconds(c *cli.Context, name string) (time.Duration, error) {
	return cmdutil.Seconds(name, c.Float64(name))
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

// asOutcomeError is errors.As for *fault.Error.
func asOutcomeError(err error, target **fault.Error) bool {
	return errors.As(err, target)
}

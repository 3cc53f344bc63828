package main

import "github.com/urfave/cli/v2"

// replayCommands are cases, replay runs, artifacts, batches and replay
// history: cases, case-*, run, run-repeat, run-batch, status, result,
// cancel, replay-history-*.
func replayCommands(exit *int, e env) []*cli.Command {
	return nil
}

package replaycmd

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
)

// Commands are cases, replay runs, artifacts, batches and replay
// history: cases, case-*, run, run-repeat, run-batch, status, result,
// cancel, replay-history-*, and the suites' results history (history).
func Commands(e cmdutil.Env) []*cli.Command {
	return []*cli.Command{
		newCmdCases(e), newCmdCaseGet(e), newCmdCaseTemplate(e), newCmdCaseValidate(e), newCmdCaseImport(e), newCmdCaseDelete(e),
		newCmdCaseStepList(e), newCmdCaseStepAdd(e), newCmdCaseStepUpdate(e), newCmdCaseStepDelete(e), newCmdCaseStepMove(e), newCmdCaseStepCopy(e),
		newCmdRun(e), newCmdStatus(e), newCmdResult(e), newCmdCancel(e),
		newCmdRunRepeat(e), newCmdRunBatch(e),
		newCmdHistoryList(e), newCmdHistoryGet(e), newCmdHistoryDelete(e),
		newCmdHistory(e),
	}
}

// receiptWait is the wait of a receipt-polling command: its timeout flag
// and --poll-interval.
type receiptWait struct {
	timeout, poll time.Duration
}

// flags bind the wait to timeoutFlag (default timeout seconds) and
// --poll-interval (default poll).
func (w *receiptWait) flags(timeoutFlag string, timeout, poll float64) []cli.Flag {
	return []cli.Flag{
		cmdutil.Seconds(timeoutFlag, "seconds to wait for the receipt", timeout, &w.timeout),
		cmdutil.Seconds("poll-interval", "longest pause between receipt polls, seconds", poll, &w.poll),
	}
}

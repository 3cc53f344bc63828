package managedcmd

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/managed/farmreport"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/report"
)

type managedReportOptions struct {
	taskID, output, junit string
	// html is the directory the task's suite report (suite.json) and its
	// report.html go to, as a batch's do.
	html              string
	overwrite, wait   bool
	timeout, interval time.Duration
	// clock paces the wait (nil: the real clock).
	clock clock.Clock
}

func newCmdReport(e cmdutil.Env) *cli.Command {
	var db string
	o := &managedReportOptions{}
	timeout := cmdutil.Seconds("timeout", "with --wait: give up after this many seconds (0: wait as long as it takes)", 0, &o.timeout)
	timeout.Rule = cmdutil.NonNegative
	return &cli.Command{
		Name:  "managed-report",
		Usage: "the task's matrix report; the exit code is its verdict",
		UsageText: "solopi managed-report --task-id task-… [--wait [--timeout S]] [--output report.json] [--junit junit.xml] [--html DIR] [--overwrite]\n\n" +
			"Example (CI):\n  solopi managed-report --task-id \"$TASK\" --wait --timeout 3600 --junit ./out/junit.xml --html ./out/task",
		Description: "Exit codes: passed 0, failed 2, not_tested 3, cancelled 130, not finished yet 4; with --wait,\n" +
			"a task still not finished after --timeout is 124. --junit writes one <testsuite> per phone, as run-batch does.",
		Flags: []cli.Flag{storeFlag(&db), taskIDFlag(&o.taskID),
			&cli.StringFlag{Name: "output", Destination: &o.output, Usage: "also write the report to this file"},
			&cli.StringFlag{Name: "junit", Destination: &o.junit, Usage: "also write the task's JUnit (one testsuite per phone) to this file"},
			&cli.StringFlag{Name: "html", Destination: &o.html, Usage: "also write the task's suite report (suite.json) and report.html into this directory, as a batch's (solopi report DIR renders it again)"},
			&cli.BoolFlag{Name: "overwrite", Destination: &o.overwrite, Usage: "replace an existing --output or --junit file"},
			&cli.BoolFlag{Name: "wait", Destination: &o.wait, Usage: "block until the task is terminal (Ctrl-C stops waiting, exit 130)"},
			timeout,
			cmdutil.Seconds("poll-interval", "with --wait: seconds between looks at the store", 1, &o.interval)},
		Action: cmdutil.Local(e, onStore(&db, func(ctx context.Context, s managed.Store) (cmdutil.Result, error) {
			return runManagedReport(ctx, s, *o)
		})),
	}
}

type managedReportResult struct {
	Success bool `json:"success"`
	managed.Report
	Output string `json:"output,omitempty"`
	JUnit  string `json:"junit,omitempty"`
	// HTMLReport is the report.html --html wrote.
	HTMLReport string `json:"htmlReport,omitempty"`
	// ErrorCode and Error say why a report is not a success.
	ErrorCode string `json:"errorCode,omitempty"`
	Error     string `json:"error,omitempty"`
}

// reportOutput is the output policy of managed-report --output.
func reportOutput(overwrite bool) artifacts.Output {
	return artifacts.Output{Mode: artifacts.ModeOf(overwrite), MakeParents: true}
}

// runManagedReport exits with the report's own code: passed 0, failed 2,
// not_tested 3, cancelled 130, unfinished 4 (124 when --wait ran out).
func runManagedReport(ctx context.Context, s managed.Store, o managedReportOptions) (cmdutil.Result, error) {
	if o.output != "" {
		if _, err := reportOutput(o.overwrite).CheckFile(o.output); err != nil {
			return cmdutil.Result{}, err
		}
	}
	if o.junit != "" {
		if _, err := artifacts.JUnitOutput(o.overwrite).CheckFile(o.junit); err != nil {
			return cmdutil.Result{}, err
		}
	}
	if !o.wait && o.timeout > 0 {
		return cmdutil.Result{}, fault.Usage(fault.CodeInvalidOption, "--timeout needs --wait")
	}
	var waited *fault.Error
	if o.wait {
		var err error
		if waited, err = waitTerminal(ctx, s, o); err != nil {
			return cmdutil.Result{}, err
		}
	}
	r, err := s.Report(ctx, o.taskID)
	if err != nil {
		return cmdutil.Result{}, err
	}
	res := managedReportResult{Success: r.Status == outcome.VerdictPassed, Report: r}
	if o.output != "" {
		b, err := artifacts.MarshalIndent(r)
		if err != nil {
			return cmdutil.Result{}, err
		}
		written, err := reportOutput(o.overwrite).WriteFile(o.output, b)
		if err != nil {
			return cmdutil.Result{}, err
		}
		res.Output = written.Path
	}
	suite := farmreport.Suite(r)
	if o.junit != "" {
		if err := suite.WriteJUnit(o.junit, o.overwrite); err != nil {
			return cmdutil.Result{}, err
		}
		res.JUnit = o.junit
	}
	if o.html != "" {
		if err := suite.WriteFile(o.html); err != nil {
			return cmdutil.Result{}, err
		}
		html, err := report.Write(o.html, report.Options{})
		if err != nil {
			return cmdutil.Result{}, err
		}
		res.HTMLReport = html.Path
	}
	if waited != nil && !r.Terminal {
		res.ErrorCode, res.Error = waited.Code, waited.Message
		return cmdutil.WithKind(res, fault.Timeout), nil
	}
	res.ErrorCode, res.Error = verdictProblem(r)
	return cmdutil.WithVerdict(res, r.Status), nil
}

// verdictProblem is the errorCode and error of a task that did not pass.
func verdictProblem(r managed.Report) (string, string) {
	switch r.Status {
	case outcome.VerdictPassed:
		return "", ""
	case outcome.VerdictFailed:
		return fault.CodeTaskFailed, "the task failed: at least one shard's Result Judge verdict is failed"
	case outcome.VerdictNotTested:
		return fault.CodeTaskNotTested, "the task is not_tested: at least one shard could not run to a verdict"
	case string(protocol.ManagedCancelled):
		return fault.CodeTaskCancelled, "the task was cancelled"
	}
	return fault.CodeTaskNotTerminal, "the task has not finished: it is " + r.Status + " (managed-report --wait blocks until it ends)"
}

// waitTerminal polls the task's status on o's clock until it is terminal.
// It returns the wait_timeout failure when --timeout ran out first (the
// report is then printed as it is), an interrupt when ctx ended, and the
// store's error for an unknown task.
func waitTerminal(ctx context.Context, s managed.Store, o managedReportOptions) (*fault.Error, error) {
	clk := clock.Or(o.clock)
	var deadline time.Time
	if o.timeout > 0 {
		deadline = clk.Now().Add(o.timeout)
	}
	for {
		st, err := s.Status(ctx, o.taskID)
		if err != nil {
			return nil, err
		}
		if managed.Terminal(st.Status) {
			return nil, nil
		}
		pause := o.interval
		if !deadline.IsZero() {
			left := deadline.Sub(clk.Now())
			if left <= 0 {
				return fault.Newf(fault.Timeout, fault.CodeTaskWaitTimeout, "the task is still %s after waiting %s", st.Status, o.timeout), nil
			}
			pause = min(pause, left)
		}
		if err := clk.Sleep(ctx, pause); err != nil {
			return nil, fault.Wrap(fault.Interrupted, fault.CodeInterrupted, "interrupted while waiting for the task to finish", err)
		}
	}
}

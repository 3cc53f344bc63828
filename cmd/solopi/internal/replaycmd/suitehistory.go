package replaycmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/history"
)

// historyResult is what `solopi history` prints.
type historyResult struct {
	Success bool              `json:"success"`
	History string            `json:"history"`
	Cases   []history.Summary `json:"cases"`
}

func newCmdHistory(e cmdutil.Env) *cli.Command {
	var path string
	var last int
	cases := &cli.StringSlice{}
	return &cli.Command{
		Name:  "history",
		Usage: "summarise the results history of suites: per case the pass rate, flake rate, median duration and last verdicts",
		UsageText: "solopi history [--case NAME]... [--last 10] [--history PATH]\n\n" +
			"Local only: reads the SQLite results history suites append to (run-batch/run with case files, --devices\n" +
			"or retries), never creates one. Rates are shares of the runs with a product verdict (passed, flaky,\n" +
			"failed); infrastructure errors are counted apart. lastVerdicts are newest first.",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "case", Destination: cases, Usage: "only this case (repeatable)"},
			&cli.IntFlag{Name: "last", Destination: &last, Value: 10, Usage: "how many of the newest verdicts to list per case (1..100)"},
			&cli.StringFlag{Name: "history", Destination: &path, Usage: "the results history (default $XDG_DATA_HOME/solopi/history.sqlite)"},
		},
		Action: cmdutil.Local(e, func(ctx context.Context, g *cmdutil.Globals) (cmdutil.Result, error) {
			if last < 1 || last > 100 {
				return cmdutil.Result{}, fault.Usage(fault.CodeInvalidOption, "--last must be between 1 and 100")
			}
			if path == "" {
				p, err := history.DefaultPath(g.Env.Getenv)
				if err != nil {
					return cmdutil.Result{}, err
				}
				path = p
			}
			st, err := history.OpenReadOnly(ctx, path, history.Options{})
			if err != nil {
				return cmdutil.Result{}, err
			}
			defer st.Close()
			sums, err := st.Summaries(ctx, history.Query{Cases: cases.Value(), Last: last})
			if err != nil {
				return cmdutil.Result{}, err
			}
			return cmdutil.OK(historyResult{Success: true, History: st.Path(), Cases: sums}), nil
		}),
	}
}

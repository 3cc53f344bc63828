package devicecmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/solopi/readiness"
)

// runDoctor turns the health query into a verdict: exit 0 when ready, 2
// when not (including SoloPi not installed).
func runDoctor(ctx context.Context, d cmdutil.DeviceDeps) (outcome.Result, error) {
	t, err := d.Transport(ctx)
	if err != nil {
		return outcome.Result{}, err
	}
	r, err := readiness.Doctor(ctx, t, readiness.DoctorOptions{Session: d.G.SessionOptions(false), Device: d.Device(ctx, t)})
	if err != nil {
		return outcome.Result{}, err
	}
	exit := outcome.ExitOK
	if !r.Ready {
		exit = outcome.ExitFailure
	}
	return outcome.Result{Value: r, Exit: exit}, nil
}

func doctorCommand(exit *int, e cmdutil.Env) *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "check that SoloPi is installed, answering and fully set up; say what to fix on the phone",
		Description: "Exit 0 when ready, 2 when something is missing (each entry of checks[] says what and how to fix it),\n" +
			"3 for device selection problems, 4 when SoloPi's control service cannot be reached.",
		UsageText: "solopi doctor",
		Action: cmdutil.Action(exit, e, func(ctx context.Context, g *cmdutil.Globals, c *cli.Context) (outcome.Result, error) {
			return runDoctor(ctx, g.Deps())
		}),
	}
}

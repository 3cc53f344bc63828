package devicecmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/readiness"
)

func newCmdDoctor(e cmdutil.Env) *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "check that SoloPi is installed, answering and fully set up; say what to fix on the phone",
		Description: "Exit 0 when ready, 2 when something is missing (each entry of checks[] says what and how to fix it),\n" +
			"3 for device selection problems, 4 when SoloPi's control service cannot be reached.",
		UsageText: "solopi doctor",
		Action:    cmdutil.OnDevice(e, runDoctor),
	}
}

// runDoctor turns the health query into a verdict: ready, or a failure
// (SoloPi not installed included).
func runDoctor(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
	t, err := d.Transport(ctx)
	if err != nil {
		return cmdutil.Result{}, err
	}
	r, err := readiness.Doctor(ctx, t, readiness.DoctorOptions{Session: d.SessionOptions(false), Device: device.Describe(ctx, t)})
	if err != nil {
		return cmdutil.Result{}, err
	}
	if !r.Ready {
		return cmdutil.Failed(r), nil
	}
	return cmdutil.OK(r), nil
}

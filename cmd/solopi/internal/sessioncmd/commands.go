package sessioncmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/sessions"
)

// Commands are SoloPi's other session types and their data:
// record-*, screen-record-*, scan-*, video-analysis-*, perf-* (collection,
// live display, history, local analysis), stress-*, plugin-*.
func Commands(e cmdutil.Env) []*cli.Command {
	return []*cli.Command{
		newCmdRecordStart(e), newCmdRecordStatus(e), newCmdRecordStop(e),
		newCmdScreenRecordStart(e), newCmdScreenRecordStatus(e), newCmdScreenRecordStop(e),
		newCmdScanStart(e), newCmdScanStatus(e), newCmdScanCancel(e),
		newCmdVideoAnalysisStart(e), newCmdVideoAnalysisStatus(e),
		newCmdPerfList(e), newCmdPerfCurrent(e), newCmdPerfStart(e), newCmdPerfStatus(e), newCmdPerfStop(e),
		newCmdPerfDisplayStart(e), newCmdPerfDisplayStatus(e), newCmdPerfDisplayStop(e), newCmdPerfAnalyze(e),
		newCmdPerfHistoryList(e), newCmdPerfHistoryGet(e), newCmdPerfHistoryDelete(e),
		newCmdStressStart(e), newCmdStressStatus(e), newCmdStressStop(e),
		newCmdPluginList(e), newCmdPluginInstall(e), newCmdPluginRemove(e),
	}
}

// newCmdQuery is a command without options that runs one query.
func newCmdQuery(e cmdutil.Env, name, usage string, fn func(ctx context.Context, dev *device.Device) (map[string]any, error)) *cli.Command {
	return &cli.Command{
		Name: name, Usage: usage, UsageText: "solopi " + name,
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			return cmdutil.DeviceQuery(ctx, d, fn)
		}),
	}
}

// timingFlags bind a command's wait budget and poll interval to t.
func timingFlags(t *sessions.SessionTimings, timeoutName string, timeout, poll float64, what string) []cli.Flag {
	return []cli.Flag{
		cmdutil.Seconds(timeoutName, "seconds to wait for "+what, timeout, &t.Timeout),
		cmdutil.Seconds("poll-interval", "seconds between status polls", poll, &t.Interval),
	}
}

func sessionIDFlag(into *string, required bool, usage string) cli.Flag {
	return &cli.StringFlag{Name: "session-id", Destination: into, Usage: usage, Required: required}
}

// newCmdStatus is a session type's status command: the snapshot, exit 2
// unless the device's session is --session-id when given.
func newCmdStatus(e cmdutil.Env, name, usage, idUsage string, check func(id string) error,
	fn func(ctx context.Context, dev *device.Device, id string) (map[string]any, error)) *cli.Command {
	var id string
	return &cli.Command{
		Name: name, Usage: usage, UsageText: "solopi " + name + " [--session-id ID]",
		Flags: []cli.Flag{sessionIDFlag(&id, false, idUsage)},
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			if err := check(id); err != nil {
				return cmdutil.Result{}, err
			}
			return cmdutil.DeviceQuery(ctx, d, func(ctx context.Context, dev *device.Device) (map[string]any, error) {
				return fn(ctx, dev, id)
			})
		}),
	}
}

// stopCommand describes a command that ends our own session of a type.
type stopCommand struct {
	name, usage, description, usageText, idUsage string
	timeoutName, what                            string
	timeout                                      float64
	// check refuses a session id before the device is contacted.
	check func(id string) error
	stop  func(ctx context.Context, dev *device.Device, id string, t sessions.SessionTimings) (*sessions.StopResult, error)
}

func (s stopCommand) command(e cmdutil.Env) *cli.Command {
	var id string
	var t sessions.SessionTimings
	return &cli.Command{
		Name: s.name, Usage: s.usage, Description: s.description, UsageText: s.usageText,
		Flags: append([]cli.Flag{sessionIDFlag(&id, true, s.idUsage)}, timingFlags(&t, s.timeoutName, s.timeout, 0.5, s.what)...),
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			if err := sessions.RequireSessionID(id); err != nil {
				return cmdutil.Result{}, err
			}
			if s.check != nil {
				if err := s.check(id); err != nil {
					return cmdutil.Result{}, err
				}
			}
			return cmdutil.DeviceQuery(ctx, d, func(ctx context.Context, dev *device.Device) (*sessions.StopResult, error) {
				return s.stop(ctx, dev, id, t)
			})
		}),
	}
}

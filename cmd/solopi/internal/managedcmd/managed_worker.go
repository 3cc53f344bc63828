package managedcmd

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/verifycmd"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/managed/worker"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/progress"
)

// The device-bound managed commands (managed-worker-once, -worker-loop and
// -device-probe) reach devices through managedDevices: the worker runs each
// shard with verify-run in-process on exactly the leased serial, and a probe
// is the doctor (hostDevices, managed_devices.go). Their options and run
// functions live here and take a managedDevices, so that tests can script
// the devices.

// managedDevices is what the device-bound commands need from this host.
type managedDevices interface {
	worker.DeviceLister
	worker.DeviceProber
	// Executor runs shards with verify-run under these budgets.
	Executor(budgets verifycmd.RunBudgets) worker.ShardExecutor
}

type managedWorkerOptions struct {
	workerID, host, artifactsRoot string
	budgets                       verifycmd.RunBudgets
	concurrency                   int
	idleInterval                  time.Duration
	maxIdlePolls, maxAssignments  int
	probeInterval                 time.Duration
	// progress shows the shards as they end (nil: nothing shown).
	progress *progress.Line
}

func (o managedWorkerOptions) loopConfig(s managed.Store, d managedDevices) (worker.LoopConfig, error) {
	if !managed.ValidID(o.workerID) {
		return worker.LoopConfig{}, fault.Usage("invalid_option", "--worker-id must match [A-Za-z0-9][A-Za-z0-9._:-]{0,159}")
	}
	root, err := filepath.Abs(o.artifactsRoot)
	if err != nil || o.artifactsRoot == "" {
		return worker.LoopConfig{}, fault.Usage("invalid_option", "--artifacts-root must name a directory")
	}
	return worker.LoopConfig{
		Config: worker.Config{Store: s, Executor: d.Executor(o.budgets), Devices: d, WorkerID: o.workerID,
			Host: o.host, ArtifactsRoot: root, Observe: shardProgress(o.progress, o.maxAssignments)},
		Prober: d, ProbeInterval: o.probeInterval, Concurrency: max(1, o.concurrency), IdleInterval: o.idleInterval,
		MaxIdlePolls: o.maxIdlePolls, MaxAssignments: o.maxAssignments,
	}, nil
}

type managedWorkerOnceResult struct {
	Success    bool                `json:"success"`
	Claimed    bool                `json:"claimed"`
	Assignment *managed.Assignment `json:"assignment,omitempty"`
	Result     *managed.Outcome    `json:"result,omitempty"`
	Report     string              `json:"report,omitempty"`
}

// runManagedWorkerOnce claims at most one shard this host can run, runs it
// and reports it: exit 0 passed, 2 failed or not_tested, 4 a lost lease or
// a transport failure, 3 another worker error; nothing to claim is exit 0
// with claimed:false.
func runManagedWorkerOnce(ctx context.Context, s managed.Store, d managedDevices, o managedWorkerOptions) (outcome.Result, error) {
	o.concurrency, o.maxAssignments, o.maxIdlePolls = 1, 1, 1
	cfg, err := o.loopConfig(s, d)
	if err != nil {
		return outcome.Result{}, err
	}
	res, err := worker.Run(ctx, cfg)
	if err != nil {
		return outcome.Result{}, err
	}
	if res.Last == nil {
		if res.Interrupted {
			return outcome.Result{}, fault.New(fault.Interrupted, fault.CodeInterrupted, "the worker was interrupted before it claimed a shard")
		}
		return outcome.OK(managedWorkerOnceResult{Success: true}), nil
	}
	last := res.Last
	out := managedWorkerOnceResult{Claimed: true, Assignment: last.Assignment, Result: last.Outcome, Report: last.ReportPath}
	if last.Err != nil {
		f := workerFault(last.Err, res.Interrupted).With("assignment", last.Assignment)
		if last.Outcome != nil {
			f = f.With("assignmentFailure", last.Outcome)
		}
		return outcome.Result{}, f
	}
	out.Success = last.Status == outcome.VerdictPassed
	exit := outcome.ExitOK
	if !out.Success {
		exit = outcome.ExitFailure
	}
	return outcome.Result{Value: out, Exit: exit}, nil
}

// workerFault types how a claimed shard failed on this worker.
func workerFault(err error, interrupted bool) *fault.Error {
	switch {
	case interrupted:
		return fault.Wrap(fault.Interrupted, fault.CodeInterrupted, "the worker was interrupted; the shard was handed back", err)
	case managed.IsStale(err) || errors.Is(err, context.Canceled):
		return fault.Wrap(fault.Transport, managed.CodeStaleAssignment, "the worker lost its lease; the shard is someone else's now", err)
	}
	f := fault.From(err)
	if f.Kind != fault.Transport {
		return fault.Wrap(fault.Invalid, managed.CategoryWorker, "the shard's run failed: "+f.Message, err)
	}
	return f
}

type managedWorkerLoopResult struct {
	Success     bool `json:"success"`
	Processed   int  `json:"processed"`
	Failures    int  `json:"failures"`
	IdlePolls   int  `json:"idlePolls"`
	Interrupted bool `json:"interrupted"`
}

// runManagedWorkerLoop works shards until a limit or a signal: exit 0
// without failures, 2 with some, 130 when interrupted (running shards are
// handed back first; success is then false).
func runManagedWorkerLoop(ctx context.Context, s managed.Store, d managedDevices, o managedWorkerOptions) (outcome.Result, error) {
	cfg, err := o.loopConfig(s, d)
	if err != nil {
		return outcome.Result{}, err
	}
	res, err := worker.Run(ctx, cfg)
	if err != nil {
		return outcome.Result{}, err
	}
	out := managedWorkerLoopResult{Success: res.Failures == 0 && !res.Interrupted, Processed: res.Processed, Failures: res.Failures,
		IdlePolls: res.IdlePolls, Interrupted: res.Interrupted}
	exit := outcome.ExitOK
	switch {
	case res.Interrupted:
		exit = outcome.ExitInterrupted
	case res.Failures > 0:
		exit = outcome.ExitFailure
	}
	return outcome.Result{Value: out, Exit: exit}, nil
}

type managedProbeResult struct {
	Success bool           `json:"success"`
	Device  managed.Device `json:"device"`
	Doctor  any            `json:"doctor"`
}

// runManagedDeviceProbe probes one device and registers it: exit 0 when
// the doctor passed (healthy), 2 when not (degraded).
func runManagedDeviceProbe(ctx context.Context, s managed.Store, d managedDevices, req worker.ProbeRequest, labels []string) (outcome.Result, error) {
	var err error
	if req.Labels, err = parseLabels(labels); err != nil {
		return outcome.Result{}, err
	}
	dev, rep, err := worker.ProbeAndRegister(ctx, s, d, req)
	if err != nil {
		return outcome.Result{}, err
	}
	exit := outcome.ExitOK
	if !rep.Ready {
		exit = outcome.ExitFailure
	}
	return outcome.Result{Value: managedProbeResult{Success: rep.Ready, Device: dev, Doctor: rep.Doctor}, Exit: exit}, nil
}

func managedWorkerFlags(loop bool) []cli.Flag {
	flags := []cli.Flag{managedDBFlag(), hostFlag(),
		&cli.StringFlag{Name: "worker-id", Required: true, Usage: "this worker's stable id"},
		&cli.StringFlag{Name: "artifacts-root", Required: true, Usage: "evidence goes to <root>/<taskId>/<shardId>/<attemptId>/"},
		&cli.Float64Flag{Name: "probe-interval", Value: worker.DefaultProbeInterval.Seconds(), Usage: "seconds between re-probes of this host's devices"},
	}
	flags = append(flags, verifycmd.RunBudgetFlags()...)
	if loop {
		flags = append(flags,
			&cli.IntFlag{Name: "concurrency", Value: 1, Usage: "shards run at once on this host (one per device at most)"},
			&cli.Float64Flag{Name: "idle-interval", Value: 1, Usage: "seconds per poll when there is nothing to claim"},
			&cli.IntFlag{Name: "max-idle-polls", Usage: "stop after this many idle polls in a row (0: never)"},
			&cli.IntFlag{Name: "max-assignments", Usage: "stop after this many shards (0: never)"})
	}
	return flags
}

// readWorkerOptions reads the worker flags.
func readWorkerOptions(c *cli.Context, loop bool) (managedWorkerOptions, error) {
	o := managedWorkerOptions{workerID: c.String("worker-id"), host: c.String("host"), artifactsRoot: c.String("artifacts-root"),
		concurrency: 1, idleInterval: time.Second}
	var err error
	if o.budgets, err = verifycmd.ReadRunBudgets(c); err != nil {
		return o, err
	}
	if o.probeInterval, err = cmdutil.Seconds("probe-interval", c.Float64("probe-interval")); err != nil {
		return o, err
	}
	if loop {
		if o.idleInterval, err = cmdutil.Seconds("idle-interval", c.Float64("idle-interval")); err != nil {
			return o, err
		}
		o.concurrency, o.maxIdlePolls, o.maxAssignments = c.Int("concurrency"), c.Int("max-idle-polls"), c.Int("max-assignments")
		if o.concurrency < 1 || o.maxIdlePolls < 0 || o.maxAssignments < 0 {
			return o, fault.Usage("invalid_option", "--concurrency must be positive; --max-idle-polls and --max-assignments not negative")
		}
	}
	return o, nil
}

// workerAction reads the worker flags and runs a worker command on this
// host's devices.
func workerAction(exit *int, e cmdutil.Env, loop bool,
	run func(context.Context, managed.Store, managedDevices, managedWorkerOptions) (outcome.Result, error)) cli.ActionFunc {
	return cmdutil.Action(exit, e, func(ctx context.Context, g *cmdutil.Globals, c *cli.Context) (outcome.Result, error) {
		o, err := readWorkerOptions(c, loop)
		if err != nil {
			return outcome.Result{}, err
		}
		o.progress = g.Progress
		return withManagedStore(ctx, c, func(s managed.Store) (outcome.Result, error) { return run(ctx, s, hostDevices{g: g}, o) })
	})
}

// managedDeviceCommands are the device-bound managed commands.
func managedDeviceCommands(exit *int, e cmdutil.Env) []*cli.Command {
	return []*cli.Command{
		{
			Name:      "managed-worker-once",
			Usage:     "claim one shard this host can run, run it with verify-run on the leased device, report it",
			UsageText: "solopi managed-worker-once --worker-id host-a-1 --artifacts-root ./evidence",
			Description: "Exit 0 passed (or nothing to claim: claimed:false), 2 failed or not_tested, 4 a lost lease or a\n" +
				"transport failure (the shard is retried), 3 another worker error (the shard ends not_tested).",
			Flags:  managedWorkerFlags(false),
			Action: workerAction(exit, e, false, runManagedWorkerOnce),
		},
		{
			Name:  "managed-worker-loop",
			Usage: "work shards on this host's devices until a limit or a signal",
			UsageText: "solopi managed-worker-loop --worker-id host-a --artifacts-root ./evidence [--concurrency N]\n" +
				"  [--idle-interval 1] [--max-idle-polls 0] [--max-assignments 0]\n\nExample:\n  SOLOPI_MANAGED_DB=postgres://ci@db/solopi solopi managed-worker-loop --worker-id \"$(hostname)\" --artifacts-root /var/lib/solopi/evidence",
			Description: "A River client on this host: it takes only shards it can place on devices its adb server sees,\n" +
				"heartbeats their leases, and stops device work at once when a task is cancelled or a lease is lost.\n" +
				"SIGINT/SIGTERM hand running shards back and exit 130.",
			Flags:  managedWorkerFlags(true),
			Action: workerAction(exit, e, true, runManagedWorkerLoop),
		},
		{
			Name:  "managed-device-probe",
			Usage: "probe the selected device with doctor and register it with what it can do",
			UsageText: "solopi [--serial SERIAL] managed-device-probe [--device-id ID] [--capability C]... [--label k=v]...\n\n" +
				"Exit 0 when doctor passed (healthy), 2 when not (degraded); 3/4 when the device cannot be probed.",
			Flags: []cli.Flag{managedDBFlag(),
				&cli.StringFlag{Name: "device-id", Usage: "stable device id (default: the serial)"},
				&cli.StringSliceFlag{Name: "capability", Usage: "an extra capability (repeatable)"},
				&cli.StringSliceFlag{Name: "label", Usage: "a key=value label (repeatable)"}},
			Action: cmdutil.Action(exit, e, func(ctx context.Context, g *cmdutil.Globals, c *cli.Context) (outcome.Result, error) {
				// --serial, else the only online device. A named device is
				// probed even when adb cannot reach it: the probe's error
				// degrades it.
				serial := g.Serial
				if serial == "" {
					t, err := g.Transport(ctx)
					if err != nil {
						return outcome.Result{}, err
					}
					serial = t.Serial()
				}
				return withManagedStore(ctx, c, func(s managed.Store) (outcome.Result, error) {
					return runManagedDeviceProbe(ctx, s, hostDevices{g: g}, worker.ProbeRequest{Serial: serial, DeviceID: c.String("device-id"),
						Capabilities: c.StringSlice("capability")}, c.StringSlice("label"))
				})
			}),
		},
	}
}

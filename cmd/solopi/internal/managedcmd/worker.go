package managedcmd

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/managed/devicehost"
	"github.com/solopi-dev/solopi/managed/worker"
	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/progress"
	"github.com/solopi-dev/solopi/solopi/sessions"
	"github.com/solopi-dev/solopi/solopi/video"
)

// The device-bound managed commands: managed-worker-once, -worker-loop and
// -device-probe. They reach this host's devices through the devices the
// command's globals select (managed/devicehost): a worker runs each shard
// with verify-run's code in process on exactly the leased serial, a probe
// is the doctor.

// devices is what the device-bound commands need from this host.
type devices interface {
	worker.DeviceLister
	worker.DeviceProber
	worker.ShardExecutor
	worker.DeviceLocker
}

// hostDevices are the devices the globals reach, each shard under b, with
// the host-wide device locks every solopi process of the user shares
// (solopi/devicelock): a worker drives a phone only while it holds its
// lock, so a local `solopi run` and a worker never overlap on one phone.
func hostDevices(g *cmdutil.Globals, b cmdutil.RunBudgets, videoMode, perf string) (devicehost.Host, error) {
	budgets, err := b.Budgets()
	if err != nil {
		return devicehost.Host{}, err
	}
	locks, err := g.Locker()
	if err != nil {
		return devicehost.Host{}, err
	}
	return devicehost.Host{Devices: g.Selector(), Session: g.SessionOptions(false), Budgets: budgets, Locks: locks, Video: video.Mode(videoMode),
		Perf: sessions.ParseItems(perf)}, nil
}

// workerFlagValues are the worker flags as given.
type workerFlagValues struct {
	db                            string
	workerID, host, artifactsRoot string
	budgets                       cmdutil.RunBudgets
	probeInterval                 time.Duration
	concurrency                   int
	idleInterval                  time.Duration
	maxIdlePolls, maxAssignments  int
	video, perf                   string
}

func (v *workerFlagValues) flags(loop bool) []cli.Flag {
	flags := []cli.Flag{storeFlag(&v.db), hostFlag(&v.host),
		&cli.StringFlag{Name: "worker-id", Destination: &v.workerID, Required: true, Usage: "this worker's stable id"},
		&cli.StringFlag{Name: "artifacts-root", Destination: &v.artifactsRoot, Required: true, Usage: "evidence goes to <root>/<taskId>/<shardId>/<attemptId>/"},
		cmdutil.Seconds("probe-interval", "seconds between re-probes of this host's devices", worker.DefaultProbeInterval.Seconds(), &v.probeInterval),
		&cli.StringFlag{Name: "video", Value: string(video.ModeOff), Destination: &v.video, Usage: "record each shard's run with adb screenrecord into its evidence: off, on-failure (kept only when the shard did not pass) or always"},
		&cli.StringFlag{Name: "perf", Destination: &v.perf, Usage: "record these SoloPi performance items (as perf-start takes them, e.g. CPU,Memory,FPS) around each shard into perf/ of its evidence; never a verdict"},
	}
	flags = append(flags, cmdutil.RunBudgetFlags(&v.budgets)...)
	if loop {
		flags = append(flags,
			&cli.IntFlag{Name: "concurrency", Destination: &v.concurrency, Value: 1, Usage: "shards run at once on this host (one per device at most)"},
			cmdutil.Seconds("idle-interval", "seconds per poll when there is nothing to claim", 1, &v.idleInterval),
			&cli.IntFlag{Name: "max-idle-polls", Destination: &v.maxIdlePolls, Usage: "stop after this many idle polls in a row (0: never)"},
			&cli.IntFlag{Name: "max-assignments", Destination: &v.maxAssignments, Usage: "stop after this many shards (0: never)"})
	}
	return flags
}

type managedWorkerOptions struct {
	workerID, host, artifactsRoot string
	concurrency                   int
	idleInterval                  time.Duration
	maxIdlePolls, maxAssignments  int
	probeInterval                 time.Duration
	// progress shows the shards as they end (nil: nothing shown).
	progress *progress.Line
}

// options checks the worker flags; loop adds the loop's limits.
func (v *workerFlagValues) options(g *cmdutil.Globals, loop bool) (managedWorkerOptions, error) {
	o := managedWorkerOptions{workerID: v.workerID, host: v.host, artifactsRoot: v.artifactsRoot, probeInterval: v.probeInterval,
		concurrency: 1, idleInterval: time.Second, progress: g.Progress}
	if loop {
		o.idleInterval, o.concurrency, o.maxIdlePolls, o.maxAssignments = v.idleInterval, v.concurrency, v.maxIdlePolls, v.maxAssignments
		if o.concurrency < 1 || o.maxIdlePolls < 0 || o.maxAssignments < 0 {
			return o, fault.Usage(fault.CodeInvalidOption, "--concurrency must be positive; --max-idle-polls and --max-assignments not negative")
		}
	}
	return o, nil
}

// run is a worker command's run function: the options, this host's
// devices and the store, then fn.
func (v *workerFlagValues) run(loop bool, fn func(context.Context, managed.Store, devices, managedWorkerOptions) (cmdutil.Result, error)) func(context.Context, *cmdutil.Globals) (cmdutil.Result, error) {
	return func(ctx context.Context, g *cmdutil.Globals) (cmdutil.Result, error) {
		host, err := hostDevices(g, v.budgets, v.video, v.perf)
		if err != nil {
			return cmdutil.Result{}, err
		}
		o, err := v.options(g, loop)
		if err != nil {
			return cmdutil.Result{}, err
		}
		return withStore(ctx, v.db, func(s managed.Store) (cmdutil.Result, error) { return fn(ctx, s, host, o) })
	}
}

func (o managedWorkerOptions) loopConfig(s managed.Store, d devices) (worker.LoopConfig, error) {
	if !managed.ValidID(o.workerID) {
		return worker.LoopConfig{}, fault.Usage(fault.CodeInvalidOption, "--worker-id must match [A-Za-z0-9][A-Za-z0-9._:-]{0,159}")
	}
	root, err := filepath.Abs(o.artifactsRoot)
	if err != nil || o.artifactsRoot == "" {
		return worker.LoopConfig{}, fault.Usage(fault.CodeInvalidOption, "--artifacts-root must name a directory")
	}
	return worker.LoopConfig{
		Config: worker.Config{Store: s, Executor: d, Devices: d, Locks: d, WorkerID: o.workerID,
			Host: o.host, ArtifactsRoot: root, Observe: shardProgress(o.progress, o.maxAssignments)},
		Prober: d, ProbeInterval: o.probeInterval, Concurrency: max(1, o.concurrency), IdleInterval: o.idleInterval,
		MaxIdlePolls: o.maxIdlePolls, MaxAssignments: o.maxAssignments,
	}, nil
}

func newCmdWorkerOnce(e cmdutil.Env) *cli.Command {
	v := &workerFlagValues{}
	return &cli.Command{
		Name:      "managed-worker-once",
		Usage:     "claim one shard this host can run, run it with verify-run on the leased device, report it",
		UsageText: "solopi managed-worker-once --worker-id host-a-1 --artifacts-root ./evidence",
		Description: "Exit 0 passed (or nothing to claim: claimed:false), 2 failed or not_tested, 4 a lost lease, a\n" +
			"transport failure or a run that met a fault of the phone, adb or another owner on it (the shard is\n" +
			"retried on the task's budget), 3 another worker error (the shard ends not_tested).",
		Flags:  v.flags(false),
		Action: cmdutil.Local(e, v.run(false, runManagedWorkerOnce)),
	}
}

type managedWorkerOnceResult struct {
	Success    bool                `json:"success"`
	Claimed    bool                `json:"claimed"`
	Assignment *managed.Assignment `json:"assignment,omitempty"`
	Result     *managed.Outcome    `json:"result,omitempty"`
	Report     string              `json:"report,omitempty"`
}

// runManagedWorkerOnce claims at most one shard this host can run, runs it
// and reports it: passed, a failure (failed or not_tested), a lost lease or
// a transport failure, another worker error; nothing to claim is success
// with claimed:false.
func runManagedWorkerOnce(ctx context.Context, s managed.Store, d devices, o managedWorkerOptions) (cmdutil.Result, error) {
	o.concurrency, o.maxAssignments, o.maxIdlePolls = 1, 1, 1
	cfg, err := o.loopConfig(s, d)
	if err != nil {
		return cmdutil.Result{}, err
	}
	res, err := worker.Run(ctx, cfg)
	if err != nil {
		return cmdutil.Result{}, err
	}
	if res.Last == nil {
		if res.Interrupted {
			return cmdutil.Result{}, fault.New(fault.Interrupted, fault.CodeInterrupted, "the worker was interrupted before it claimed a shard")
		}
		return cmdutil.OK(managedWorkerOnceResult{Success: true}), nil
	}
	last := res.Last
	out := managedWorkerOnceResult{Claimed: true, Assignment: last.Assignment, Result: last.Outcome, Report: last.ReportPath}
	if last.Err != nil {
		f := workerFault(last.Err, res.Interrupted).With("assignment", last.Assignment)
		if last.Outcome != nil {
			f = f.With("assignmentFailure", last.Outcome)
		}
		return cmdutil.Result{}, f
	}
	if out.Success = last.Status == outcome.VerdictPassed; !out.Success {
		return cmdutil.Failed(out), nil
	}
	return cmdutil.OK(out), nil
}

// workerFault types how a claimed shard failed on this worker.
func workerFault(err error, interrupted bool) *fault.Error {
	switch {
	case interrupted:
		return fault.Wrap(fault.Interrupted, fault.CodeInterrupted, "the worker was interrupted; the shard was handed back", err)
	case managed.IsStale(err) || errors.Is(err, context.Canceled):
		return fault.Wrap(fault.Transport, fault.CodeStaleAssignment, "the worker lost its lease; the shard is someone else's now", err)
	}
	f := fault.From(err)
	if f.Kind != fault.Transport {
		return fault.Wrap(fault.Invalid, managed.CategoryWorker, "the shard's run failed: "+f.Message, err)
	}
	return f
}

func newCmdWorkerLoop(e cmdutil.Env) *cli.Command {
	v := &workerFlagValues{}
	return &cli.Command{
		Name:  "managed-worker-loop",
		Usage: "work shards on this host's devices until a limit or a signal",
		UsageText: "solopi managed-worker-loop --worker-id host-a --artifacts-root ./evidence [--concurrency N]\n" +
			"  [--idle-interval 1] [--max-idle-polls 0] [--max-assignments 0]\n\nExample:\n  SOLOPI_MANAGED_DB=postgres://ci@db/solopi solopi managed-worker-loop --worker-id \"$(hostname)\" --artifacts-root /var/lib/solopi/evidence",
		Description: "A River client on this host: it takes only shards it can place on devices its adb server sees,\n" +
			"heartbeats their leases, and stops device work at once when a task is cancelled or a lease is lost.\n" +
			"SIGINT/SIGTERM hand running shards back and exit 130.",
		Flags:  v.flags(true),
		Action: cmdutil.Local(e, v.run(true, runManagedWorkerLoop)),
	}
}

type managedWorkerLoopResult struct {
	Success     bool `json:"success"`
	Processed   int  `json:"processed"`
	Failures    int  `json:"failures"`
	IdlePolls   int  `json:"idlePolls"`
	Interrupted bool `json:"interrupted"`
	// ErrorCode and Error say why the loop is not a success.
	ErrorCode string `json:"errorCode,omitempty"`
	Error     string `json:"error,omitempty"`
}

// runManagedWorkerLoop works shards until a limit or a signal: success
// without failures, a failure with some, an interrupt when interrupted
// (running shards are handed back first; success is then false).
func runManagedWorkerLoop(ctx context.Context, s managed.Store, d devices, o managedWorkerOptions) (cmdutil.Result, error) {
	cfg, err := o.loopConfig(s, d)
	if err != nil {
		return cmdutil.Result{}, err
	}
	res, err := worker.Run(ctx, cfg)
	if err != nil {
		return cmdutil.Result{}, err
	}
	out := managedWorkerLoopResult{Success: res.Failures == 0 && !res.Interrupted, Processed: res.Processed, Failures: res.Failures,
		IdlePolls: res.IdlePolls, Interrupted: res.Interrupted}
	switch {
	case res.Interrupted:
		out.ErrorCode, out.Error = fault.CodeInterrupted, "the worker was interrupted: its running shards were handed back"
		return cmdutil.WithKind(out, fault.Interrupted), nil
	case res.Failures > 0:
		out.ErrorCode = fault.CodeShardsNotPassed
		out.Error = fmt.Sprintf("%d of the %d shards this worker ran did not pass (failed, not tested, or ended by a fault)", res.Failures, res.Processed)
		return cmdutil.Failed(out), nil
	}
	return cmdutil.OK(out), nil
}

type probeOptions struct {
	db, deviceID         string
	capabilities, labels cli.StringSlice
}

func newCmdDeviceProbe(e cmdutil.Env) *cli.Command {
	o := &probeOptions{}
	return &cli.Command{
		Name:  "managed-device-probe",
		Usage: "probe the selected device with doctor and register it with what it can do",
		UsageText: "solopi [--serial SERIAL] managed-device-probe [--device-id ID] [--capability C]... [--label k=v]...\n\n" +
			"Exit 0 when doctor passed (healthy), 2 when not (degraded); 3/4 when the device cannot be probed.",
		Flags: []cli.Flag{storeFlag(&o.db),
			&cli.StringFlag{Name: "device-id", Destination: &o.deviceID, Usage: "stable device id (default: the serial)"},
			&cli.StringSliceFlag{Name: "capability", Destination: &o.capabilities, Usage: "an extra capability (repeatable)"},
			&cli.StringSliceFlag{Name: "label", Destination: &o.labels, Usage: "a key=value label (repeatable)"}},
		Action: cmdutil.OnDevice(e, func(ctx context.Context, d cmdutil.DeviceDeps) (cmdutil.Result, error) {
			// --serial, else the only online device. A named device is
			// probed even when adb cannot reach it: the probe's error
			// degrades it.
			serial := d.G.Serial
			if serial == "" {
				t, err := d.Transport(ctx)
				if err != nil {
					return cmdutil.Result{}, err
				}
				serial = t.Serial()
			}
			host, err := hostDevices(d.G, cmdutil.RunBudgets{}, "", "")
			if err != nil {
				return cmdutil.Result{}, err
			}
			return withStore(ctx, o.db, func(s managed.Store) (cmdutil.Result, error) {
				return runManagedDeviceProbe(ctx, s, host, worker.ProbeRequest{Serial: serial, DeviceID: o.deviceID,
					Capabilities: o.capabilities.Value()}, o.labels.Value())
			})
		}),
	}
}

type managedProbeResult struct {
	Success bool           `json:"success"`
	Device  managed.Device `json:"device"`
	Doctor  any            `json:"doctor"`
	// ErrorCode and Error are the doctor's, when it did not pass.
	ErrorCode          string `json:"errorCode,omitempty"`
	Error              string `json:"error,omitempty"`
	UserActionRequired string `json:"userActionRequired,omitempty"`
}

// runManagedDeviceProbe probes one device and registers it: success when
// the doctor passed (healthy), a failure when not (degraded).
func runManagedDeviceProbe(ctx context.Context, s managed.Store, d worker.DeviceProber, req worker.ProbeRequest, labels []string) (cmdutil.Result, error) {
	var err error
	if req.Labels, err = parseLabels(labels); err != nil {
		return cmdutil.Result{}, err
	}
	dev, rep, err := worker.ProbeAndRegister(ctx, s, d, req)
	if err != nil {
		return cmdutil.Result{}, err
	}
	out := managedProbeResult{Success: rep.Ready, Device: dev, Doctor: rep.Doctor}
	if !rep.Ready {
		out.ErrorCode, out.Error, out.UserActionRequired = rep.ErrorCode, rep.Error, rep.UserAction
		if out.ErrorCode == "" {
			out.ErrorCode, out.Error = fault.CodeSolopiNotReady, "the doctor did not pass"
		}
		out.Error += "; the device is registered " + dev.Health
		return cmdutil.Failed(out), nil
	}
	return cmdutil.OK(out), nil
}

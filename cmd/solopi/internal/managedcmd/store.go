package managedcmd

import (
	"context"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/managed/devicehost"
)

// The store commands: managed-init, -health, -device-register,
// -device-list, -submit, -status, -events, -report, -cancel, -recover and
// -purge. None of them touches a device.

func newCmdHealth(e cmdutil.Env, name, usage string) *cli.Command {
	var db string
	open, desc := onStore, "Reads an existing store only: a path with no store is database_not_found (nothing is created),\n"+
		"a store not initialised or at an older schema is database_not_initialized (run managed-init)."
	if name == "managed-init" {
		open, desc = onNewStore, "Opens the store, creating and migrating it (River's tables and ours) when needed; a database of\n"+
			"SoloPi's Python host CLI is refused with unsupported_schema and left untouched."
	}
	return &cli.Command{
		Name: name, Usage: usage, UsageText: "solopi " + name + " [--database PATH|postgres://…]",
		Description: desc,
		Flags:       []cli.Flag{storeFlag(&db)},
		Action:      cmdutil.Local(e, open(&db, runManagedHealth)),
	}
}

func newCmdDeviceRegister(e cmdutil.Env) *cli.Command {
	var db string
	o := &managedRegisterOptions{}
	caps, labels := &cli.StringSlice{}, &cli.StringSlice{}
	return &cli.Command{
		Name:      "managed-device-register",
		Usage:     "register or update a device of the farm",
		UsageText: "solopi managed-device-register --device-id pixel-8 --device-serial SERIAL --api-level 34 [--capability agent]... [--label rack=r1]... [--health healthy]",
		Flags: []cli.Flag{storeFlag(&db),
			&cli.StringFlag{Name: "device-id", Destination: &o.deviceID, Required: true, Usage: "stable device id"},
			&cli.StringFlag{Name: "device-serial", Destination: &o.serial, Required: true, Usage: "exact adb serial"},
			&cli.IntFlag{Name: "api-level", Destination: &o.apiLevel, Required: true, Usage: "Android API level (> 0)"},
			&cli.StringSliceFlag{Name: "capability", Destination: caps, Usage: "a capability (repeatable)"},
			&cli.StringSliceFlag{Name: "label", Destination: labels, Usage: "a key=value label (repeatable)"},
			&cli.StringFlag{Name: "health", Destination: &o.health, Value: managed.HealthHealthy, Usage: "healthy, degraded, offline or quarantined"},
		},
		Action: cmdutil.Local(e, onNewStore(&db, func(ctx context.Context, s managed.Store) (cmdutil.Result, error) {
			o.capabilities, o.labels = caps.Value(), labels.Value()
			return runManagedDeviceRegister(ctx, s, *o)
		})),
	}
}

func newCmdDeviceList(e cmdutil.Env) *cli.Command {
	var db string
	return &cli.Command{
		Name: "managed-device-list", Usage: "list the farm's devices with capabilities, health and leases",
		UsageText: "solopi managed-device-list", Flags: []cli.Flag{storeFlag(&db)},
		Action: cmdutil.Local(e, onStore(&db, runManagedDeviceList)),
	}
}

func newCmdSubmit(e cmdutil.Env) *cli.Command {
	var db string
	o := &managedSubmitOptions{sub: managed.NewSubmission(), validate: devicehost.ValidatePlan}
	return &cli.Command{
		Name:  "managed-submit",
		Usage: "submit a verification plan against a device matrix, idempotently",
		UsageText: "solopi managed-submit --plan plan.json --matrix matrix.json --idempotency-key ci-123 [--agent-decisions d.json]\n" +
			"  [--owner-token TOKEN] [--max-retries 1] [--lease-duration-ms 60000] [--retention-ms 604800000]\n\nExample:\n  solopi managed-submit --database postgres://ci@db/solopi --plan login.plan.json --matrix matrix.json --idempotency-key \"$CI_PIPELINE_ID\"",
		Description: "The plan is validated first. Without --owner-token one is generated and printed once, in\n" +
			"ownerToken: keep it to cancel the task, it is never shown again. Resubmitting the same request\n" +
			"with the same key and owner returns the task with idempotent:true.",
		Flags: []cli.Flag{storeFlag(&db),
			&cli.StringFlag{Name: "plan", Destination: &o.plan, Required: true, Usage: "a solopi.ai.verification-plan/v1 file"},
			&cli.StringFlag{Name: "matrix", Destination: &o.matrix, Required: true, Usage: "a device matrix file: [{id, replicas?, selector?}]"},
			&cli.StringFlag{Name: "agent-decisions", Destination: &o.decisions, Usage: "static agent decisions for explore segments"},
			&cli.StringFlag{Name: "idempotency-key", Destination: &o.sub.IdempotencyKey, Required: true, Usage: "the caller's key for this submission"},
			ownerTokenFlag(&o.sub.OwnerToken, false, "the task's owner token, 16-256 URL-safe characters (default: generated and printed once)"),
			&cli.IntFlag{Name: "max-retries", Destination: &o.sub.MaxRetries, Value: managed.DefaultMaxRetries, Usage: "retries of infrastructure failures per shard (0-10)"},
			&cli.Int64Flag{Name: "lease-duration-ms", Destination: &o.sub.LeaseDurationMs, Value: managed.DefaultLeaseDurationMs, Usage: "device lease per heartbeat (1000-1800000)"},
			&cli.Int64Flag{Name: "retention-ms", Destination: &o.sub.RetentionMs, Value: managed.DefaultRetentionMs, Usage: "how long raw evidence is kept after the task ends"},
		},
		Action: cmdutil.Local(e, onNewStore(&db, func(ctx context.Context, s managed.Store) (cmdutil.Result, error) {
			return runManagedSubmit(ctx, s, *o)
		})),
	}
}

func newCmdStatus(e cmdutil.Env) *cli.Command {
	var db, taskID string
	return &cli.Command{
		Name: "managed-status", Usage: "show a task and its shards by status",
		UsageText: "solopi managed-status --task-id task-…", Flags: []cli.Flag{storeFlag(&db), taskIDFlag(&taskID)},
		Action: cmdutil.Local(e, onStore(&db, func(ctx context.Context, s managed.Store) (cmdutil.Result, error) {
			return runManagedStatus(ctx, s, taskID)
		})),
	}
}

func newCmdEvents(e cmdutil.Env) *cli.Command {
	var db, taskID string
	var after int64
	return &cli.Command{
		Name: "managed-events", Usage: "read a task's append-only event log",
		UsageText: "solopi managed-events --task-id task-… [--after-sequence N]",
		Flags: []cli.Flag{storeFlag(&db), taskIDFlag(&taskID),
			&cli.Int64Flag{Name: "after-sequence", Destination: &after, Usage: "only events whose taskSequence is greater"}},
		Action: cmdutil.Local(e, onStore(&db, func(ctx context.Context, s managed.Store) (cmdutil.Result, error) {
			return runManagedEvents(ctx, s, taskID, after)
		})),
	}
}

func newCmdCancel(e cmdutil.Env) *cli.Command {
	var db, taskID, token string
	return &cli.Command{
		Name:        "managed-cancel",
		Usage:       "cancel a task: fence its attempts and stop the workers running it",
		UsageText:   "solopi managed-cancel --task-id task-… --owner-token TOKEN",
		Description: "Needs the task's owner token. A task that already ended is returned unchanged with idempotent:true.",
		Flags:       []cli.Flag{storeFlag(&db), taskIDFlag(&taskID), ownerTokenFlag(&token, true, "the owner token the task was submitted with")},
		Action: cmdutil.Local(e, onStore(&db, func(ctx context.Context, s managed.Store) (cmdutil.Result, error) {
			return runManagedCancel(ctx, s, taskID, token)
		})),
	}
}

func newCmdRecover(e cmdutil.Env) *cli.Command {
	var db string
	return &cli.Command{
		Name: "managed-recover", Usage: "expire overdue leases now (workers' River leader does it every few seconds)",
		UsageText: "solopi managed-recover", Flags: []cli.Flag{storeFlag(&db)},
		Action: cmdutil.Local(e, onStore(&db, runManagedRecover)),
	}
}

func newCmdPurge(e cmdutil.Env) *cli.Command {
	var db, host string
	roots := &cli.StringSlice{}
	return &cli.Command{
		Name:  "managed-purge",
		Usage: "delete raw evidence past its retention that this host's workers wrote",
		UsageText: "solopi managed-purge --artifacts-root DIR [--artifacts-root DIR]... [--host NAME]\n\n" +
			"Digests, verdicts and reports stay in the store; evidence other hosts wrote is listed under\n" +
			"elsewhere and left for their own purge.",
		Flags: []cli.Flag{storeFlag(&db), hostFlag(&host),
			&cli.StringSliceFlag{Name: "artifacts-root", Destination: roots, Usage: "the workers' --artifacts-root on this host (repeatable)"}},
		Action: cmdutil.Local(e, onStore(&db, func(ctx context.Context, s managed.Store) (cmdutil.Result, error) {
			return runManagedPurge(ctx, s, host, roots.Value())
		})),
	}
}

type managedHealthResult struct {
	Success bool `json:"success"`
	managed.Health
}

func runManagedHealth(ctx context.Context, s managed.Store) (cmdutil.Result, error) {
	h, err := s.Health(ctx)
	if err != nil {
		return cmdutil.Result{}, err
	}
	return cmdutil.OK(managedHealthResult{Success: true, Health: h}), nil
}

type managedRegisterOptions struct {
	deviceID, serial, health string
	apiLevel                 int
	capabilities, labels     []string
}

type managedDeviceResult struct {
	Success bool           `json:"success"`
	Device  managed.Device `json:"device"`
}

func runManagedDeviceRegister(ctx context.Context, s managed.Store, o managedRegisterOptions) (cmdutil.Result, error) {
	labels, err := parseLabels(o.labels)
	if err != nil {
		return cmdutil.Result{}, err
	}
	if o.apiLevel < 1 {
		return cmdutil.Result{}, fault.Usage(fault.CodeInvalidOption, "--api-level must be a positive integer")
	}
	d, err := s.RegisterDevice(ctx, managed.DeviceSpec{DeviceID: o.deviceID, Serial: o.serial, APILevel: o.apiLevel,
		Capabilities: o.capabilities, Labels: labels, Health: o.health})
	if err != nil {
		return cmdutil.Result{}, err
	}
	return cmdutil.OK(managedDeviceResult{Success: true, Device: d}), nil
}

// parseLabels reads repeated --label key=value flags; an empty part or a
// repeated key is refused.
func parseLabels(raw []string) (map[string]string, error) {
	out := map[string]string{}
	for _, l := range raw {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" || v == "" {
			return nil, fault.Usage(fault.CodeInvalidLabel, "a device label must be key=value").With("label", l)
		}
		if _, dup := out[k]; dup {
			return nil, fault.Usage(fault.CodeInvalidLabel, "a device label key is repeated").With("label", l)
		}
		out[k] = v
	}
	return out, nil
}

type managedDeviceListResult struct {
	Success bool             `json:"success"`
	Count   int              `json:"count"`
	Devices []managed.Device `json:"devices"`
}

func runManagedDeviceList(ctx context.Context, s managed.Store) (cmdutil.Result, error) {
	ds, err := s.Devices(ctx)
	if err != nil {
		return cmdutil.Result{}, err
	}
	if ds == nil {
		ds = []managed.Device{}
	}
	return cmdutil.OK(managedDeviceListResult{Success: true, Count: len(ds), Devices: ds}), nil
}

type managedSubmitOptions struct {
	plan, matrix, decisions string
	sub                     managed.Submission
	// validate is the plan check managed-submit runs first (the
	// verification engine's, where available).
	validate managed.PlanValidator
}

type managedTaskResult struct {
	Success bool `json:"success"`
	managed.Task
}

func runManagedSubmit(ctx context.Context, s managed.Store, o managedSubmitOptions) (cmdutil.Result, error) {
	var err error
	sub := o.sub
	if sub.Plan, err = readJSONFile(o.plan, "plan"); err != nil {
		return cmdutil.Result{}, err
	}
	if err := o.validate(sub.Plan); err != nil {
		return cmdutil.Result{}, err
	}
	if sub.Matrix, err = readJSONFile(o.matrix, "matrix"); err != nil {
		return cmdutil.Result{}, err
	}
	if o.decisions != "" {
		if sub.Decisions, err = readJSONFile(o.decisions, "agent-decisions"); err != nil {
			return cmdutil.Result{}, err
		}
	}
	task, err := s.Submit(ctx, sub)
	if err != nil {
		return cmdutil.Result{}, err
	}
	return cmdutil.OK(managedTaskResult{Success: true, Task: task}), nil
}

// readJSONFile reads a JSON input file as the generic tree canonical
// fingerprints are computed over.
func readJSONFile(path, flag string) (any, error) {
	b, err := cmdutil.ReadInput(path, "--"+flag)
	if err != nil {
		return nil, err
	}
	v, err := canonjson.Decode(b)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, fault.CodeInvalidJSON, "the --"+flag+" file is not valid JSON", err).With("file", path)
	}
	return v, nil
}

type managedStatusResult struct {
	Success bool `json:"success"`
	managed.TaskStatus
}

func runManagedStatus(ctx context.Context, s managed.Store, taskID string) (cmdutil.Result, error) {
	st, err := s.Status(ctx, taskID)
	if err != nil {
		return cmdutil.Result{}, err
	}
	return cmdutil.OK(managedStatusResult{Success: true, TaskStatus: st}), nil
}

type managedEventsResult struct {
	Success bool            `json:"success"`
	TaskID  string          `json:"taskId"`
	Events  []managed.Event `json:"events"`
}

func runManagedEvents(ctx context.Context, s managed.Store, taskID string, after int64) (cmdutil.Result, error) {
	evs, err := s.Events(ctx, taskID, after)
	if err != nil {
		return cmdutil.Result{}, err
	}
	return cmdutil.OK(managedEventsResult{Success: true, TaskID: taskID, Events: evs}), nil
}

func runManagedCancel(ctx context.Context, s managed.Store, taskID, ownerToken string) (cmdutil.Result, error) {
	task, err := s.Cancel(ctx, taskID, ownerToken)
	if err != nil {
		return cmdutil.Result{}, err
	}
	return cmdutil.OK(managedTaskResult{Success: true, Task: task}), nil
}

type managedRecoverResult struct {
	Success bool `json:"success"`
	managed.Recovery
}

func runManagedRecover(ctx context.Context, s managed.Store) (cmdutil.Result, error) {
	r, err := s.Recover(ctx)
	if err != nil {
		return cmdutil.Result{}, err
	}
	return cmdutil.OK(managedRecoverResult{Success: true, Recovery: r}), nil
}

type managedPurgeResult struct {
	Success bool   `json:"success"`
	Host    string `json:"host"`
	managed.PurgeResult
}

func runManagedPurge(ctx context.Context, s managed.Store, host string, roots []string) (cmdutil.Result, error) {
	if len(roots) == 0 {
		return cmdutil.Result{}, fault.Usage(fault.CodeInvalidOption, "--artifacts-root is required (the workers' evidence root on this host)")
	}
	r, err := managed.Purge(ctx, s, host, roots)
	if err != nil {
		return cmdutil.Result{}, err
	}
	return cmdutil.OK(managedPurgeResult{Success: true, Host: host, PurgeResult: r}), nil
}

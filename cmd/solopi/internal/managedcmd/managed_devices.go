package managedcmd

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/verifycmd"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/managed/worker"
	"github.com/solopi-dev/solopi/report"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/readiness"
	"github.com/solopi-dev/solopi/verify"
	"github.com/solopi-dev/solopi/verify/execution"
)

// Error codes of the managed device commands.
const (
	// codeAPILevelUnreadable: getprop ro.build.version.sdk printed no
	// integer (exit 4, as solopi-ai).
	codeAPILevelUnreadable = "api_level_unreadable"
	// CodeVisionNotSupported: a plan with vision oracles was submitted
	// to the farm, or reached a worker.
	CodeVisionNotSupported = "vision_not_supported"
)

// hostDevices are the devices this host's adb server sees (the globals'
// --adb-server-port), as the managed worker and managed-device-probe use
// them: every device operation is bound to exactly one serial.
type hostDevices struct{ g *cmdutil.Globals }

var _ managedDevices = hostDevices{}

// OnlineSerials lists the serials the adb server reports in state
// "device".
func (h hostDevices) OnlineSerials(ctx context.Context) ([]string, error) {
	if h.g.Env.Transport != nil {
		t, err := h.g.Env.Transport(ctx)
		if err != nil {
			return nil, err
		}
		return []string{t.Serial()}, nil
	}
	c, err := h.g.AdbClient()
	if err != nil {
		return nil, err
	}
	lctx, cancel := context.WithTimeout(ctx, cmdutil.SelectTimeout)
	defer cancel()
	list, err := c.Devices(lctx)
	if err != nil {
		return nil, cmdutil.MapAdbError(err, "")
	}
	var out []string
	for _, d := range list {
		if d.State == "device" {
			out = append(out, d.Serial)
		}
	}
	return out, nil
}

// ProbeDevice reads the API level and runs the doctor on exactly serial.
func (h hostDevices) ProbeDevice(ctx context.Context, serial string) (worker.ProbeReport, error) {
	d := h.g.DepsOn(serial)
	t, err := d.Transport(ctx)
	if err != nil {
		return worker.ProbeReport{}, err
	}
	level, err := apiLevel(ctx, t)
	if err != nil {
		return worker.ProbeReport{}, err
	}
	r, err := readiness.Doctor(ctx, t, readiness.DoctorOptions{Session: d.SessionOptions(false), Device: d.Device(ctx, t)})
	if err != nil {
		return worker.ProbeReport{APILevel: level}, err
	}
	return worker.ProbeReport{APILevel: level, Installed: r.Installed, Ready: r.Ready, Doctor: r}, nil
}

// apiLevel is the device's ro.build.version.sdk.
func apiLevel(ctx context.Context, t device.Transport) (int, error) {
	stdout, _, code, err := t.Shell(ctx, device.ShellJoin("getprop", "ro.build.version.sdk"))
	if err != nil {
		return 0, err
	}
	v := strings.TrimSpace(string(stdout))
	n, convErr := strconv.Atoi(v)
	if code != 0 || convErr != nil || n < 1 {
		return 0, fault.New(fault.Transport, codeAPILevelUnreadable, "the device did not report its API level (getprop ro.build.version.sdk)").
			With("serial", t.Serial()).With("output", v)
	}
	return n, nil
}

// Executor runs shards with verify-run under b.
func (h hostDevices) Executor(b verifycmd.RunBudgets) worker.ShardExecutor {
	return shardVerifier{g: h.g, budgets: b}
}

// shardVerifier runs a shard as verify-run does, in this process: the
// assignment's plan with its static decisions, on exactly the leased
// serial, evidence in the attempt's directory.
type shardVerifier struct {
	g       *cmdutil.Globals
	budgets verifycmd.RunBudgets
}

// ExecuteShard runs the shard. A cancelled ctx cancels exactly the replay
// or Agent session that is active (verify/onphone) and returns an
// interrupt; the worker then writes what the cause calls for.
func (v shardVerifier) ExecuteShard(ctx context.Context, run worker.ShardRun) (worker.ShardVerdict, error) {
	a := run.Assignment
	o := execution.RunOptions{Plan: a.Plan, Artifacts: run.ArtifactsDir, DecisionsJSON: a.Decisions,
		Provider: execution.ProviderOptions{Name: execution.ProviderStatic}, Setup: refuseVision}
	sum, err := verifycmd.VerifyOnPhone(ctx, v.g.DepsOn(a.Serial), o, v.budgets, nil)
	switch {
	case err != nil && slices.Contains(selectionCodes, fault.CodeOf(err)):
		// The adb server listed the device when the shard was claimed: one
		// that is gone or unusable now is an infrastructure failure the
		// task's retries cover, not a usage error.
		return worker.ShardVerdict{}, fault.Wrap(fault.Transport, fault.CodeOf(err), "the leased device is no longer usable: "+fault.From(err).Message, err).
			With("serial", a.Serial)
	case err != nil:
		return worker.ShardVerdict{}, err
	case sum.Interrupted:
		return worker.ShardVerdict{}, fault.New(fault.Interrupted, fault.CodeInterrupted, "the shard's run was interrupted").With("report", sum.Report)
	}
	// The attempt's evidence gets its report.html as verify-run's does; the
	// verdict stands without it.
	cmdutil.ReportOf(run.ArtifactsDir, report.Options{}, nil)
	reportJSON, err := os.ReadFile(sum.Report)
	if err != nil {
		return worker.ShardVerdict{}, fault.Wrap(fault.Internal, "report_unreadable", "cannot read the verification report verify-run wrote", err).
			With("report", sum.Report)
	}
	return worker.ShardVerdict{Status: sum.Status, ReportPath: sum.Report, Report: reportJSON}, nil
}

// selectionCodes are device selection's refusals (usage errors for a
// command the user pointed at a device).
var selectionCodes = []string{cmdutil.CodeNoDevice, cmdutil.CodeDeviceNotFound, cmdutil.CodeDeviceOffline, cmdutil.CodeDeviceUnauthorized, cmdutil.CodeDeviceNotReady}

// refuseVision is a worker's Setup: managed work runs with the task's
// static decisions and no model, so a plan with vision oracles is refused
// (managed-submit refuses it first; see planValidator).
func refuseVision(plan *verify.Plan) (execution.DecisionProvider, execution.VisionJudge, error) {
	if plan.HasVision() {
		return nil, nil, visionNotSupported()
	}
	return nil, nil, nil
}

func visionNotSupported() *fault.Error {
	return fault.New(fault.Invalid, CodeVisionNotSupported,
		"the plan has vision oracles, which need a model: managed tasks run with static decisions and no model").
		WithUserAction("run plans with vision oracles with verify-run and the planner's model flags")
}

// planValidator is the plan check of managed-submit and managed-serve: the
// whole of verify-validate, so that a farm never runs a plan verify-run
// would refuse, and no vision oracles (see refuseVision).
func planValidator(plan any) error {
	b, err := canonjson.Marshal(plan)
	if err != nil {
		return fault.Wrap(fault.Invalid, verify.CodeInvalidJSON, "the plan has a value canonical JSON cannot represent", err)
	}
	p, _, err := verify.LoadPlan(b)
	if err != nil {
		return err
	}
	if p.HasVision() {
		return visionNotSupported()
	}
	return nil
}

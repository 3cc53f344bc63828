package devicehost

import (
	"context"
	"os"
	"slices"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/managed/worker"
	"github.com/solopi-dev/solopi/report"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/verify"
	"github.com/solopi-dev/solopi/verify/execution"
	"github.com/solopi-dev/solopi/verify/onphone"
)

// CodeVisionNotSupported: a plan with vision oracles was submitted to the
// farm, or reached a worker.

// ExecuteShard runs the shard as verify-run does, in this process: the
// assignment's plan with its static decisions, on exactly the leased
// serial, evidence in the attempt's directory. A cancelled ctx cancels
// exactly the replay or Agent session that is active (verify/onphone) and
// returns an interrupt; the worker then writes what the cause calls for.
func (h Host) ExecuteShard(ctx context.Context, run worker.ShardRun) (worker.ShardVerdict, error) {
	a := run.Assignment
	o := execution.RunOptions{Plan: a.Plan, Artifacts: run.ArtifactsDir, DecisionsJSON: a.Decisions,
		Provider: execution.ProviderOptions{Name: execution.ProviderStatic}, Setup: refuseVision, Video: h.Video}
	open := func(ctx context.Context) (*device.Session, error) {
		t, err := h.Devices.Bind(ctx, a.Serial)
		if err != nil {
			return nil, err
		}
		s, err := device.OpenSession(ctx, t, h.sessionOptions(true))
		if err != nil {
			return nil, err
		}
		if err := h.cancelOrphanReplay(ctx, s.Device); err != nil {
			s.Close()
			return nil, err
		}
		return s, nil
	}
	b := h.Budgets
	b.Phone.Progress = nil
	rec := h.startPerf(ctx, a.Serial, a.Plan)
	sum, err := onphone.Verify(ctx, open, o, b, nil)
	h.finishPerf(ctx, a.Serial, rec, run.ArtifactsDir)
	switch {
	case err != nil && slices.Contains(device.SelectionCodes, fault.CodeOf(err)):
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
	_, _ = report.Write(run.ArtifactsDir, report.Options{})
	reportJSON, err := os.ReadFile(sum.Report)
	if err != nil {
		return worker.ShardVerdict{}, fault.Wrap(fault.Internal, fault.CodeReportUnreadable, "cannot read the verification report verify-run wrote", err).
			With("report", sum.Report)
	}
	return worker.ShardVerdict{Status: sum.Status, ReportPath: sum.Report, Report: reportJSON,
		Infrastructure: infrastructureReason(reportJSON)}, nil
}

// refuseVision is a worker's Setup: managed work runs with the task's
// static decisions and no model, so a plan with vision oracles is refused
// (ValidatePlan refuses it at submission first).
func refuseVision(plan *verify.Plan) (execution.DecisionProvider, execution.VisionJudge, error) {
	if plan.HasVision() {
		return nil, nil, visionNotSupported()
	}
	return nil, nil, nil
}

func visionNotSupported() *fault.Error {
	return fault.New(fault.Invalid, fault.CodeVisionNotSupported,
		"the plan has vision oracles, which need a model: managed tasks run with static decisions and no model").
		WithUserAction("run plans with vision oracles with verify-run and the planner's model flags")
}

// ValidatePlan is the plan check of a farm's submissions (managed-submit,
// the control plane): the whole of verify-validate, so that a farm never
// runs a plan verify-run would refuse, and no vision oracles.
func ValidatePlan(plan any) error {
	b, err := canonjson.Marshal(plan)
	if err != nil {
		return fault.Wrap(fault.Invalid, fault.CodeInvalidJSON, "the plan has a value canonical JSON cannot represent", err)
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

package execution

import (
	"context"
	"path/filepath"
	"slices"
	"strings"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/verify"
)

// fixed runs a deterministic segment: write the compiled case, import it
// (replacing any case of that name), replay it, and keep every answer and
// replay file as evidence. The segment is passed or failed only when the
// replay ran the case's steps to that verdict; anything else (a refused or
// unreachable import, a replay that never started, did not finish or was
// cut off) is not_tested, in every phase: a cleanup that could not run did
// not fail.
func (r *run) fixed(ctx context.Context, sc *verify.Scenario, seg *verify.Segment, tr *segmentTrace) (*verify.SegmentOutcome, error) {
	o := &verify.SegmentOutcome{}
	dir, err := r.a.segmentDir(seg.ID)
	if err != nil {
		return nil, err
	}
	casePath := filepath.Join(dir, "compiled-case.json")
	ev, err := r.a.writeJSON(casePath, seg.Case.Tree(), "compiled_solopi_case")
	if err != nil {
		return nil, err
	}
	o.Evidence = append(o.Evidence, ev)

	imp, ierr := r.p.Runner.ImportCase(ctx, seg.Case, casePath)
	if imp.Receipt == nil && ierr != nil {
		imp.Receipt = fault.From(ierr).Fields()
	}
	if imp.Receipt != nil {
		ev, err := r.a.writeJSON(filepath.Join(dir, "import-receipt.json"), imp.Receipt, "case_import_receipt")
		if err != nil {
			return nil, err
		}
		o.Evidence = append(o.Evidence, ev)
	}
	switch {
	case fault.IsInterrupt(ierr):
		return o, ierr
	case ierr != nil && fault.KindOf(ierr) != fault.Failed:
		o.State, o.Reason, o.Error = verify.NotTested, verify.ReasonAdapterError, fault.From(ierr).Error()
		return o, nil
	case ierr != nil || !imp.OK:
		o.State, o.Reason = verify.NotTested, verify.ReasonCaseImportFailed
		return o, nil
	}

	restart := r.e.RestartApp
	if seg.Phase == verify.PhaseCleanup {
		no := false
		restart = &no
	}
	res, rerr := r.p.Runner.RunCase(ctx, RunRequest{
		CaseName: seg.Case.Name, TargetPackage: sc.TargetAppPackage, RestartApp: restart,
		ArtifactsDir: filepath.Join(dir, "replay"), SecretParams: seg.Case.SecretParams(r.secrets),
	})
	if res.Response == nil && rerr != nil {
		res.Response = fault.From(rerr).Fields()
	}
	tr.steps = replaySteps(res.Response, r.rec.StartedAt, tr.startedAt, r.e.Clock.Now().UnixMilli())
	if res.Response != nil {
		ev, err := r.a.writeJSON(filepath.Join(dir, "run-response.json"), res.Response, "replay_result")
		if err != nil {
			return nil, err
		}
		o.Evidence = append(o.Evidence, ev)
	}
	names := make([]string, 0, len(res.Files))
	for name := range res.Files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		// A device file (device/<path>) is of type replay_device.
		typ, _, _ := strings.Cut(name, "/")
		ev, err := r.a.fileEvidence(res.Files[name], "replay_"+typ, name == "logcat")
		if err != nil {
			return nil, err
		}
		o.Evidence = append(o.Evidence, ev)
	}
	if fault.IsInterrupt(rerr) {
		return o, rerr
	}
	o.State, o.Reason = replayVerdict(res, rerr)
	if rerr != nil && o.State == verify.NotTested {
		o.Error = fault.From(rerr).Error()
	}
	if o.State == verify.StateFailed {
		o.FailedStepID = failedStep(res.Response)
	}
	if o.State == verify.StatePassed || o.State == verify.StateFailed {
		if screen := res.Files["screenshot"]; screen != "" {
			var err error
			if o.Vision, err = r.reviewVision(ctx, sc, seg, screen, dir); err != nil {
				return o, err
			}
		}
	}
	return o, nil
}

// replayVerdict is a replay's state and reason as the segment's. The
// response's passed stands when the run answered without an error, its
// failed when the error is the failed verdict itself (kind Failed); a
// case the device never started is replay_not_started, a broken channel
// or an expired budget replay_transport_failed, and a run that ended
// without a verdict (cancelled by someone else, replaced, not terminal)
// replay_not_terminal.
func replayVerdict(res RunResult, err error) (state, reason string) {
	st, _ := res.Response["state"].(string)
	switch {
	case res.NotStarted:
		return verify.NotTested, verify.ReasonReplayNotStarted
	case st == verify.StatePassed && err == nil:
		return verify.StatePassed, ""
	case st == verify.StateFailed && (err == nil || fault.KindOf(err) == fault.Failed):
		return verify.StateFailed, ""
	case err != nil && fault.KindOf(err) != fault.Failed:
		return verify.NotTested, verify.ReasonReplayTransport
	}
	return verify.NotTested, verify.ReasonReplayNotTerminal
}

// failedStep is the first non-empty results[].exceptionStepId of a run.
func failedStep(response map[string]any) string {
	results, _ := response["results"].([]any)
	for _, r := range results {
		m, _ := r.(map[string]any)
		if id, ok := m["exceptionStepId"].(string); ok && id != "" {
			return id
		}
	}
	return ""
}

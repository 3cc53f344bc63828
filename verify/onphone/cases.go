package onphone

import (
	"context"
	"path/filepath"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/replay"
	"github.com/solopi-dev/solopi/verify"
	"github.com/solopi-dev/solopi/verify/execution"
)

// ImportCase imports the compiled case file as `case-import --file F
// --replace` does: checked and normalised locally without high-risk
// confirmation, staged under a random name, the receipt polled, the staged
// file removed. The receipt is the command's answer: the device's receipt
// with requestId, cleanup and confirmedHighRiskSteps, or the error with
// them. A device refusal is a Failed error (case_import_failed); a staged
// file that could not be removed makes the import unsuccessful too.
func (p *Phone) ImportCase(ctx context.Context, compiled *verify.Case, _ string) (execution.ImportResult, error) {
	c, err := compiledCase(compiled)
	if err != nil {
		return execution.ImportResult{}, err
	}
	n, hr, err := casefile.Normalize(c, casefile.NormalizeOptions{})
	if err != nil {
		return execution.ImportResult{}, caseError(err)
	}
	if hr == nil {
		hr = []casefile.HighRiskStep{}
	}
	rep, err := replay.ImportCase(ctx, p.dev, n, replay.ImportOptions{Replace: true, Timeout: p.o.ImportTimeout, PollInterval: p.o.PollInterval})
	if err != nil {
		e := fault.From(err).With("caseName", n.CaseName)
		if rep != nil {
			e.With("requestId", rep.RequestID).With("cleanup", rep.Cleanup)
		}
		return execution.ImportResult{Receipt: e.Fields()}, e
	}
	out := map[string]any{}
	for k, v := range rep.Receipt {
		out[k] = v
	}
	out["requestId"], out["cleanup"], out["confirmedHighRiskSteps"] = rep.RequestID, rep.Cleanup, hr
	if !rep.Cleanup.Done() {
		out["success"], out["errorCode"] = false, fault.CodeStagingCleanupFailed
		out["error"] = "the case was imported but the staged file could not be confirmed removed"
		return execution.ImportResult{Receipt: tree(out)}, nil
	}
	return execution.ImportResult{Receipt: tree(out), OK: true}, nil
}

// compiledCase is the compiled case as case-import reads a case file, with
// its checks: well-formed JSON without duplicate keys, the case shape,
// parsed. It is taken from the plan, not from the segment's
// compiled-case.json: that copy is evidence, with the requirement's
// secrets hidden.
func compiledCase(compiled *verify.Case) (*casefile.Case, error) {
	b, err := canonjson.Marshal(compiled.Tree())
	if err != nil {
		return nil, fault.Wrap(fault.Internal, fault.CodeCompiledCaseInvalid, "cannot encode the compiled case", err)
	}
	if err := casefile.CheckJSON(b); err != nil {
		return nil, caseError(err)
	}
	doc, err := canonjson.Decode(b)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, fault.CodeCompiledCaseInvalid, "the compiled case is not JSON", err)
	}
	if v := casefile.CheckShape(doc); len(v) > 0 {
		return nil, fault.Usage(fault.CodeCompiledCaseInvalid, "the compiled case does not match the SoloPi case schema").With("violations", v[:min(len(v), 20)])
	}
	c, err := casefile.Parse(b)
	if err != nil {
		return nil, caseError(err)
	}
	return c, nil
}

func caseError(err error) error {
	if e := replay.CaseFileError(err); e != nil {
		return e
	}
	return err
}

// RunCase replays the case like `run --case NAME --target-package PKG
// --artifacts DIR`: the exact case read back, auto-start on (and put
// back), only our run claimed, its evidence collected. The response is
// the command's answer. A replay that failed is a Failed error with its
// response; an interrupt of ctx cancels exactly our run and is the
// interrupt error; a run cancelled by someone else (a Failed error) or a
// timeout is a replay that did not finish (not an interrupt of this
// verification); a case the device never began is NotStarted.
func (p *Phone) RunCase(ctx context.Context, req execution.RunRequest) (execution.RunResult, error) {
	o := replay.RunOptions{
		CaseName: req.CaseName, TargetPackage: req.TargetPackage, RestartApp: req.RestartApp,
		AckTimeout: p.o.AckTimeout, RunTimeout: p.o.RunTimeout, PollInterval: p.o.PollInterval,
		ArtifactsDir: req.ArtifactsDir, Progress: p.o.Progress,
		// A compiled case encrypts nothing: its oracle values are evidence,
		// not secrets, and must show in the replay's messages. Only what
		// the requirement marks secret is hidden.
		Encrypted: &req.SecretParams,
	}
	if req.SecretParams == nil {
		o.Encrypted = &[]casefile.ParamRef{}
	}
	if err := o.Validate(); err != nil {
		return execution.RunResult{}, err
	}
	rep := replay.RunReplay(ctx, p.dev, o)
	res := execution.RunResult{Response: tree(rep.Payload), Files: replayFiles(rep.Artifacts)}
	if rep.Err == nil {
		return res, nil
	}
	res.NotStarted = notStarted[rep.Err.Code]
	if fault.IsInterrupt(rep.Err) && ctx.Err() == nil {
		// Cancelled on the device by someone else: not our interrupt, a
		// replay that ended without a verdict.
		return res, fault.Wrap(fault.Failed, rep.Err.Code, rep.Err.Message, rep.Err)
	}
	return res, rep.Err
}

// notStarted are the replay errors of a case the device never began: the
// control lease or the replay slot was someone else's, or SoloPi was not
// set up to replay.
var notStarted = map[string]bool{
	fault.CodeLeaseConflict: true, fault.CodeReplayActive: true, fault.CodeOwnershipConflict: true,
	fault.CodeDeviceNotReady: true, fault.CodePluginsUnavailable: true, fault.CodeAutoStartNotConfirmed: true,
}

// replayFiles are the evidence files of a replay by solopi-ai's names
// (result, screenshot, logcat), plus the manifest and each device file
// (device/<path>, evidence type replay_device).
func replayFiles(a *replay.RunArtifacts) map[string]string {
	if a == nil {
		return nil
	}
	files := map[string]string{}
	for name, path := range map[string]string{"result": a.Result, "screenshot": a.Screenshot, "logcat": a.Logcat, "manifest": a.Manifest} {
		if path != "" {
			files[name] = path
		}
	}
	for _, f := range a.DeviceFiles {
		files[f.Path] = filepath.Join(a.Dir, filepath.FromSlash(f.Path))
	}
	return files
}

package soloapp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

var replayMachine = protocol.Replay()

// replayLiveLocked reports whether a harness replay of p is live (history
// refuses to delete replay records meanwhile).
func replayLiveLocked(p *core.Process) bool {
	r := st(p).harness
	return r != nil && replayMachine.IsLive(r.state)
}

// harnessRun is the process-wide HarnessState slot
// (docs/device-protocol.md#replay). Its state changes only through
// replayMachine.Step.
type harnessRun struct {
	runID, requestID, caseName string
	state                      protocol.State
	startedAt, finishedAt      int64
	err                        string
	results                    []core.Obj
	leaseOwner                 string
	// managerRunning is true once the replay manager started; a cancel
	// before that publishes cancelled at once.
	managerRunning bool
	// stop asks the running manager to stop.
	stop context.CancelFunc
}

// runSnapshotLocked is the harness?type=status snapshot.
func (a *App) runSnapshotLocked(p *core.Process) core.Obj {
	r := st(p).harness
	if r == nil {
		return core.OK("state", string(protocol.ReplayIdle), "active", false, "terminal", false, "results", []core.Obj{})
	}
	o := core.OK()
	o.Set("runId", r.runID)
	if r.requestID != "" {
		o.Set("requestId", r.requestID)
	}
	o.Set("caseName", r.caseName)
	o.Set("state", string(r.state))
	o.Set("active", replayMachine.IsLive(r.state))
	o.Set("terminal", replayMachine.IsTerminal(r.state))
	if r.startedAt != 0 {
		o.Set("startedAt", r.startedAt)
		end := r.finishedAt
		if end == 0 {
			end = a.NowMs()
		}
		if r.finishedAt != 0 {
			o.Set("finishedAt", r.finishedAt)
		}
		o.Set("durationMs", end-r.startedAt)
	} else if r.finishedAt != 0 {
		o.Set("finishedAt", r.finishedAt)
	}
	if r.err != "" {
		o.Set("error", r.err)
	}
	results := make([]core.Obj, len(r.results))
	copy(results, r.results)
	o.Set("results", results)
	return o
}

// stepRunLocked moves the run through ev; on a terminal state it stamps
// finishedAt and releases the lease. False when the table forbids ev (for
// example a late failure of a run that was already cancelled).
func (a *App) stepRunLocked(p *core.Process, r *harnessRun, ev protocol.Event, errMsg string) bool {
	next, err := replayMachine.Step(r.state, ev)
	if err != nil {
		return false
	}
	r.state = next
	if replayMachine.IsTerminal(next) {
		r.finishedAt = a.NowMs()
		if next == protocol.ReplayFailed {
			r.err = errMsg
		}
		p.Lease.Release(r.leaseOwner)
		if r.stop != nil {
			r.stop()
		}
	}
	return true
}

// replay is the replay resolver (docs/device-protocol.md#replay). Every
// rejection is E3 and invisible; the checks after the lease (case snapshot,
// identity, target app, permissions, manager start) fail the published run
// visibly.
func (a *App) replay(_ context.Context, p *core.Process, via core.Transport, q core.Params) core.Obj {
	if via != core.ViaAdb {
		return core.E3("Replay is only available through the ADB scheme transport")
	}
	mode := q["replayMode"]
	if mode == "" {
		return core.E3("Parameter 'replayMode' is required")
	}
	if mode != protocol.ReplayModeNormal {
		return core.E3("Unsupported replay mode: " + mode)
	}
	caseName := q["caseName"]
	if caseName == "" {
		return core.E3("Parameter 'caseName' is required")
	}
	requestID := q["requestId"]
	if !protocol.ValidID(requestID, 128) {
		return core.E3("Parameter 'requestId' is invalid")
	}
	rawID := q["caseId"]
	if rawID == "" {
		return core.E3("Parameter 'caseId' is required")
	}
	caseID, okID := core.JavaParseLong(rawID)
	if !okID || caseID <= 0 {
		return core.E3("Parameter 'caseId' must be a positive integer")
	}
	fp := q["caseFingerprint"]
	if !protocol.ValidHex(fp, 64, false) {
		return core.E3("Parameter 'caseFingerprint' must be a lowercase SHA-256 value")
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if a.P != p {
		return core.E3("A replay is already running")
	}
	if r := st(p).harness; r != nil && replayMachine.IsLive(r.state) {
		return core.E3("A replay is already running")
	}
	restart := a.BoolSetting(core.KeyRestartAppOnPlay)
	if raw := q["restartApp"]; raw != "" {
		switch strings.ToLower(raw) {
		case "true":
			restart = true
		case "false":
			restart = false
		default:
			return core.E3("Parameter 'restartApp' must be true or false")
		}
	}
	return a.startRunLocked(p, caseName, requestID, replayRequest{caseID: caseID, fingerprint: fp, targetApp: strings.TrimSpace(q["targetApp"]), hasTarget: q.Has("targetApp"), restart: restart})
}

// startRunLocked publishes a new run in the idle (or terminal) slot of p and
// starts its manager.
func (a *App) startRunLocked(p *core.Process, caseName, requestID string, req replayRequest) core.Obj {
	now := a.NowMs()
	run := &harnessRun{
		runID:     strconv.FormatInt(now, 10) + "-" + core.NewUUID(),
		requestID: requestID,
		caseName:  caseName,
		state:     replayMachine.Initial,
	}
	st(p).harnessSeq++
	owner := "harness:" + strconv.Itoa(st(p).harnessSeq)
	if !p.Lease.Acquire(owner) {
		a.stepRunLocked(p, run, protocol.EvReplayLeaseBusy, protocol.MsgReplayLeaseBusy)
		st(p).harness = run
		return core.E3(protocol.MsgReplayLeaseBusy)
	}
	run.leaseOwner = owner
	if !a.stepRunLocked(p, run, protocol.EvReplayStart, "") {
		p.Lease.Release(owner)
		return core.NewObj("success", false, "errorCode", protocol.ErrReplayConflict, "error", "A replay is already running", "run", a.runSnapshotLocked(p))
	}
	run.startedAt = now
	ctx, stop := context.WithCancel(p.Ctx)
	run.stop = stop
	st(p).harness = run
	go a.prepareReplay(ctx, p, run, req)
	return core.NewObj("runId", run.runID)
}

type replayRequest struct {
	caseID      int64
	fingerprint string
	targetApp   string
	hasTarget   bool
	restart     bool
}

// failRun publishes a visible start failure (a check after the lease).
func (a *App) failRun(p *core.Process, r *harnessRun, msg string) {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if a.P == p {
		a.stepRunLocked(p, r, protocol.EvReplayStartFailed, msg)
	}
}

// prepareReplay runs the checks after the lease (case snapshot, identity,
// target app, permissions) and then the replay manager.
func (a *App) prepareReplay(ctx context.Context, p *core.Process, run *harnessRun, req replayRequest) {
	a.Mu.Lock()
	row := a.caseByIDLocked(req.caseID)
	if row == nil {
		a.Mu.Unlock()
		a.failRun(p, run, "Case snapshot no longer exists: "+run.caseName)
		return
	}
	snap, err := a.snapshotLocked(row)
	a.Mu.Unlock()
	if err != nil {
		a.failRun(p, run, "Stored case operation log cannot be loaded")
		return
	}
	if len(snap.steps) == 0 {
		a.failRun(p, run, "Stored case does not contain readable steps")
		return
	}
	if snap.row.name != run.caseName || snap.fingerprint != req.fingerprint {
		a.failRun(p, run, "Case changed after CLI safety validation: "+run.caseName)
		return
	}
	pkg, label := snap.row.pkg, snap.row.label
	if snap.row.advance != nil && *snap.row.advance != "" {
		var adv map[string]any
		if json.Unmarshal([]byte(*snap.row.advance), &adv) != nil {
			a.failRun(p, run, "Case advanceSettings is invalid")
			return
		}
	}
	if req.targetApp != "" {
		pkg = req.targetApp
		label = req.targetApp
	}
	switch {
	case pkg == "":
		a.failRun(p, run, "Replay target application is missing")
		return
	case pkg == a.Cfg.Package:
		a.failRun(p, run, "Replay target application cannot be SoloPi itself")
		return
	case !a.Phone.IsInstalled(pkg):
		a.failRun(p, run, "Target application is not installed: "+pkg)
		return
	}
	var app *core.AppInfo
	for _, info := range a.Phone.Apps() {
		if info.Package == pkg {
			app = &info
			break
		}
	}
	if app == nil || app.LauncherActivity == "" {
		a.failRun(p, run, "Target application has no launchable activity: "+pkg)
		return
	}
	if req.targetApp != "" && app.Label != "" {
		label = app.Label
	}
	// Row 14: the permission dialog answers about 10 ms after it closes
	// (immediately when everything is granted).
	a.Mu.Lock()
	dialog := a.Faults.PermDialog
	a.Mu.Unlock()
	if dialog == 0 {
		dialog = 10 * time.Millisecond
	}
	if err := a.Clk.Sleep(ctx, dialog); err != nil {
		return
	}
	a.Mu.Lock()
	var missing []string
	for _, n := range []string{core.PermADB, core.PermFloat, core.PermBackground, core.PermAccessibility} {
		if !a.PermissionLocked(n) {
			missing = append(missing, n)
		}
	}
	if a.P != p || run.state != protocol.ReplayRunning {
		a.Mu.Unlock()
		return // cancelled meanwhile: the result is ignored
	}
	if len(missing) > 0 {
		a.stepRunLocked(p, run, protocol.EvReplayStartFailed, "Permission denied: "+strings.Join(missing, ","))
		a.Mu.Unlock()
		return
	}
	// Row 15: the replay manager starts.
	run.managerRunning = true
	auto := a.BoolSetting(core.KeyReplayAutoStart)
	a.Mu.Unlock()

	if !auto {
		// Without auto-start a human must tap start; only a cancel or a
		// restart ends the run.
		<-ctx.Done()
		a.finishCancelled(p, run)
		return
	}
	if err := a.Clk.Sleep(ctx, protocol.ReplayAutoStartDelayMs*time.Millisecond); err != nil {
		a.finishCancelled(p, run)
		return
	}
	result := a.executeReplay(ctx, run, snap, *app, label, req.restart)
	if ctx.Err() != nil {
		a.finishCancelled(p, run)
		return
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if a.P != p {
		return
	}
	run.results = []core.Obj{result}
	if result.Get("exceptionMessage") != nil {
		a.stepRunLocked(p, run, protocol.EvReplayFailed, "1 replay result(s) failed")
	} else {
		a.stepRunLocked(p, run, protocol.EvReplayPassed, "")
	}
}

// finishCancelled publishes cancelled after the manager stopped.
func (a *App) finishCancelled(p *core.Process, run *harnessRun) {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if a.P == p {
		a.stepRunLocked(p, run, protocol.EvReplayCancelled, "")
	}
}

// cancelRun is harness?type=cancel (docs/device-protocol.md#cancel).
func (a *App) cancelRun(p *core.Process, via core.Transport, q core.Params) core.Obj {
	if via != core.ViaAdb {
		return core.E1(protocol.ErrAdbRequired, "Cancel is only available through the ADB scheme transport")
	}
	runID := q["runId"]
	if runID == "" {
		return core.E1(protocol.ErrMissingRunID, "Parameter 'runId' is required")
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	r := st(p).harness
	if r == nil || r.runID != runID {
		return append(core.E1(protocol.ErrRunIDMismatch, "Harness runId does not match the active run"), core.KV{K: "run", V: a.runSnapshotLocked(p)})
	}
	if r.state != protocol.ReplayRunning || !a.stepRunLocked(p, r, protocol.EvReplayCancel, "") {
		return core.E1(protocol.ErrNoActiveRun, "There is no active harness run")
	}
	if !r.managerRunning {
		a.stepRunLocked(p, r, protocol.EvReplayPreStartStop, "")
	} else if r.stop != nil {
		r.stop()
	}
	return core.OK("accepted", true, "run", a.runSnapshotLocked(p))
}

// StartCompetingReplay starts, as another client would, a replay of the
// newest case with that name under a fresh requestId, and returns the
// requestId and the published runId ("" if the start was rejected).
func (a *App) StartCompetingReplay(caseName string) (requestID, runID string, err error) {
	id, fp, err := a.CaseFingerprint(caseName)
	if err != nil {
		return "", "", err
	}
	requestID = "replay-" + strings.ReplaceAll(core.NewUUID(), "-", "")
	a.Mu.Lock()
	p := a.P
	a.Mu.Unlock()
	resp := a.replay(p.Ctx, p, core.ViaAdb, core.Params{"replayMode": "normal", "caseName": caseName, "requestId": requestID,
		"caseId": strconv.FormatInt(id, 10), "caseFingerprint": fp})
	if rid, found := resp.Get("runId").(string); found {
		return requestID, rid, nil
	}
	msg, _ := resp.Get("error").(string)
	return requestID, "", fmt.Errorf("soloapp: competing replay rejected: %s", msg)
}

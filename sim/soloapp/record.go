package soloapp

// record: interactive recording (docs/device-protocol.md#session-types). The
// simulated user's touches are not observable through the Phone interface, so
// a stopped recording persists a case with a single CLICK step on the target
// application's root node as it is on screen at stop time (the launcher
// activity right after the restart when nothing changed).

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

var recordMachine = protocol.Record()

type recordSession struct {
	core.SessionClock
	id, caseName, caseDesc, target string
	caseID                         int64
	cancelledBeforeStart           bool
}

func (a *App) recordSnapshotLocked(p *core.Process) core.Obj {
	s := st(p).sx.record
	o := core.OK("kind", "recording")
	if s == nil {
		return append(o, core.NewObj("state", string(protocol.SessionIdle), "recording", false, "active", false,
			"terminal", false, "cancelledBeforeStart", false)...)
	}
	o.Set("sessionId", s.id)
	o.Set("state", string(s.State))
	o.Set("recording", s.State == protocol.SessionRecording)
	o.Set("active", recordMachine.IsLive(s.State))
	o.Set("terminal", recordMachine.IsTerminal(s.State))
	o.Set("caseName", s.caseName)
	if s.caseID > 0 {
		o.Set("caseId", s.caseID)
	}
	o.Set("cancelledBeforeStart", s.cancelledBeforeStart)
	o.Set("targetPackage", s.target)
	s.SetTimes(&o, a.NowMs())
	if s.Err != "" {
		o.Set("error", s.Err)
	}
	return o
}

func (a *App) recordResolver(ctx context.Context, p *core.Process, via core.Transport, q core.Params) core.Obj {
	mode := q["recordMode"]
	switch mode {
	case "status":
		a.Mu.Lock()
		defer a.Mu.Unlock()
		return a.recordSnapshotLocked(p)
	case "normal", "stop":
	default:
		return core.E1(protocol.ErrUnsupportedMode, "Unsupported record mode: "+core.JavaString(q, "recordMode"))
	}
	if via != core.ViaAdb {
		return core.E1(protocol.ErrMutationTransportRequired, "Recording changes require the ADB scheme transport")
	}
	if mode == "normal" {
		return a.recordStart(p, q)
	}
	return a.recordStop(p, q)
}

func (a *App) recordStart(p *core.Process, q core.Params) core.Obj {
	sid := q["sessionId"]
	if sid == "" {
		return core.E1(protocol.ErrMissingSessionID, "Parameter 'sessionId' is required")
	}
	name := strings.TrimSpace(q["caseName"])
	if name == "" {
		return core.E1(protocol.ErrMissingCaseName, "Parameter 'caseName' is required")
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	target := q["targetApp"]
	var app *core.AppInfo
	for _, x := range a.AppListLocked() {
		if x.Package == target {
			app = &x
			break
		}
	}
	if target == "" || app == nil {
		return core.E1(protocol.ErrTargetAppNotFound, "Target application was not found")
	}
	if a.ext.recordManagerUnavailable {
		return core.E1(protocol.ErrRecordingManagerUnavailable, "Recording manager is unavailable")
	}
	if cur := st(p).sx.record; cur != nil && recordMachine.IsLive(cur.State) {
		return append(core.E1(protocol.ErrRecordingConflict, "A recording session is already active"), core.KV{K: "recording", V: a.recordSnapshotLocked(p)})
	}
	if p.MaintenanceLocked() {
		return append(core.E1(protocol.ErrRecordingConflict, "A recording session, UI reservation, or plugin maintenance is active"),
			core.KV{K: "recording", V: a.recordSnapshotLocked(p)})
	}
	s := &recordSession{SessionClock: core.SessionClock{State: recordMachine.Initial}, id: sid, caseName: name, caseDesc: q["caseDesc"], target: target}
	a.StepClockLocked(recordMachine, &s.SessionClock, protocol.EvStart, "")
	st(p).sx.record = s
	go a.prepareRecording(p, s, *app, a.PermissionDialogLocked())
	return a.recordSnapshotLocked(p)
}

// prepareRecording is the start sequence after the reservation:
// permissions, target restart (force-stop, 500 ms, launch), manager ready.
func (a *App) prepareRecording(p *core.Process, s *recordSession, app core.AppInfo, dialog time.Duration) {
	alive := func() bool { return st(p).sx.record == s && a.CurrentLocked(p) && s.State == protocol.SessionStarting }
	if !a.SleepDevice(p, dialog) {
		return
	}
	a.Mu.Lock()
	if !alive() {
		a.Mu.Unlock()
		return
	}
	if missing := a.MissingPermissionsLocked(core.PermADB, core.PermFloat, core.PermBackground, core.PermAccessibility, core.PermPowerSave); len(missing) > 0 {
		a.StepClockLocked(recordMachine, &s.SessionClock, protocol.EvError, "Permission denied: "+strings.Join(missing, ","))
		a.Mu.Unlock()
		return
	}
	a.Mu.Unlock()
	if app.LauncherActivity == "" {
		a.failRecording(p, s, "Unable to prepare recording: Target application has no launchable activity")
		return
	}
	_ = a.Phone.ForceStop(app.Package)
	if !a.SleepDevice(p, 500*time.Millisecond) {
		return
	}
	a.Mu.Lock()
	if !alive() {
		a.Mu.Unlock()
		return
	}
	a.Mu.Unlock()
	if err := a.Phone.LaunchApp(app.Package); err != nil {
		a.failRecording(p, s, "Unable to prepare recording: "+err.Error())
		return
	}
	// The manager binds its services shortly after the launch.
	if !a.SleepDevice(p, 100*time.Millisecond) {
		return
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if !alive() {
		return
	}
	a.StepClockLocked(recordMachine, &s.SessionClock, protocol.EvReady, "")
	st(p).recording = true // status?type=status now reports "record"
}

func (a *App) failRecording(p *core.Process, s *recordSession, msg string) {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if st(p).sx.record == s && a.CurrentLocked(p) {
		a.StepClockLocked(recordMachine, &s.SessionClock, protocol.EvError, msg)
	}
}

func (a *App) recordStop(p *core.Process, q core.Params) core.Obj {
	sid := q["sessionId"]
	if sid == "" {
		return core.E1(protocol.ErrMissingSessionID, "Parameter 'sessionId' is required")
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	s := st(p).sx.record
	snap := func(code, msg string) core.Obj {
		return append(core.E1(code, msg), core.KV{K: "recording", V: a.recordSnapshotLocked(p)})
	}
	if s == nil {
		return snap(protocol.ErrRecordingNotActive, "The recording session has no active owner")
	}
	if s.id != sid {
		return snap(protocol.ErrSessionMismatch, "Recording sessionId does not match")
	}
	switch s.State {
	case protocol.SessionStarting:
		s.cancelledBeforeStart = true
		a.StepClockLocked(recordMachine, &s.SessionClock, protocol.EvStopBeforeStart, "")
	case protocol.SessionRecording:
		a.StepClockLocked(recordMachine, &s.SessionClock, protocol.EvStop, "")
		go a.persistRecording(p, s)
	case protocol.SessionStopping:
		return snap(protocol.ErrRecordingNotActive, "The recording session is not recording")
	default:
		return snap(protocol.ErrRecordingNotActive, "The recording session has no active owner")
	}
	return a.recordSnapshotLocked(p)
}

// persistRecording finishes the recording on a background thread and
// stores the case row (the device waits ≤10 s for it).
func (a *App) persistRecording(p *core.Process, s *recordSession) {
	if !a.SleepDevice(p, 200*time.Millisecond) {
		return
	}
	step := a.recordedStep(s.target)
	data, err := json.Marshal([]casefile.Step{step})
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if st(p).sx.record != s || !a.CurrentLocked(p) || s.State != protocol.SessionStopping {
		return
	}
	if err != nil {
		a.StepClockLocked(recordMachine, &s.SessionClock, protocol.EvError, "Unable to stop recording: "+err.Error())
		return
	}
	store := a.stepsDir() + "/" + core.NewUUID()[:16]
	if err := a.Phone.MkdirAll(a.stepsDir()); err != nil {
		a.StepClockLocked(recordMachine, &s.SessionClock, protocol.EvError, "Unable to stop recording: "+err.Error())
		return
	}
	if err := a.Phone.WriteFile(store, data); err != nil {
		a.StepClockLocked(recordMachine, &s.SessionClock, protocol.EvError, "Unable to stop recording: "+err.Error())
		return
	}
	label := s.target
	for _, x := range a.Phone.Apps() {
		if x.Package == s.target && x.Label != "" {
			label = x.Label
		}
	}
	now := a.NowMs()
	var desc *string
	if s.caseDesc != "" {
		d := s.caseDesc
		desc = &d
	}
	adv := ""
	row := &caseRow{id: a.nextCaseID, name: s.caseName, desc: desc, pkg: s.target, label: label,
		recordMode: "local", advance: &adv, gmtCreate: now, gmtModify: now, storePath: store}
	a.nextCaseID++
	a.cases = append(a.cases, row)
	s.caseID = row.id
	a.StepClockLocked(recordMachine, &s.SessionClock, protocol.EvStopped, "")
}

// recordedStep is the single CLICK the simulator records: the target's
// root node as currently shown, else a node naming only the package.
func (a *App) recordedStep(pkg string) casefile.Step {
	node := &casefile.Node{PackageName: casefile.Str(pkg), XPath: casefile.Str("/")}
	for _, w := range a.Phone.Windows() {
		if w.Package == pkg && w.Root != nil {
			r := w.Root
			node.ClassName = casefile.Str(r.ClassName)
			node.XPath = casefile.Str("/" + r.ClassName)
			node.NodeBound = &casefile.Rect{Left: r.Bounds.Left, Top: r.Bounds.Top, Right: r.Bounds.Right, Bottom: r.Bounds.Bottom}
			if r.ResourceID != "" {
				node.ResourceID = casefile.Str(r.ResourceID)
			}
			break
		}
	}
	return casefile.Step{
		OperationID: core.NewUUID(),
		StepID:      "recorded-1",
		Method:      casefile.Method{ActionEnum: "CLICK", Encrypt: casefile.Bool(false), Params: map[string]*string{}},
		Node:        node,
	}
}

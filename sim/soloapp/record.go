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
)

var recordMachine = protocol.Record()

type recordSession struct {
	sessionClock
	id, caseName, caseDesc, target string
	caseID                         int64
	cancelledBeforeStart           bool
}

func (a *App) recordSnapshotLocked(p *process) obj {
	s := st(p).sx.record
	o := ok("kind", "recording")
	if s == nil {
		return append(o, newObj("state", string(protocol.SessionIdle), "recording", false, "active", false,
			"terminal", false, "cancelledBeforeStart", false)...)
	}
	o.set("sessionId", s.id)
	o.set("state", string(s.state))
	o.set("recording", s.state == protocol.SessionRecording)
	o.set("active", recordMachine.IsLive(s.state))
	o.set("terminal", recordMachine.IsTerminal(s.state))
	o.set("caseName", s.caseName)
	if s.caseID > 0 {
		o.set("caseId", s.caseID)
	}
	o.set("cancelledBeforeStart", s.cancelledBeforeStart)
	o.set("targetPackage", s.target)
	s.setTimes(&o, a.nowMs())
	if s.err != "" {
		o.set("error", s.err)
	}
	return o
}

func (a *App) recordResolver(ctx context.Context, p *process, via transport, q params) obj {
	mode := q["recordMode"]
	switch mode {
	case "status":
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.recordSnapshotLocked(p)
	case "normal", "stop":
	default:
		return e1(protocol.ErrUnsupportedMode, "Unsupported record mode: "+javaString(q, "recordMode"))
	}
	if via != viaAdb {
		return e1(protocol.ErrMutationTransportRequired, "Recording changes require the ADB scheme transport")
	}
	if mode == "normal" {
		return a.recordStart(p, q)
	}
	return a.recordStop(p, q)
}

func (a *App) recordStart(p *process, q params) obj {
	sid := q["sessionId"]
	if sid == "" {
		return e1(protocol.ErrMissingSessionID, "Parameter 'sessionId' is required")
	}
	name := strings.TrimSpace(q["caseName"])
	if name == "" {
		return e1(protocol.ErrMissingCaseName, "Parameter 'caseName' is required")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	target := q["targetApp"]
	var app *AppInfo
	for _, x := range a.appListLocked() {
		if x.Package == target {
			app = &x
			break
		}
	}
	if target == "" || app == nil {
		return e1(protocol.ErrTargetAppNotFound, "Target application was not found")
	}
	if a.ext.recordManagerUnavailable {
		return e1(protocol.ErrRecordingManagerUnavailable, "Recording manager is unavailable")
	}
	if cur := st(p).sx.record; cur != nil && recordMachine.IsLive(cur.state) {
		return append(e1(protocol.ErrRecordingConflict, "A recording session is already active"), kv{"recording", a.recordSnapshotLocked(p)})
	}
	if p.maintenanceLocked() {
		return append(e1(protocol.ErrRecordingConflict, "A recording session, UI reservation, or plugin maintenance is active"),
			kv{"recording", a.recordSnapshotLocked(p)})
	}
	s := &recordSession{sessionClock: sessionClock{state: recordMachine.Initial}, id: sid, caseName: name, caseDesc: q["caseDesc"], target: target}
	a.stepClockLocked(recordMachine, &s.sessionClock, protocol.EvStart, "")
	st(p).sx.record = s
	go a.prepareRecording(p, s, *app, a.permissionDialogLocked())
	return a.recordSnapshotLocked(p)
}

// prepareRecording is the start sequence after the reservation:
// permissions, target restart (force-stop, 500 ms, launch), manager ready.
func (a *App) prepareRecording(p *process, s *recordSession, app AppInfo, dialog time.Duration) {
	alive := func() bool { return st(p).sx.record == s && a.currentLocked(p) && s.state == protocol.SessionStarting }
	if !a.sleepDevice(p, dialog) {
		return
	}
	a.mu.Lock()
	if !alive() {
		a.mu.Unlock()
		return
	}
	if missing := a.missingPermissionsLocked(PermADB, PermFloat, PermBackground, PermAccessibility, PermPowerSave); len(missing) > 0 {
		a.stepClockLocked(recordMachine, &s.sessionClock, protocol.EvError, "Permission denied: "+strings.Join(missing, ","))
		a.mu.Unlock()
		return
	}
	a.mu.Unlock()
	if app.LauncherActivity == "" {
		a.failRecording(p, s, "Unable to prepare recording: Target application has no launchable activity")
		return
	}
	_ = a.phone.ForceStop(app.Package)
	if !a.sleepDevice(p, 500*time.Millisecond) {
		return
	}
	a.mu.Lock()
	if !alive() {
		a.mu.Unlock()
		return
	}
	a.mu.Unlock()
	if err := a.phone.LaunchApp(app.Package); err != nil {
		a.failRecording(p, s, "Unable to prepare recording: "+err.Error())
		return
	}
	// The manager binds its services shortly after the launch.
	if !a.sleepDevice(p, 100*time.Millisecond) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !alive() {
		return
	}
	a.stepClockLocked(recordMachine, &s.sessionClock, protocol.EvReady, "")
	st(p).recording = true // status?type=status now reports "record"
}

func (a *App) failRecording(p *process, s *recordSession, msg string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if st(p).sx.record == s && a.currentLocked(p) {
		a.stepClockLocked(recordMachine, &s.sessionClock, protocol.EvError, msg)
	}
}

func (a *App) recordStop(p *process, q params) obj {
	sid := q["sessionId"]
	if sid == "" {
		return e1(protocol.ErrMissingSessionID, "Parameter 'sessionId' is required")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s := st(p).sx.record
	snap := func(code, msg string) obj { return append(e1(code, msg), kv{"recording", a.recordSnapshotLocked(p)}) }
	if s == nil {
		return snap(protocol.ErrRecordingNotActive, "The recording session has no active owner")
	}
	if s.id != sid {
		return snap(protocol.ErrSessionMismatch, "Recording sessionId does not match")
	}
	switch s.state {
	case protocol.SessionStarting:
		s.cancelledBeforeStart = true
		a.stepClockLocked(recordMachine, &s.sessionClock, protocol.EvStopBeforeStart, "")
	case protocol.SessionRecording:
		a.stepClockLocked(recordMachine, &s.sessionClock, protocol.EvStop, "")
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
func (a *App) persistRecording(p *process, s *recordSession) {
	if !a.sleepDevice(p, 200*time.Millisecond) {
		return
	}
	step := a.recordedStep(s.target)
	data, err := json.Marshal([]casefile.Step{step})
	a.mu.Lock()
	defer a.mu.Unlock()
	if st(p).sx.record != s || !a.currentLocked(p) || s.state != protocol.SessionStopping {
		return
	}
	if err != nil {
		a.stepClockLocked(recordMachine, &s.sessionClock, protocol.EvError, "Unable to stop recording: "+err.Error())
		return
	}
	store := a.stepsDir() + "/" + newUUID()[:16]
	if err := a.phone.MkdirAll(a.stepsDir()); err != nil {
		a.stepClockLocked(recordMachine, &s.sessionClock, protocol.EvError, "Unable to stop recording: "+err.Error())
		return
	}
	if err := a.phone.WriteFile(store, data); err != nil {
		a.stepClockLocked(recordMachine, &s.sessionClock, protocol.EvError, "Unable to stop recording: "+err.Error())
		return
	}
	label := s.target
	for _, x := range a.phone.Apps() {
		if x.Package == s.target && x.Label != "" {
			label = x.Label
		}
	}
	now := a.nowMs()
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
	a.stepClockLocked(recordMachine, &s.sessionClock, protocol.EvStopped, "")
}

// recordedStep is the single CLICK the simulator records: the target's
// root node as currently shown, else a node naming only the package.
func (a *App) recordedStep(pkg string) casefile.Step {
	node := &casefile.Node{PackageName: casefile.Str(pkg), XPath: casefile.Str("/")}
	for _, w := range a.phone.Windows() {
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
		OperationID: newUUID(),
		StepID:      "recorded-1",
		Method:      casefile.Method{ActionEnum: "CLICK", Encrypt: casefile.Bool(false), Params: map[string]*string{}},
		Node:        node,
	}
}

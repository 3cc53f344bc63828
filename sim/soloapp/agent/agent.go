package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

var (
	agentMachine   = protocol.AgentSession()
	receiptMachine = protocol.AgentReceipt()
)

// Agent is the agent resolver (docs/device-protocol.md#agent-sessions).
type Agent struct{ *core.App }

// agentProc is the Agent state of one process.
type agentProc struct {
	agent      *agentSession
	generation int64
}

var agentSlot = core.NewSlot(func() *agentProc { return &agentProc{} })

func agentSx(p *core.Process) *agentProc { return agentSlot.Of(p) }

// agentSession is the single Agent session slot of the process
// (docs/device-protocol.md#agent-sessions). Its state changes only through
// agentMachine.Step. The ownerToken lives only here, never in any snapshot,
// receipt, event, log line or file.
type agentSession struct {
	id, token  string
	generation int64
	state      protocol.State
	reason     string

	startedAt, lastActivity, finishedAt int64
	accepted                            int64
	maxSteps, maxDurationMs, idleMs     int64
	maxRepeated, maxNoProgress          int64

	obs      *observation
	consumed bool

	receipts map[string]*agentReceipt
	events   []core.Obj
	seq      int64

	leaseOwner string
	leaseHeld  bool
	touch      bool

	lastActionSig string
	repeatCount   int64
	noProgress    int64

	dir string
	// ctx lives until the session terminates or the process dies; the
	// watchdog, first observation and running operation hang off it.
	ctx    context.Context
	cancel context.CancelFunc
}

// observation is the current observation with its frame (nodeId →
// selector snapshot) and page package.
type observation struct {
	wire  core.Obj
	id    string
	sig   string
	frame map[string]core.NodeSelector
	pkg   string
}

// agentReceipt is one act step's receipt (docs/device-protocol.md#receipts);
// its state changes only through receiptMachine.Step.
type agentReceipt struct {
	stepID, observationID string
	action                core.Obj
	state                 protocol.State
	code, msg             string
	acceptedAt            int64
	finishedAt            int64
	settled               core.Obj
	preSig                string
}

func (r *agentReceipt) wire() core.Obj {
	o := core.NewObj("stepId", r.stepID, "observationId", r.observationID, "action", r.action, "status", string(r.state))
	if r.code != "" {
		o.Set("errorCode", r.code)
		o.Set("error", r.msg)
	}
	o.Set("acceptedAt", r.acceptedAt)
	if r.finishedAt != 0 {
		o.Set("finishedAt", r.finishedAt)
	}
	if r.settled != nil {
		o.Set("settledObservation", r.settled)
	}
	return o
}

func (s *agentSession) timelinePath() string { return s.dir + "/timeline.jsonl" }

// sessionSnapshotLocked is the session object
// (docs/device-protocol.md#agent-sessions).
func (a *Agent) sessionSnapshotLocked(p *core.Process) core.Obj {
	s := agentSx(p).agent
	if s == nil {
		return core.NewObj("success", true, "state", string(protocol.AgentIdle), "active", false, "terminal", false,
			"acceptedSteps", 0, "leaseHeld", false)
	}
	o := core.NewObj("success", true, "sessionId", s.id, "generation", s.generation, "state", string(s.state),
		"active", agentMachine.IsLive(s.state), "terminal", agentMachine.IsTerminal(s.state))
	if s.reason != "" {
		o.Set("terminalReason", s.reason)
	}
	for _, f := range []struct {
		k string
		v int64
	}{{"startedAt", s.startedAt}, {"lastActivityAt", s.lastActivity}, {"finishedAt", s.finishedAt}} {
		if f.v != 0 {
			o.Set(f.k, f.v)
		}
	}
	o.Set("acceptedSteps", s.accepted)
	o.Set("maxSteps", s.maxSteps)
	if s.obs != nil {
		o.Set("observationId", s.obs.id)
	}
	o.Set("leaseHeld", s.leaseHeld)
	return o
}

// eventLocked appends one timeline event in memory and to timeline.jsonl.
func (a *Agent) eventLocked(s *agentSession, typ, stepID, obsID string, details any) {
	s.seq++
	e := core.NewObj("sequence", s.seq, "timestamp", a.NowMs(), "type", typ, "sessionId", s.id,
		"generation", s.generation)
	if stepID != "" {
		e.Set("stepId", stepID)
	}
	if obsID != "" {
		e.Set("observationId", obsID)
	}
	if details != nil {
		e.Set("details", details)
	}
	s.events = append(s.events, e)
	_ = a.Phone.MkdirAll(s.dir)
	_ = a.Phone.AppendFile(s.timelinePath(), append(core.Encode(e, false), '\n'))
}

// terminateLocked moves a live session to its terminal state exactly once:
// the machine refuses a second terminal event, so session_terminal and
// lease_released are each appended once, back to back.
func (a *Agent) terminateLocked(p *core.Process, s *agentSession, ev protocol.Event, reason string) bool {
	next, err := agentMachine.Step(s.state, ev)
	if err != nil || !agentMachine.IsTerminal(next) {
		return false
	}
	s.state = next
	s.reason = reason
	s.finishedAt = a.NowMs()
	a.eventLocked(s, "session_terminal", "", "", core.NewObj("reason", reason))
	released := p.Lease.Release(s.leaseOwner)
	s.leaseHeld = false
	a.eventLocked(s, "lease_released", "", "", core.NewObj("released", released))
	s.touch = false
	s.cancel()
	return true
}

// checkTimeoutsLocked expires a live session whose deadline passed.
func (a *Agent) checkTimeoutsLocked(p *core.Process, s *agentSession) bool {
	if !agentMachine.IsLive(s.state) {
		return false
	}
	now := a.NowMs()
	switch {
	case now-s.startedAt >= s.maxDurationMs:
		return a.terminateLocked(p, s, protocol.EvAgentExpire, "max_duration_exceeded")
	case now-s.lastActivity >= s.idleMs:
		return a.terminateLocked(p, s, protocol.EvAgentExpire, "idle_timeout")
	}
	return false
}

// identifyLocked is the identity check: the current sessionId first
// (session_not_found), then its ownerToken (owner_mismatch).
func (a *Agent) identifyLocked(p *core.Process, sid, token string) (*agentSession, core.Obj) {
	s := agentSx(p).agent
	if s == nil || s.id != sid {
		return nil, core.E1(protocol.ErrSessionNotFound, "sessionId does not identify the current session")
	}
	if s.token != token {
		return nil, core.E1(protocol.ErrOwnerMismatch, "ownerToken does not own this session")
	}
	return s, nil
}

// accessLocked is identity plus the deadline and terminal checks.
func (a *Agent) accessLocked(p *core.Process, sid, token string) (*agentSession, core.Obj) {
	s, e := a.identifyLocked(p, sid, token)
	if e != nil {
		return nil, e
	}
	if agentMachine.IsLive(s.state) && a.checkTimeoutsLocked(p, s) {
		return nil, core.E1(protocol.ErrSessionExpired, "The session exceeded its configured deadline")
	}
	if !agentMachine.IsLive(s.state) {
		return nil, core.E1(protocol.ErrTerminalSession, "The session is already terminal")
	}
	return s, nil
}

// withLiveSession checks sessionId and ownerToken and runs fn, under the
// lock, on the live session they name (accessLocked's errors otherwise).
func (a *Agent) withLiveSession(p *core.Process, q core.Params, fn func(s *agentSession) core.Obj) core.Obj {
	if e := missingParam(q, "sessionId", "ownerToken"); e != nil {
		return e
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	s, e := a.accessLocked(p, q["sessionId"], q["ownerToken"])
	if e != nil {
		return e
	}
	return fn(s)
}

// missingParam returns missing_parameter for the first absent or empty key.
func missingParam(q core.Params, keys ...string) core.Obj {
	for _, k := range keys {
		if q[k] == "" {
			return core.E1(protocol.ErrMissingParameter, "Parameter '"+k+"' is required")
		}
	}
	return nil
}

// Agent is the agent resolver (docs/device-protocol.md#agent-sessions).
// Unexpected failures answer agent_internal_error instead of escaping as a
// resolver exception.
func (a *Agent) Agent(ctx context.Context, p *core.Process, via core.Transport, q core.Params) (resp core.Obj) {
	defer func() {
		if r := recover(); r != nil {
			a.Logi("AgentSession", fmt.Sprintf("agent request failed: %v", r))
			resp = core.E1(protocol.ErrAgentInternalError, "Dynamic Agent request failed")
		}
	}()
	t := q["type"]
	switch t {
	case "":
		return core.E1(protocol.ErrMissingType, "Parameter 'type' is required")
	case protocol.AgentCapabilities:
		return core.OK("protocolVersion", protocol.AgentProtocolVersion,
			"queries", []string{"capabilities", "start-status", "status", "observe", "receipt", "timeline"},
			"commands", []string{"start", "act", "pause", "resume", "end", "cancel"},
			"actions", []string{"click", "longClick", "input", "back", "home", "scroll", "wait"},
			"arbitraryShell", false, "mutationTransport", "adb-scheme", "queryTransport", "adb-forward-http")
	case protocol.AgentStartStatus:
		return a.agentStartStatus(p, q)
	case protocol.AgentStatus:
		return a.agentStatus(p, q)
	case protocol.AgentObserve:
		return a.agentObserve(ctx, p, q)
	case protocol.AgentReceiptQuery:
		return a.agentReceiptQuery(p, q)
	case protocol.AgentTimeline:
		return a.agentTimeline(p, q)
	case protocol.AgentStart, protocol.AgentAct, protocol.AgentPause, protocol.AgentResume, protocol.AgentEnd, protocol.AgentCancel:
		if via != core.ViaAdb {
			return core.E1(protocol.ErrAdbRequired, "Agent mutations require the DUMP-protected ADB scheme transport")
		}
		switch t {
		case protocol.AgentStart:
			return a.agentStart(p, q)
		case protocol.AgentAct:
			return a.agentAct(p, q)
		case protocol.AgentPause:
			return a.agentPause(p, q)
		case protocol.AgentResume:
			return a.agentResume(p, q)
		case protocol.AgentEnd:
			return a.agentEnd(p, q)
		default:
			return a.agentCancel(p, q)
		}
	}
	return core.E1(protocol.ErrUnsupportedType, "Unsupported Agent type: "+t)
}

func (a *Agent) agentStart(p *core.Process, q core.Params) core.Obj {
	if e := missingParam(q, "ownerToken"); e != nil {
		return e
	}
	vals := map[string]int64{}
	for _, r := range []protocol.Range{protocol.AgentMaxSteps, protocol.AgentMaxDurationMs, protocol.AgentIdleTimeoutMs,
		protocol.AgentMaxRepeatedActions, protocol.AgentMaxNoProgressSteps} {
		v := r.Default
		if q.Has(r.Name) {
			n, okN := core.JavaParseLong(q[r.Name])
			if !okN || !r.Contains(n) {
				return core.E1(protocol.ErrInvalidParameter, fmt.Sprintf("%s must be between %d and %d", r.Name, r.Min, r.Max))
			}
			v = n
		}
		vals[r.Name] = v
	}
	token := q["ownerToken"]
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if a.P != p {
		return core.E1(protocol.ErrAgentInternalError, "Dynamic Agent request failed")
	}
	if cur := agentSx(p).agent; cur != nil && agentMachine.IsLive(cur.state) {
		a.checkTimeoutsLocked(p, cur)
		if agentMachine.IsLive(cur.state) {
			return core.E1(protocol.ErrSessionConflict, "A dynamic Agent session is already active")
		}
	}
	if len([]rune(token)) < 16 {
		return core.E1(protocol.ErrInvalidOwnerToken, "ownerToken must contain at least 16 characters")
	}
	owner := "agent-lease-" + core.NewUUID()
	if !p.Lease.Acquire(owner) {
		return core.E1(protocol.ErrLeaseConflict, "Another replay, Agent session, or maintenance task controls the device")
	}
	agentSx(p).generation++
	id := "agent-session-" + core.NewUUID()
	ctx, cancel := context.WithCancel(p.Ctx)
	now := a.NowMs()
	s := &agentSession{
		id: id, token: token, generation: agentSx(p).generation, state: agentMachine.Initial,
		startedAt: now, lastActivity: now,
		maxSteps: vals[protocol.ParamMaxSteps], maxDurationMs: vals[protocol.ParamMaxDurationMs],
		idleMs: vals[protocol.ParamIdleTimeoutMs], maxRepeated: vals[protocol.ParamMaxRepeatedActions],
		maxNoProgress: vals[protocol.ParamMaxNoProgressSteps],
		receipts:      map[string]*agentReceipt{}, leaseOwner: owner, leaseHeld: true,
		dir: a.SolopiDirLocked() + "/agent-sessions/" + id, ctx: ctx, cancel: cancel,
	}
	next, err := agentMachine.Step(s.state, protocol.EvAgentStart)
	if err != nil {
		p.Lease.Release(owner)
		cancel()
		panic(err)
	}
	s.state = next
	agentSx(p).agent = s
	a.eventLocked(s, "session_started", "", "", nil)
	if a.Faults.TouchUnavailable {
		a.terminateLocked(p, s, protocol.EvAgentFail, "touch_service_unavailable")
		return core.E1(protocol.ErrTouchServiceUnavailable, "Touch service could not be started")
	}
	s.touch = true
	go a.watchdog(p, s)
	go a.initialObservation(p, s)
	return core.OK("accepted", true, "session", a.sessionSnapshotLocked(p))
}

// watchdog checks the deadlines every second until the session ends.
func (a *Agent) watchdog(p *core.Process, s *agentSession) {
	for {
		if err := a.Clk.Sleep(s.ctx, protocol.AgentWatchdogMs*time.Millisecond); err != nil {
			return
		}
		a.Mu.Lock()
		if a.P != p || agentSx(p).agent != s || !agentMachine.IsLive(s.state) {
			a.Mu.Unlock()
			return
		}
		a.checkTimeoutsLocked(p, s)
		a.Mu.Unlock()
	}
}

// initialObservation captures the first observation in the background;
// a failure fails the session with the capture error code as reason.
func (a *Agent) initialObservation(p *core.Process, s *agentSession) {
	a.Mu.Lock()
	opDown := a.Faults.OpUnavailable
	a.Mu.Unlock()
	var reason string
	var root *core.PageRoot
	if opDown {
		reason = protocol.ErrOperationServiceUnavailable
	} else {
		root = a.loadControllableRoot(s.ctx, "")
		if s.ctx.Err() != nil {
			return
		}
		if root == nil {
			reason = protocol.ErrPageRootUnavailable
		}
	}
	var o *observation
	if root != nil {
		o = a.buildObservation(s, root)
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if a.P != p || agentSx(p).agent != s || !agentMachine.IsLive(s.state) {
		return
	}
	if reason != "" {
		a.terminateLocked(p, s, protocol.EvAgentFail, reason)
		return
	}
	a.installObservationLocked(s, o, true)
}

// installObservationLocked makes o current (not consumed).
func (a *Agent) installObservationLocked(s *agentSession, o *observation, event bool) {
	s.obs = o
	s.consumed = false
	s.lastActivity = a.NowMs()
	if event {
		a.eventLocked(s, "observation_created", "", o.id, o.wire)
	}
}

func (a *Agent) agentStartStatus(p *core.Process, q core.Params) core.Obj {
	token := q["ownerToken"]
	a.Mu.Lock()
	defer a.Mu.Unlock()
	s := agentSx(p).agent
	if s != nil && agentMachine.IsLive(s.state) {
		a.checkTimeoutsLocked(p, s)
	}
	if s == nil || s.token != token {
		return core.E1(protocol.ErrSessionNotFound, "No session belongs to ownerToken")
	}
	_ = a.Phone.MkdirAll(s.dir)
	o := core.OK("session", a.sessionSnapshotLocked(p))
	if s.obs != nil {
		o.Set("observation", s.obs.wire)
	}
	o.Set("timelinePath", s.timelinePath())
	return o
}

// statusLocked is agent?type=status: identity, deadline check, and for a
// live session a refresh of lastActivityAt.
func (a *Agent) statusLocked(p *core.Process, q core.Params) (*agentSession, core.Obj) {
	s, e := a.identifyLocked(p, q["sessionId"], q["ownerToken"])
	if e != nil {
		return nil, e
	}
	if agentMachine.IsLive(s.state) && !a.checkTimeoutsLocked(p, s) {
		s.lastActivity = a.NowMs()
	}
	return s, nil
}

func (a *Agent) agentStatus(p *core.Process, q core.Params) core.Obj {
	if e := missingParam(q, "sessionId", "ownerToken"); e != nil {
		return e
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if _, e := a.statusLocked(p, q); e != nil {
		return e
	}
	return core.OK("session", a.sessionSnapshotLocked(p))
}

func (a *Agent) agentReceiptQuery(p *core.Process, q core.Params) core.Obj {
	if e := missingParam(q, "sessionId", "ownerToken", "stepId"); e != nil {
		return e
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	s, e := a.identifyLocked(p, q["sessionId"], q["ownerToken"])
	if e != nil {
		return e
	}
	r := s.receipts[q["stepId"]]
	if r == nil {
		return core.E1(protocol.ErrReceiptNotFound, "No receipt exists for stepId")
	}
	return core.OK("receipt", r.wire(), "session", a.sessionSnapshotLocked(p))
}

func (a *Agent) agentTimeline(p *core.Process, q core.Params) core.Obj {
	if e := missingParam(q, "sessionId", "ownerToken"); e != nil {
		return e
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	s, e := a.identifyLocked(p, q["sessionId"], q["ownerToken"])
	if e != nil {
		return e
	}
	_ = a.Phone.MkdirAll(s.dir)
	events := make([]core.Obj, len(s.events))
	copy(events, s.events)
	return core.OK("events", events, "timelinePath", s.timelinePath())
}

func (a *Agent) agentPause(p *core.Process, q core.Params) core.Obj {
	return a.withLiveSession(p, q, func(s *agentSession) core.Obj {
		switch s.state {
		case protocol.AgentPaused:
			return core.E1(protocol.ErrAlreadyPaused, "The session is already paused")
		case protocol.AgentActing:
			return core.E1(protocol.ErrSessionBusy, "The session cannot pause while an action is executing")
		}
		if !a.stepSessionLocked(s, protocol.EvAgentPause) {
			return core.E1(protocol.ErrTerminalSession, "The session is already terminal")
		}
		s.lastActivity = a.NowMs()
		a.eventLocked(s, "session_paused", "", s.currentObservationID(), nil)
		return core.OK("session", a.sessionSnapshotLocked(p))
	})
}

func (a *Agent) agentResume(p *core.Process, q core.Params) core.Obj {
	return a.withLiveSession(p, q, func(s *agentSession) core.Obj {
		if s.state != protocol.AgentPaused || !a.stepSessionLocked(s, protocol.EvAgentResume) {
			return core.E1(protocol.ErrNotPaused, "The session is not paused")
		}
		s.lastActivity = a.NowMs()
		a.eventLocked(s, "session_resumed", "", s.currentObservationID(), nil)
		return core.OK("session", a.sessionSnapshotLocked(p))
	})
}

func (a *Agent) agentEnd(p *core.Process, q core.Params) core.Obj {
	return a.withLiveSession(p, q, func(s *agentSession) core.Obj {
		if s.state == protocol.AgentActing {
			return core.E1(protocol.ErrSessionBusy, "Cancel the session while an action is executing")
		}
		a.terminateLocked(p, s, protocol.EvAgentEnd, "client_end")
		if s.obs != nil {
			s.obs.frame = nil // the device frame is cleared on end
		}
		return core.OK("session", a.sessionSnapshotLocked(p))
	})
}

func (a *Agent) agentCancel(p *core.Process, q core.Params) core.Obj {
	if e := missingParam(q, "sessionId", "ownerToken"); e != nil {
		return e
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if _, e := a.statusLocked(p, q); e != nil {
		return e
	}
	s, e := a.accessLocked(p, q["sessionId"], q["ownerToken"])
	if e != nil {
		return e
	}
	a.terminateLocked(p, s, protocol.EvAgentCancel, "client_cancel")
	return core.OK("session", a.sessionSnapshotLocked(p))
}

func (s *agentSession) currentObservationID() string {
	if s.obs == nil {
		return ""
	}
	return s.obs.id
}

// stepSessionLocked applies a non-terminal session event.
func (a *Agent) stepSessionLocked(s *agentSession, ev protocol.Event) bool {
	next, err := agentMachine.Step(s.state, ev)
	if err != nil {
		return false
	}
	s.state = next
	return true
}

// AgentGeneration reports the process's generation counter (0 before the
// first start), for tests and diagnostics.
func (a *Agent) AgentGeneration() int64 {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	return agentSx(a.P).generation
}

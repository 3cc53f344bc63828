package soloapp

import (
	"slices"
	"time"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// requiredUserActionText is the fixed hint of adb_connection_failed
// (docs/device-protocol.md#internal-adb-connection).
const requiredUserActionText = "请确认 SoloPi 配置的内部 ADB 地址可连接，并在设备上确认 RSA 授权弹窗"

// adbReceipt is one adb-connect receipt; its state moves only through
// protocol.AdbConnect().
type adbReceipt struct {
	requestID             string
	state                 protocol.State
	startedAt, finishedAt int64
	code, msg             string
	activeRequestID       string
}

// adbStore keeps at most 16 receipts, evicting the oldest non-active one.
type adbStore struct {
	order  []string
	m      map[string]*adbReceipt
	active string
}

const adbStoreMax = 16

var adbMachine = protocol.AdbConnect()

func (s *adbStore) put(r *adbReceipt) {
	if s.m == nil {
		s.m = map[string]*adbReceipt{}
	}
	if _, exists := s.m[r.requestID]; !exists {
		s.order = append(s.order, r.requestID)
	}
	s.m[r.requestID] = r
	for len(s.order) > adbStoreMax {
		i := slices.IndexFunc(s.order, func(id string) bool { return id != s.active })
		if i < 0 {
			break
		}
		delete(s.m, s.order[i])
		s.order = slices.Delete(s.order, i, i+1)
	}
}

func (r *adbReceipt) wire() core.Obj {
	o := core.Obj{}
	o.Set("success", r.state != protocol.AdbFailed)
	if r.requestID != "" {
		o.Set("requestId", r.requestID)
	}
	o.Set("state", string(r.state))
	o.Set("connected", r.state == protocol.AdbConnected)
	o.Set("terminal", adbMachine.IsTerminal(r.state))
	uar := r.code == protocol.ErrAdbConnectionFailed
	o.Set("userActionRequired", uar)
	if uar {
		o.Set("requiredUserAction", requiredUserActionText)
	}
	if r.startedAt != 0 {
		o.Set("startedAt", r.startedAt)
	}
	if r.finishedAt != 0 {
		o.Set("finishedAt", r.finishedAt)
	}
	if r.code != "" {
		o.Set("errorCode", r.code)
		o.Set("error", r.msg)
	}
	if r.activeRequestID != "" {
		o.Set("activeRequestId", r.activeRequestID)
	}
	return o
}

// newAdbReceipt moves a fresh receipt through ev.
func newAdbReceipt(id string, ev protocol.Event) *adbReceipt {
	st, err := adbMachine.Step(adbMachine.Initial, ev)
	if err != nil {
		panic(err) // the table always allows the three initial events
	}
	return &adbReceipt{requestID: id, state: st}
}

func failedAdbReceipt(id, code, msg string, now int64) *adbReceipt {
	r := newAdbReceipt(id, protocol.EvAdbRejected)
	r.code, r.msg, r.finishedAt = code, msg, now
	return r
}

// adbConnect is harness?type=adb-connect
// (docs/device-protocol.md#internal-adb-connection).
func (a *App) adbConnect(p *core.Process, via core.Transport, q core.Params) core.Obj {
	id := q["requestId"]
	now := a.NowMs()
	if via != core.ViaAdb {
		return failedAdbReceipt(id, protocol.ErrAdbRequired, "ADB connection is only available through the ADB scheme transport", now).wire()
	}
	if id == "" {
		return failedAdbReceipt("", protocol.ErrMissingRequestID, "Parameter 'requestId' is required", now).wire()
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if a.P != p {
		return failedAdbReceipt(id, protocol.ErrAdbConnectionScheduleFailed, "SoloPi could not schedule the internal ADB connection", now).wire()
	}
	st := &st(p).adb
	if r, found := st.m[id]; found {
		return r.wire()
	}
	if a.Perms[core.PermADB] {
		r := newAdbReceipt(id, protocol.EvAdbAlreadyHealthy)
		r.startedAt, r.finishedAt = now, now
		st.put(r)
		return r.wire()
	}
	if st.active != "" {
		r := failedAdbReceipt(id, protocol.ErrAdbConnectionBusy, "Another ADB connection request is active", now)
		r.activeRequestID = st.active
		st.put(r)
		return r.wire()
	}
	if a.Faults.AdbOutcome == core.AdbConnectScheduleFail {
		r := failedAdbReceipt(id, protocol.ErrAdbConnectionScheduleFailed, "SoloPi could not schedule the internal ADB connection", now)
		st.put(r)
		return r.wire()
	}
	r := newAdbReceipt(id, protocol.EvAdbAttempt)
	r.startedAt = now
	st.active = id
	st.put(r)
	outcome, delay := a.Faults.AdbOutcome, a.Faults.AdbDelay
	if delay == 0 {
		delay = a.Cfg.AdbConnectDelay
	}
	go a.runAdbConnect(p, r, outcome, delay)
	return r.wire()
}

func (a *App) runAdbConnect(p *core.Process, r *adbReceipt, outcome core.AdbConnectOutcome, delay time.Duration) {
	if outcome == core.AdbConnectHang {
		<-p.Ctx.Done()
		return
	}
	if err := a.Clk.Sleep(p.Ctx, delay); err != nil {
		return
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if a.P != p {
		return
	}
	ev := protocol.EvAdbConnected
	if outcome == core.AdbConnectFail {
		ev = protocol.EvAdbFailed
	}
	next, err := adbMachine.Step(r.state, ev)
	if err != nil {
		return
	}
	r.state = next
	r.finishedAt = a.NowMs()
	if ev == protocol.EvAdbFailed {
		r.code, r.msg = protocol.ErrAdbConnectionFailed, "SoloPi internal ADB connection failed"
	} else {
		a.Perms[core.PermADB] = true
	}
	if st(p).adb.active == r.requestID {
		st(p).adb.active = ""
	}
}

// adbConnectStatus is harness?type=adb-connect-status.
func (a *App) adbConnectStatus(p *core.Process, q core.Params) core.Obj {
	id := q["requestId"]
	now := a.NowMs()
	if id == "" {
		return failedAdbReceipt("", protocol.ErrMissingRequestID, "Parameter 'requestId' is required", now).wire()
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if r, found := st(p).adb.m[id]; found {
		return r.wire()
	}
	return core.NewObj("success", false, "state", "failed", "terminal", true, "connected", false,
		"userActionRequired", false, "errorCode", protocol.ErrAdbConnectReceiptNotFound,
		"error", "No matching ADB connection receipt is available", "requestId", id, "finishedAt", now)
}

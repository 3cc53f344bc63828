package soloapp

// stress: bounded CPU and memory load
// (docs/device-protocol.md#session-types). Nothing is burnt in the simulator:
// the stress service's live readings are simulated — the load is "applied and
// verified" a moment after the permission callback and reads back as zero a
// moment after a stop or the durationSec deadline.

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

var stressMachine = protocol.Stress()

// Simulated stress service timings (device time).
const (
	stressApplyTime   = 200 * time.Millisecond // threads and allocation running
	stressCleanupTime = 150 * time.Millisecond // loads read 0 (polled every 50 ms)
)

type stressSession struct {
	core.SessionClock
	id                                   string
	cpuCount, cpuPercent, memory, durSec int
	// live readings of the stress service
	targetCPU, activeCPU, targetMem, actualMem int
}

func (a *App) stepStressLocked(s *stressSession, ev protocol.Event, errMsg string) bool {
	if !a.StepClockLocked(stressMachine, &s.SessionClock, ev, errMsg) {
		return false
	}
	switch s.State {
	case protocol.SessionStopping:
		s.targetCPU, s.targetMem = 0, 0
	case protocol.SessionFailed, protocol.SessionStopped:
		s.targetCPU, s.activeCPU, s.targetMem, s.actualMem = 0, 0, 0, 0
	}
	return true
}

func (a *App) stressSnapshotLocked(p *core.Process) core.Obj {
	s := st(p).sx.stress
	o := core.OK("kind", "stress")
	if s == nil {
		o = append(o, core.NewObj("state", string(protocol.SessionIdle), "active", false, "terminal", false,
			"cpuCount", 0, "cpuPercent", 0, "memory", 0, "durationSec", 0)...)
		if !a.ext.stressUnavailable {
			o = append(o, core.NewObj("targetCpuCount", 0, "activeCpuCount", 0, "targetMemoryMb", 0, "actualMemoryMb", 0)...)
		}
		return o
	}
	o.Set("sessionId", s.id)
	o.Set("state", string(s.State))
	o.Set("active", stressMachine.IsLive(s.State))
	o.Set("terminal", stressMachine.IsTerminal(s.State))
	o.Set("cpuCount", s.cpuCount)
	o.Set("cpuPercent", s.cpuPercent)
	o.Set("memory", s.memory)
	o.Set("durationSec", s.durSec)
	if !a.ext.stressUnavailable {
		o.Set("targetCpuCount", s.targetCPU)
		o.Set("activeCpuCount", s.activeCPU)
		o.Set("targetMemoryMb", s.targetMem)
		o.Set("actualMemoryMb", s.actualMem)
	}
	if s.StartedAt != 0 {
		o.Set("startedAt", s.StartedAt)
	}
	if s.FinishedAt != 0 {
		o.Set("finishedAt", s.FinishedAt)
	}
	if s.Err != "" {
		o.Set("error", s.Err)
	}
	return o
}

func (a *App) stressResolver(ctx context.Context, p *core.Process, via core.Transport, q core.Params) core.Obj {
	act := q["action"]
	switch act {
	case "status":
		a.Mu.Lock()
		defer a.Mu.Unlock()
		return a.stressSnapshotLocked(p)
	case "start", "stop":
	default:
		return core.E1(protocol.ErrUnsupportedAction, "Unsupported stress action: "+core.JavaString(q, "action"))
	}
	if via != core.ViaAdb {
		return core.E1(protocol.ErrMutationTransportRequired, "Stress changes require the ADB scheme transport")
	}
	if act == "start" {
		return a.stressStart(p, q)
	}
	return a.stressStop(p, q)
}

func (a *App) stressStart(p *core.Process, q core.Params) core.Obj {
	sid := q["sessionId"]
	if sid == "" {
		return core.E1(protocol.ErrMissingSessionID, "Parameter 'sessionId' is required")
	}
	vals := map[string]int{"cpuCount": 0, "cpuPercent": 0, "memory": 0, "durationSec": 60}
	for k := range vals {
		v := strings.TrimSpace(q[k])
		if v == "" {
			continue
		}
		n, good := core.JavaParseInt(v)
		if !good {
			return core.E1(protocol.ErrInvalidStressValue, "Stress values must be integers")
		}
		vals[k] = int(n)
	}
	cpu, pct, mem, dur := vals["cpuCount"], vals["cpuPercent"], vals["memory"], vals["durationSec"]
	a.Mu.Lock()
	defer a.Mu.Unlock()
	nCPU := a.ext.cpuCount
	switch {
	case cpu < 0 || cpu > nCPU:
		return core.E1(protocol.ErrInvalidCpuCount, "cpuCount must be between 0 and "+strconv.Itoa(nCPU))
	case pct < 0 || pct > 100:
		return core.E1(protocol.ErrInvalidCpuPercent, "cpuPercent must be between 0 and 100")
	case (cpu == 0) != (pct == 0):
		return core.E1(protocol.ErrInvalidCpuStress, "cpuCount and cpuPercent must both be zero or positive")
	case mem < 0 || mem > 2048:
		return core.E1(protocol.ErrInvalidMemory, "memory must be between 0 and 2048 MB")
	case cpu == 0 && mem == 0:
		return core.E1(protocol.ErrEmptyStress, "At least CPU or memory stress is required")
	case dur < 1 || dur > 3600:
		return core.E1(protocol.ErrInvalidDuration, "durationSec must be between 1 and 3600")
	case a.ext.stressUnavailable:
		return core.E1(protocol.ErrStressServiceUnavailable, "Stress service is not available")
	}
	withStress := func(code, msg string) core.Obj {
		return append(core.E1(code, msg), core.KV{K: "stress", V: a.stressSnapshotLocked(p)})
	}
	if cur := st(p).sx.stress; cur != nil && stressMachine.IsLive(cur.State) {
		return withStress(protocol.ErrStressConflict, "A stress session is already active")
	}
	if p.MaintenanceLocked() {
		return withStress(protocol.ErrExternalStressConflict, "Plugin maintenance prevents starting CPU or memory stress")
	}
	if a.ext.externalStress {
		return withStress(protocol.ErrExternalStressConflict, "CPU or memory stress is already active outside this session")
	}
	s := &stressSession{SessionClock: core.SessionClock{State: stressMachine.Initial}, id: sid, cpuCount: cpu, cpuPercent: pct, memory: mem, durSec: dur}
	a.stepStressLocked(s, protocol.EvStart, "")
	st(p).sx.stress = s
	go a.applyStress(p, s, a.PermissionDialogLocked())
	return a.stressSnapshotLocked(p)
}

// applyStress requests adb and powerSave, applies the load, waits until it
// reads back and schedules the auto-zero at durationSec.
func (a *App) applyStress(p *core.Process, s *stressSession, dialog time.Duration) {
	alive := func() bool { return st(p).sx.stress == s && a.CurrentLocked(p) }
	if !a.SleepDevice(p, dialog) {
		return
	}
	a.Mu.Lock()
	if !alive() || s.State != protocol.SessionStarting {
		a.Mu.Unlock()
		return
	}
	if missing := a.MissingPermissionsLocked(core.PermADB, core.PermPowerSave); len(missing) > 0 {
		a.stepStressLocked(s, protocol.EvError, "Permission denied: "+strings.Join(missing, ","))
		a.Mu.Unlock()
		return
	}
	if p.MaintenanceLocked() {
		a.stepStressLocked(s, protocol.EvError, "Plugin maintenance prevents starting CPU or memory stress")
		a.Mu.Unlock()
		return
	}
	if a.ext.externalStress {
		a.stepStressLocked(s, protocol.EvError, "CPU or memory stress is already active outside this session")
		a.Mu.Unlock()
		return
	}
	s.targetCPU, s.targetMem = s.cpuCount, s.memory
	a.Mu.Unlock()
	if !a.SleepDevice(p, stressApplyTime) {
		return
	}
	a.Mu.Lock()
	if !alive() || s.State != protocol.SessionStarting {
		a.Mu.Unlock()
		return
	}
	s.activeCPU, s.actualMem = s.targetCPU, s.targetMem
	a.stepStressLocked(s, protocol.EvReady, "")
	deadline := time.Duration(s.durSec) * time.Second
	a.Mu.Unlock()
	if !a.SleepDevice(p, deadline) {
		return
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if alive() && a.stepStressLocked(s, protocol.EvAutoStop, "") {
		go a.zeroStress(p, s)
	}
}

// zeroStress waits for the loads to read 0 and publishes stopped.
func (a *App) zeroStress(p *core.Process, s *stressSession) {
	if !a.SleepDevice(p, stressCleanupTime) {
		return
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if st(p).sx.stress == s && a.CurrentLocked(p) {
		a.stepStressLocked(s, protocol.EvStopped, "")
	}
}

func (a *App) stressStop(p *core.Process, q core.Params) core.Obj {
	sid := q["sessionId"]
	if sid == "" {
		return core.E1(protocol.ErrMissingSessionID, "Parameter 'sessionId' is required")
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	s := st(p).sx.stress
	withStress := func(code, msg string) core.Obj {
		return append(core.E1(code, msg), core.KV{K: "stress", V: a.stressSnapshotLocked(p)})
	}
	if s == nil {
		return withStress(protocol.ErrStressNotActive, "No stress session is active")
	}
	if s.id != sid {
		return withStress(protocol.ErrSessionMismatch, "Stress sessionId does not match")
	}
	switch s.State {
	case protocol.SessionStarting:
		// No load was applied yet: nothing to clean up.
		s.targetCPU, s.targetMem = 0, 0
		a.stepStressLocked(s, protocol.EvStopBeforeStart, "")
	case protocol.SessionRunning:
		a.stepStressLocked(s, protocol.EvStop, "")
		go a.zeroStress(p, s)
	}
	return a.stressSnapshotLocked(p)
}

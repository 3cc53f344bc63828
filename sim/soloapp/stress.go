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
)

var stressMachine = protocol.Stress()

// Simulated stress service timings (device time).
const (
	stressApplyTime   = 200 * time.Millisecond // threads and allocation running
	stressCleanupTime = 150 * time.Millisecond // loads read 0 (polled every 50 ms)
)

type stressSession struct {
	sessionClock
	id                                   string
	cpuCount, cpuPercent, memory, durSec int
	// live readings of the stress service
	targetCPU, activeCPU, targetMem, actualMem int
}

func (a *App) stepStressLocked(s *stressSession, ev protocol.Event, errMsg string) bool {
	if !a.stepClockLocked(stressMachine, &s.sessionClock, ev, errMsg) {
		return false
	}
	switch s.state {
	case protocol.SessionStopping:
		s.targetCPU, s.targetMem = 0, 0
	case protocol.SessionFailed, protocol.SessionStopped:
		s.targetCPU, s.activeCPU, s.targetMem, s.actualMem = 0, 0, 0, 0
	}
	return true
}

func (a *App) stressSnapshotLocked(p *process) obj {
	s := st(p).sx.stress
	o := ok("kind", "stress")
	if s == nil {
		o = append(o, newObj("state", string(protocol.SessionIdle), "active", false, "terminal", false,
			"cpuCount", 0, "cpuPercent", 0, "memory", 0, "durationSec", 0)...)
		if !a.ext.stressUnavailable {
			o = append(o, newObj("targetCpuCount", 0, "activeCpuCount", 0, "targetMemoryMb", 0, "actualMemoryMb", 0)...)
		}
		return o
	}
	o.set("sessionId", s.id)
	o.set("state", string(s.state))
	o.set("active", stressMachine.IsLive(s.state))
	o.set("terminal", stressMachine.IsTerminal(s.state))
	o.set("cpuCount", s.cpuCount)
	o.set("cpuPercent", s.cpuPercent)
	o.set("memory", s.memory)
	o.set("durationSec", s.durSec)
	if !a.ext.stressUnavailable {
		o.set("targetCpuCount", s.targetCPU)
		o.set("activeCpuCount", s.activeCPU)
		o.set("targetMemoryMb", s.targetMem)
		o.set("actualMemoryMb", s.actualMem)
	}
	if s.startedAt != 0 {
		o.set("startedAt", s.startedAt)
	}
	if s.finishedAt != 0 {
		o.set("finishedAt", s.finishedAt)
	}
	if s.err != "" {
		o.set("error", s.err)
	}
	return o
}

func (a *App) stressResolver(ctx context.Context, p *process, via transport, q params) obj {
	act := q["action"]
	switch act {
	case "status":
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.stressSnapshotLocked(p)
	case "start", "stop":
	default:
		return e1(protocol.ErrUnsupportedAction, "Unsupported stress action: "+javaString(q, "action"))
	}
	if via != viaAdb {
		return e1(protocol.ErrMutationTransportRequired, "Stress changes require the ADB scheme transport")
	}
	if act == "start" {
		return a.stressStart(p, q)
	}
	return a.stressStop(p, q)
}

func (a *App) stressStart(p *process, q params) obj {
	sid := q["sessionId"]
	if sid == "" {
		return e1(protocol.ErrMissingSessionID, "Parameter 'sessionId' is required")
	}
	vals := map[string]int{"cpuCount": 0, "cpuPercent": 0, "memory": 0, "durationSec": 60}
	for k := range vals {
		v := strings.TrimSpace(q[k])
		if v == "" {
			continue
		}
		n, good := javaParseInt(v)
		if !good {
			return e1(protocol.ErrInvalidStressValue, "Stress values must be integers")
		}
		vals[k] = int(n)
	}
	cpu, pct, mem, dur := vals["cpuCount"], vals["cpuPercent"], vals["memory"], vals["durationSec"]
	a.mu.Lock()
	defer a.mu.Unlock()
	nCPU := a.ext.cpuCount
	switch {
	case cpu < 0 || cpu > nCPU:
		return e1(protocol.ErrInvalidCpuCount, "cpuCount must be between 0 and "+strconv.Itoa(nCPU))
	case pct < 0 || pct > 100:
		return e1(protocol.ErrInvalidCpuPercent, "cpuPercent must be between 0 and 100")
	case (cpu == 0) != (pct == 0):
		return e1(protocol.ErrInvalidCpuStress, "cpuCount and cpuPercent must both be zero or positive")
	case mem < 0 || mem > 2048:
		return e1(protocol.ErrInvalidMemory, "memory must be between 0 and 2048 MB")
	case cpu == 0 && mem == 0:
		return e1(protocol.ErrEmptyStress, "At least CPU or memory stress is required")
	case dur < 1 || dur > 3600:
		return e1(protocol.ErrInvalidDuration, "durationSec must be between 1 and 3600")
	case a.ext.stressUnavailable:
		return e1(protocol.ErrStressServiceUnavailable, "Stress service is not available")
	}
	withStress := func(code, msg string) obj { return append(e1(code, msg), kv{"stress", a.stressSnapshotLocked(p)}) }
	if cur := st(p).sx.stress; cur != nil && stressMachine.IsLive(cur.state) {
		return withStress(protocol.ErrStressConflict, "A stress session is already active")
	}
	if p.maintenanceLocked() {
		return withStress(protocol.ErrExternalStressConflict, "Plugin maintenance prevents starting CPU or memory stress")
	}
	if a.ext.externalStress {
		return withStress(protocol.ErrExternalStressConflict, "CPU or memory stress is already active outside this session")
	}
	s := &stressSession{sessionClock: sessionClock{state: stressMachine.Initial}, id: sid, cpuCount: cpu, cpuPercent: pct, memory: mem, durSec: dur}
	a.stepStressLocked(s, protocol.EvStart, "")
	st(p).sx.stress = s
	go a.applyStress(p, s, a.permissionDialogLocked())
	return a.stressSnapshotLocked(p)
}

// applyStress requests adb and powerSave, applies the load, waits until it
// reads back and schedules the auto-zero at durationSec.
func (a *App) applyStress(p *process, s *stressSession, dialog time.Duration) {
	alive := func() bool { return st(p).sx.stress == s && a.currentLocked(p) }
	if !a.sleepDevice(p, dialog) {
		return
	}
	a.mu.Lock()
	if !alive() || s.state != protocol.SessionStarting {
		a.mu.Unlock()
		return
	}
	if missing := a.missingPermissionsLocked(PermADB, PermPowerSave); len(missing) > 0 {
		a.stepStressLocked(s, protocol.EvError, "Permission denied: "+strings.Join(missing, ","))
		a.mu.Unlock()
		return
	}
	if p.maintenanceLocked() {
		a.stepStressLocked(s, protocol.EvError, "Plugin maintenance prevents starting CPU or memory stress")
		a.mu.Unlock()
		return
	}
	if a.ext.externalStress {
		a.stepStressLocked(s, protocol.EvError, "CPU or memory stress is already active outside this session")
		a.mu.Unlock()
		return
	}
	s.targetCPU, s.targetMem = s.cpuCount, s.memory
	a.mu.Unlock()
	if !a.sleepDevice(p, stressApplyTime) {
		return
	}
	a.mu.Lock()
	if !alive() || s.state != protocol.SessionStarting {
		a.mu.Unlock()
		return
	}
	s.activeCPU, s.actualMem = s.targetCPU, s.targetMem
	a.stepStressLocked(s, protocol.EvReady, "")
	deadline := time.Duration(s.durSec) * time.Second
	a.mu.Unlock()
	if !a.sleepDevice(p, deadline) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if alive() && a.stepStressLocked(s, protocol.EvAutoStop, "") {
		go a.zeroStress(p, s)
	}
}

// zeroStress waits for the loads to read 0 and publishes stopped.
func (a *App) zeroStress(p *process, s *stressSession) {
	if !a.sleepDevice(p, stressCleanupTime) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if st(p).sx.stress == s && a.currentLocked(p) {
		a.stepStressLocked(s, protocol.EvStopped, "")
	}
}

func (a *App) stressStop(p *process, q params) obj {
	sid := q["sessionId"]
	if sid == "" {
		return e1(protocol.ErrMissingSessionID, "Parameter 'sessionId' is required")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s := st(p).sx.stress
	withStress := func(code, msg string) obj { return append(e1(code, msg), kv{"stress", a.stressSnapshotLocked(p)}) }
	if s == nil {
		return withStress(protocol.ErrStressNotActive, "No stress session is active")
	}
	if s.id != sid {
		return withStress(protocol.ErrSessionMismatch, "Stress sessionId does not match")
	}
	switch s.state {
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

package sessions

// Bounded CPU and memory load (docs/device-protocol.md): stress-start, -status,
// -stop. Stress must never be left running by this host: every path of
// stress-start that does not end in `running` (device failure, contract
// violation, timeout, interrupt) sends a stop for exactly our sessionId.

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
)

// CodeCPUCountUnknown is exit 4: the device did not say how many CPUs it has.

// stressSpec describes the session type; a fresh value per call keeps
// the protocol tables unshared.
func stressSpec() *sessionSpec {
	return &sessionSpec{
		Name:     "stress",
		Kind:     "stress",
		Action:   protocol.ActionStress,
		Status:   device.P(protocol.ParamAction, "status"),
		Machine:  protocol.Stress(),
		Validate: validateStress,
		Latest:   "latestStress",
		Key:      "stress",
		StopParams: func(id string) device.Params {
			return device.P(protocol.ParamAction, "stop", protocol.ParamSessionID, id)
		},
		Stoppable: []protocol.State{protocol.SessionStarting, protocol.SessionRunning},
	}
}

// validateStress is the host validator.
func validateStress(o device.WireObject) error {
	var v device.Violations
	s := v.MachineFlags(o, protocol.Stress(), nil)
	if s != "" && s != protocol.SessionIdle {
		id, _ := o.Text("sessionId")
		v.Check(id != "", "a %s stress session has no sessionId", s)
	}
	if o.Has("error") {
		_, ok := o.Text("error")
		v.Check(ok, "error is not a string")
	}
	for _, r := range []struct {
		k      string
		lo, hi int64
	}{{"cpuCount", 0, 1 << 16}, {"cpuPercent", 0, 100}, {"memory", 0, 2048}} {
		n, ok := o.Integer(r.k)
		v.Check(ok && n >= r.lo && n <= r.hi, "%s=%v is not an integer in %d..%d", r.k, o[r.k], r.lo, r.hi)
	}
	if o.Has("durationSec") {
		n, ok := o.Integer("durationSec")
		v.Check(ok && n >= 0 && n <= 3600, "durationSec=%v is not an integer in 0..3600", o["durationSec"])
	}
	return v.Err("stress status", o)
}

// StressOptions are the requested loads. Zero means "not requested".
type StressOptions struct {
	CPUCount    int
	CPUPercent  int
	MemoryMB    int
	DurationSec int // default 60
	SessionTimings
}

// Validate checks the request without the device (exit 3).
func (o *StressOptions) Validate() error {
	if o.DurationSec == 0 {
		o.DurationSec = 60
	}
	switch {
	case (o.CPUCount == 0) != (o.CPUPercent == 0):
		return fault.Usage(fault.CodeInvalidOption, "--cpu-count and --cpu-percent must be given together")
	case o.CPUCount < 0:
		return fault.Usage(fault.CodeInvalidOption, "--cpu-count must be positive").With("cpuCount", o.CPUCount).With("maxCpuCount", nil)
	case o.CPUPercent < 0 || o.CPUPercent > 100:
		return fault.Usage(fault.CodeInvalidOption, "--cpu-percent must be between 1 and 100").With("cpuPercent", o.CPUPercent)
	case o.MemoryMB < 0 || o.MemoryMB > 2048:
		return fault.Usage(fault.CodeInvalidOption, "--memory must be between 1 and 2048 MB").With("memory", o.MemoryMB).With("maxMemory", 2048)
	case o.DurationSec < 1 || o.DurationSec > 3600:
		return fault.Usage(fault.CodeInvalidOption, "--duration must be between 1 and 3600 seconds").With("duration", o.DurationSec).With("maxDuration", 3600)
	case o.CPUCount == 0 && o.MemoryMB == 0:
		return fault.Usage(fault.CodeInvalidOption, "request CPU load (--cpu-count with --cpu-percent), memory load (--memory), or both")
	}
	return nil
}

// onlineCPUs reads the device's online CPU count (getconf, then nproc).
func onlineCPUs(ctx context.Context, d *device.Device) (int, error) {
	// attempts are solopi-ai's: the argv, returncode, stdout and stderr.
	var attempts []map[string]any
	for _, argv := range [][]string{{"getconf", "_NPROCESSORS_ONLN"}, {"nproc"}} {
		stdout, stderr, code, err := d.Transport().Shell(ctx, device.ShellJoin(argv...))
		if err != nil {
			if ie := device.CtxErr(ctx, err); ie != nil {
				return 0, ie
			}
			return 0, fault.Wrap(fault.Transport, fault.CodeAdbError, "adb shell failed while reading the CPU count", err)
		}
		if n, perr := strconv.Atoi(strings.TrimSpace(string(stdout))); code == 0 && perr == nil && n > 0 {
			return n, nil
		}
		attempts = append(attempts, map[string]any{"command": argv, "returncode": code,
			"stdout": device.Truncate(strings.TrimSpace(string(stdout)), 500), "stderr": device.Truncate(strings.TrimSpace(string(stderr)), 500)})
	}
	return 0, fault.New(fault.Transport, fault.CodeCPUCountUnknown, "the device did not report its online CPU count (getconf _NPROCESSORS_ONLN, nproc)").
		With("attempts", attempts)
}

// StartStress applies the load under a fresh sessionId and waits for
// `running`. Anything else ends with an exact stop of that session.
func StartStress(ctx context.Context, d *device.Device, o StressOptions) (*StartResult, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.CPUCount > 0 {
		n, err := onlineCPUs(ctx, d)
		if err != nil {
			return nil, err
		}
		if o.CPUCount > n {
			return nil, fault.Usagef(fault.CodeInvalidOption, "--cpu-count %d exceeds the device's %d online CPUs", o.CPUCount, n).With("onlineCpus", n).
				With("cpuCount", o.CPUCount).With("maxCpuCount", n)
		}
	}
	t := o.SessionTimings.or(30*time.Second, 500*time.Millisecond)
	id := device.NewRequestID()
	return stressSpec().start(ctx, d, startPlan{
		SessionID: id,
		Params: device.P(protocol.ParamAction, "start", protocol.ParamSessionID, id, protocol.ParamCPUCount, strconv.Itoa(o.CPUCount),
			protocol.ParamCPUPercent, strconv.Itoa(o.CPUPercent), protocol.ParamMemory, strconv.Itoa(o.MemoryMB),
			protocol.ParamDurationSec, strconv.Itoa(o.DurationSec)),
		Done:    []protocol.State{protocol.SessionRunning, protocol.SessionStopping, protocol.SessionStopped, protocol.SessionFailed},
		Success: []protocol.State{protocol.SessionRunning},
		Timeout: t.Timeout, Interval: t.Interval, CleanupWait: 15 * time.Second, Phase: "stress-start",
		AlwaysStop: true,
		Check: func(w device.WireObject) error {
			c, _ := w.Integer("cpuCount")
			p, _ := w.Integer("cpuPercent")
			m, _ := w.Integer("memory")
			if c != int64(o.CPUCount) || p != int64(o.CPUPercent) || m != int64(o.MemoryMB) {
				return device.ContractError("the stress session does not echo the requested cpuCount, cpuPercent and memory", map[string]any(w))
			}
			return nil
		},
	})
}

// StressStatus reads the stress snapshot (exit 2 on a mismatch).
func StressStatus(ctx context.Context, d *device.Device, sessionID string) (map[string]any, error) {
	return stressSpec().statusResult(ctx, d, sessionID)
}

// StopStress stops our stress session; a session the device already
// stopped on its own (auto-stop after durationSec) is reported as stopped.
func StopStress(ctx context.Context, d *device.Device, sessionID string, t SessionTimings) (*StopResult, error) {
	if err := RequireSessionID(sessionID); err != nil {
		return nil, err
	}
	t = t.or(30*time.Second, 500*time.Millisecond)
	return stressSpec().stop(ctx, d, stopPlan{SessionID: sessionID, Timeout: t.Timeout, Interval: t.Interval,
		Phase: "stress-stop", Success: []protocol.State{protocol.SessionStopped}, FailureCode: fault.CodeSessionFailed})
}

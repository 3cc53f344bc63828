// Package devicehost is a farm worker's view of the phones its host's adb
// server sees: it lists them, probes one the way `doctor` does, and runs a
// claimed shard on exactly the leased phone with verify-run's own code
// (verify/onphone), so that a farm never runs a plan differently from
// verify-run. Every device operation is bound to one serial.
package devicehost

import (
	"context"
	"strconv"
	"strings"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/managed/worker"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/devicelock"
	"github.com/solopi-dev/solopi/solopi/readiness"
	"github.com/solopi-dev/solopi/solopi/video"
	"github.com/solopi-dev/solopi/verify/onphone"
)

// Host is this host's phones.
type Host struct {
	Devices device.Selector
	// Session opens SoloPi on a phone (package, port, timeouts). A bound
	// phone reports nothing to a status line: the worker's line counts its
	// shards, so Session.Device.Progress is ignored.
	Session device.SessionOptions
	// Budgets are each shard's verify-run budgets.
	Budgets onphone.Budgets
	// Locks are the host-wide device locks a worker holds while it drives
	// a phone (nil: none).
	Locks *devicelock.Locker
	// Video records each shard's run as verify-run --video does (off,
	// on-failure, always): the recording lands in the attempt's evidence
	// with its digest in the manifest, and never changes the verdict.
	Video video.Mode
	// Perf records these SoloPi performance items around each shard's
	// plan (perf.go): perf/ of the attempt's evidence; never a verdict.
	Perf []string
}

var (
	_ worker.DeviceLister  = Host{}
	_ worker.DeviceProber  = Host{}
	_ worker.ShardExecutor = Host{}
)

// OnlineSerials lists the serials the adb server reports in state
// "device".
func (h Host) OnlineSerials(ctx context.Context) ([]string, error) {
	return h.Devices.Online(ctx)
}

// sessionOptions are the session options of a bound phone.
func (h Host) sessionOptions(preserveForeground bool) device.SessionOptions {
	o := h.Session
	o.Device.Progress = nil
	o.PreserveForeground = preserveForeground
	return o
}

// ProbeDevice reads the API level and runs the doctor on exactly serial.
func (h Host) ProbeDevice(ctx context.Context, serial string) (worker.ProbeReport, error) {
	t, err := h.Devices.Bind(ctx, serial)
	if err != nil {
		return worker.ProbeReport{}, err
	}
	level, err := apiLevel(ctx, t)
	if err != nil {
		return worker.ProbeReport{}, err
	}
	r, err := readiness.Doctor(ctx, t, readiness.DoctorOptions{Session: h.sessionOptions(false), Device: device.Describe(ctx, t)})
	if err != nil {
		return worker.ProbeReport{APILevel: level}, err
	}
	return worker.ProbeReport{APILevel: level, Installed: r.Installed, Ready: r.Ready, Doctor: r,
		ErrorCode: r.ErrorCode, Error: r.Error, UserAction: r.UserActionRequired}, nil
}

// apiLevel is the device's ro.build.version.sdk.
func apiLevel(ctx context.Context, t device.Transport) (int, error) {
	stdout, _, code, err := t.Shell(ctx, device.ShellJoin("getprop", "ro.build.version.sdk"))
	if err != nil {
		return 0, err
	}
	v := strings.TrimSpace(string(stdout))
	n, convErr := strconv.Atoi(v)
	if code != 0 || convErr != nil || n < 1 {
		return 0, fault.New(fault.Transport, fault.CodeAPILevelUnreadable, "the device did not report its API level (getprop ro.build.version.sdk)").
			With("serial", t.Serial()).With("output", v)
	}
	return n, nil
}

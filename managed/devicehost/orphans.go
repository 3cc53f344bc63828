package devicehost

import (
	"context"
	"encoding/json"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/managed/worker"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/replay"
	"github.com/solopi-dev/solopi/verify"
)

// CodeOrphanReplay: a replay nobody owns any more (a worker killed
// mid-replay whose lease expired) held the leased phone and could not be
// cancelled; the shard is retried (a transport failure).

var _ worker.DeviceLocker = Host{}

// LockDevice takes serial's host-wide lock (solopi/devicelock) without
// waiting; without Locks it locks nothing.
func (h Host) LockDevice(ctx context.Context, serial string) (func(), error) {
	if h.Locks == nil {
		return func() {}, nil
	}
	l, err := h.Locks.Acquire(ctx, serial, 0)
	if err != nil {
		return nil, err
	}
	return func() { _ = l.Release() }, nil
}

// cancelOrphanReplay ends a replay that is active on the leased phone
// before the shard begins. Nobody can own it: the farm's lease fences
// every other worker off the phone and the host-wide device lock every
// other solopi process of this host, so it is the replay of a worker that
// died mid-replay (SIGKILL, a crash) and whose lease expired, or of one
// that lost its lease and has not noticed yet. Left running, it would
// meet every shard placed on the phone as replay_active. The device's
// contract lets any client cancel a run by its runId; a run that ends on
// its own meanwhile is as good.
func (h Host) cancelOrphanReplay(ctx context.Context, d *device.Device) error {
	st, err := replay.FetchReplayStatus(ctx, d)
	if err != nil || !st.Active {
		return err
	}
	p := h.Budgets.Phone
	_, err = replay.CancelRun(ctx, d, st.RunID, p.AckTimeout, p.PollInterval)
	switch fault.CodeOf(err) {
	case "", fault.CodeRunFinishedBeforeCancel, fault.CodeRunNotActive:
		return nil
	}
	if ctx.Err() != nil {
		return err
	}
	return fault.Wrap(fault.Transport, fault.CodeOrphanReplayActive, "a replay nobody owns holds the leased phone and could not be cancelled: "+fault.From(err).Message, err).
		With("serial", d.Serial()).With("activeRun", st.Object)
}

// infrastructureReason is the first reason in a not_tested verification
// report that names a fault of the phone, the adb link, SoloPi or another
// owner on the phone (verify.Infrastructure), "" when there is none or the
// report is not not_tested: a product verdict, or a not_tested the plan's
// inputs earned (a missing decision), is the shard's verdict.
func infrastructureReason(report []byte) string {
	var r struct {
		Status    string `json:"status"`
		Scenarios []struct {
			Failure *struct {
				Reason *string `json:"reason"`
			} `json:"failure"`
			Segments []struct {
				Reason *string `json:"reason"`
			} `json:"segments"`
			Checkpoints []struct {
				Reason *string `json:"reason"`
			} `json:"checkpoints"`
		} `json:"scenarios"`
	}
	if json.Unmarshal(report, &r) != nil || r.Status != verify.NotTested {
		return ""
	}
	for _, sc := range r.Scenarios {
		reasons := []*string{}
		for _, seg := range sc.Segments {
			reasons = append(reasons, seg.Reason)
		}
		if sc.Failure != nil {
			reasons = append(reasons, sc.Failure.Reason)
		}
		for _, cp := range sc.Checkpoints {
			reasons = append(reasons, cp.Reason)
		}
		for _, reason := range reasons {
			if reason != nil && verify.Infrastructure(*reason) {
				return *reason
			}
		}
	}
	return ""
}

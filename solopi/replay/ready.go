package replay

import (
	"context"
	"time"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/device"
)

// CodeCaseChanged: the device's case is no longer the version the caller
// bound the run to (RunOptions.CaseFingerprint); nothing was started.

// checkBound refuses a case read back with another fingerprint than the
// one the caller bound the run to.
func (o *RunOptions) checkBound(ci *deviceCase) error {
	if o.CaseFingerprint == "" || ci.Fingerprint == o.CaseFingerprint {
		return nil
	}
	return fault.New(fault.Failed, fault.CodeCaseChanged, "the device's case "+o.CaseName+" changed after it was checked; the run was not started").
		With("caseName", o.CaseName).With("expectedCaseFingerprint", o.CaseFingerprint).With("caseFingerprint", ci.Fingerprint)
}

// Ready is the run preflight's device part, before any case: auto-start
// turned on (unless noAutoStart, when it must already be on), the
// permissions and initialisation a replay needs (device_not_ready), and no
// replay running (replay_active). A phone that passes can take runs.
func Ready(ctx context.Context, d *device.Device, noAutoStart bool, ackTimeout time.Duration) error {
	if ackTimeout <= 0 {
		ackTimeout = 15 * time.Second
	}
	if !noAutoStart {
		if _, err := ensureAutoStart(ctx, d, ackTimeout); err != nil {
			return err
		}
	}
	if err := checkReplayHealth(ctx, d); err != nil {
		return err
	}
	st, err := FetchReplayStatus(ctx, d)
	if err != nil {
		return err
	}
	if st.Active {
		return fault.New(fault.Failed, fault.CodeReplayActive, "a replay is already running on the device").With("activeRun", st.Object)
	}
	return nil
}

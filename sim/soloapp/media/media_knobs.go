package media

import (
	"fmt"
	"time"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// ConfirmScreenRecord answers the MediaProjection system dialog of the
// pending screen recording: grant starts the encoder, refusal fails the
// session.
func (a *Media) ConfirmScreenRecord(grant bool) error {
	a.Mu.Lock()
	p := a.P
	s := SessionsOf(p).screen
	if s == nil || s.State != protocol.ScreenPending {
		a.Mu.Unlock()
		return fmt.Errorf("screen-record confirmation: %w", core.ErrNoPendingSession)
	}
	a.Mu.Unlock()
	a.answerScreenDialog(p, s, grant)
	return nil
}

// SetScreenRecordAutoConfirm makes every future MediaProjection dialog be
// granted by the (simulated) user 300 ms of device time after it opens.
func (a *Media) SetScreenRecordAutoConfirm(on bool) {
	a.Locked(func() { a.autoConfirm = on })
}

// SetExternalScreenRecorder simulates another SoloPi recorder (for example
// a case's startRecordScreen action) holding the ScreenRecorderLease.
func (a *Media) SetExternalScreenRecorder(active bool) {
	a.Locked(func() { a.ExternalRecorder = active })
}

// SetVideoAnalysisDuration sets how long (device time) a simulated video
// analysis runs before its receipt completes (default 1.5 s).
func (a *Media) SetVideoAnalysisDuration(d time.Duration) {
	a.Locked(func() { a.videoAnalysisTime = d })
}

// SetScreenEncoderDelay sets how long (device time) the recorder service
// takes from the granted dialog to a running encoder (default 200 ms), the
// window in which a stop is a cancellation before start.
func (a *Media) SetScreenEncoderDelay(d time.Duration) {
	a.Locked(func() { a.encoderStartTime = d })
}

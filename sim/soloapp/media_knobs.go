package soloapp

import (
	"fmt"
	"time"

	"github.com/solopi-dev/solopi/protocol"
)

// ConfirmScreenRecord answers the MediaProjection system dialog of the
// pending screen recording: grant starts the encoder, refusal fails the
// session.
func (a *Media) ConfirmScreenRecord(grant bool) error {
	a.mu.Lock()
	p := a.p
	s := mediaSx(p).screen
	if s == nil || s.state != protocol.ScreenPending {
		a.mu.Unlock()
		return fmt.Errorf("screen-record confirmation: %w", ErrNoPendingSession)
	}
	a.mu.Unlock()
	a.answerScreenDialog(p, s, grant)
	return nil
}

// SetScreenRecordAutoConfirm makes every future MediaProjection dialog be
// granted by the (simulated) user 300 ms of device time after it opens.
func (a *Media) SetScreenRecordAutoConfirm(on bool) {
	a.locked(func() { a.autoConfirm = on })
}

// SetExternalScreenRecorder simulates another SoloPi recorder (for example
// a case's startRecordScreen action) holding the ScreenRecorderLease.
func (a *Media) SetExternalScreenRecorder(active bool) {
	a.locked(func() { a.externalRecorder = active })
}

// SetVideoAnalysisDuration sets how long (device time) a simulated video
// analysis runs before its receipt completes (default 1.5 s).
func (a *Media) SetVideoAnalysisDuration(d time.Duration) {
	a.locked(func() { a.videoAnalysisTime = d })
}

// SetScreenEncoderDelay sets how long (device time) the recorder service
// takes from the granted dialog to a running encoder (default 200 ms), the
// window in which a stop is a cancellation before start.
func (a *Media) SetScreenEncoderDelay(d time.Duration) {
	a.locked(func() { a.encoderStartTime = d })
}

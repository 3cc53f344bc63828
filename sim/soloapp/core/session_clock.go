package core

import (
	"github.com/solopi-dev/solopi/protocol"
)

// SessionClock is the state and times shared by the recording-style
// sessions (performance, performance display, record, screen-record,
// stress).
type SessionClock struct {
	State                 protocol.State
	StartedAt, FinishedAt int64
	Err                   string
}

// SetTimes writes startedAt and finishedAt when they are set, and
// durationMs from the start to the finish, or to now while the session
// runs.
func (c *SessionClock) SetTimes(o *Obj, now int64) {
	if c.StartedAt != 0 {
		o.Set("startedAt", c.StartedAt)
	}
	if c.FinishedAt != 0 {
		o.Set("finishedAt", c.FinishedAt)
	}
	if c.StartedAt != 0 {
		end := c.FinishedAt
		if end == 0 {
			end = now
		}
		o.Set("durationMs", end-c.StartedAt)
	}
}

// StepClockLocked moves c through ev on m. The working state (recording or
// running) stamps startedAt; failed keeps errMsg and stopped clears the
// error, both stamping finishedAt; any other state keeps a non-empty
// errMsg. False when the table forbids ev.
func (a *App) StepClockLocked(m *protocol.Machine, c *SessionClock, ev protocol.Event, errMsg string) bool {
	next, err := m.Step(c.State, ev)
	if err != nil {
		return false
	}
	c.State = next
	switch next {
	case protocol.SessionRecording, protocol.SessionRunning:
		c.StartedAt = a.NowMs()
	case protocol.SessionFailed:
		c.Err = errMsg
		c.FinishedAt = a.NowMs()
	case protocol.SessionStopped:
		c.Err = ""
		c.FinishedAt = a.NowMs()
	default:
		if errMsg != "" {
			c.Err = errMsg
		}
	}
	return true
}

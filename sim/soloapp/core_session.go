package soloapp

import "github.com/solopi-dev/solopi/protocol"

// sessionClock is the state and times shared by the recording-style
// sessions (performance, performance display, record, screen-record,
// stress).
type sessionClock struct {
	state                 protocol.State
	startedAt, finishedAt int64
	err                   string
}

// setTimes writes startedAt and finishedAt when they are set, and
// durationMs from the start to the finish, or to now while the session
// runs.
func (c *sessionClock) setTimes(o *obj, now int64) {
	if c.startedAt != 0 {
		o.set("startedAt", c.startedAt)
	}
	if c.finishedAt != 0 {
		o.set("finishedAt", c.finishedAt)
	}
	if c.startedAt != 0 {
		end := c.finishedAt
		if end == 0 {
			end = now
		}
		o.set("durationMs", end-c.startedAt)
	}
}

// stepClockLocked moves c through ev on m. The working state (recording or
// running) stamps startedAt; failed keeps errMsg and stopped clears the
// error, both stamping finishedAt; any other state keeps a non-empty
// errMsg. False when the table forbids ev.
func (a *appCore) stepClockLocked(m *protocol.Machine, c *sessionClock, ev protocol.Event, errMsg string) bool {
	next, err := m.Step(c.state, ev)
	if err != nil {
		return false
	}
	c.state = next
	switch next {
	case protocol.SessionRecording, protocol.SessionRunning:
		c.startedAt = a.nowMs()
	case protocol.SessionFailed:
		c.err = errMsg
		c.finishedAt = a.nowMs()
	case protocol.SessionStopped:
		c.err = ""
		c.finishedAt = a.nowMs()
	default:
		if errMsg != "" {
			c.err = errMsg
		}
	}
	return true
}

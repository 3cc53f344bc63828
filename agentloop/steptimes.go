package agentloop

import (
	"time"

	"github.com/solopi-dev/solopi/solopi/video"
)

// StepTime is one planning step of a run on its timeline (agent-run's
// stepTimeline): when it began after the run's start, how long it took
// (to the next step's first event, or the run's last), the action the
// model proposed, whether it went through, and, with a kept recording,
// its moment in it.
type StepTime struct {
	Step       int    `json:"step"`
	Action     string `json:"action,omitempty"`
	Status     string `json:"status"`
	OffsetMs   int64  `json:"offsetMs"`
	DurationMs int64  `json:"durationMs"`
	// Message is a failed step's first failure.
	Message string `json:"message,omitempty"`
	// Video is the recording's part and the second in it.
	Video *video.Moment `json:"video,omitempty"`
}

// Step statuses of the timeline.
const (
	stepPassed = "passed"
	stepFailed = "failed"
)

// StepTimeline is the run's steps from its events (the trajectory's):
// a step failed when its action was not carried out (execution without
// success), its verification failed, or the model's answer or a request
// was refused. rec, when kept, puts each step on the recording.
func StepTimeline(events []AgentEvent, started time.Time, rec *VideoRecord) []StepTime {
	var out []StepTime
	index := map[int]int{}
	var last time.Time
	for _, ev := range events {
		if ev.Timestamp.After(last) {
			last = ev.Timestamp
		}
		if ev.Step <= 0 {
			continue
		}
		i, ok := index[ev.Step]
		if !ok {
			out = append(out, StepTime{Step: ev.Step, Status: stepPassed, OffsetMs: max(ev.Timestamp.Sub(started).Milliseconds(), 0)})
			i = len(out) - 1
			index[ev.Step] = i
		}
		s := &out[i]
		if ev.Type == EvAction {
			if f, ok := ev.Payload["action"].(map[string]any); ok {
				s.Action, _ = f["action"].(string)
			}
		}
		if failed(ev) && s.Status != stepFailed {
			s.Status, s.Message = stepFailed, ev.Message
			if e, ok := ev.Payload["error"].(string); ok && e != "" {
				s.Message += ": " + e
			}
		}
	}
	for i := range out {
		end := last.Sub(started).Milliseconds()
		if i+1 < len(out) {
			end = out[i+1].OffsetMs
		}
		out[i].DurationMs = max(end-out[i].OffsetMs, 0)
		out[i].Video = rec.moment(started.Add(time.Duration(out[i].OffsetMs) * time.Millisecond))
	}
	return out
}

// failed reports an event that makes its step a failure.
func failed(ev AgentEvent) bool {
	switch ev.Type {
	case evError, evProtocolReject:
		return true
	case evExecution:
		ok, _ := ev.Payload["command_success"].(bool)
		return !ok
	case EvVerification:
		return ev.Payload["status"] == VerifyFailed
	}
	return false
}

// moment is at in the kept recording (nil without one).
func (r *VideoRecord) moment(at time.Time) *video.Moment {
	if r == nil || !r.Kept || r.StartedAt == nil {
		return nil
	}
	return video.MomentIn(r.Files, time.Duration(r.PartSeconds*float64(time.Second)), at.Sub(*r.StartedAt))
}

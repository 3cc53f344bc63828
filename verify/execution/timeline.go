package execution

// The run's segment timeline (timeline.json, the output's segments[]):
// every segment's start, duration and state, with its steps: a replay
// segment's from the replay's own step timeline (the device's log, the
// run response's steps[]), an explore segment's from its Agent receipts,
// timed on the host around each action. With a recording each segment
// and step also carries its moment in its phone's video.

import (
	"time"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/solopi/video"
	"github.com/solopi-dev/solopi/verify"
)

// TimelineFile is the timeline's file name in the evidence directory.
const TimelineFile = "timeline.json"

// Step statuses of an explore segment's steps (a replay's are its own:
// passed, failed, unfinished).
const (
	stepPassed = "passed"
	stepFailed = "failed"
)

// Timeline is timeline.json.
type Timeline struct {
	// StartedAt and FinishedAt are the run's (epoch ms, host clock).
	StartedAt  int64             `json:"startedAt"`
	FinishedAt int64             `json:"finishedAt"`
	Segments   []SegmentTimeline `json:"segments"`
	// Videos are the phones' recordings (--video), one per phone.
	Videos []PhoneVideo `json:"videos,omitempty"`
}

// SegmentTimeline is one segment that ran.
type SegmentTimeline struct {
	ScenarioID string `json:"scenarioId"`
	SegmentID  string `json:"segmentId"`
	Phase      string `json:"phase"`
	Route      string `json:"route"`
	Serial     string `json:"serial,omitempty"`
	State      string `json:"state"`
	Reason     string `json:"reason,omitempty"`
	// OffsetMs is the segment's start after the run's; DurationMs how
	// long it ran (host clock, as events.jsonl).
	OffsetMs   int64 `json:"offsetMs"`
	DurationMs int64 `json:"durationMs"`
	// FailedStepID is the replay's failing step (a failed segment).
	FailedStepID string         `json:"failedStepId,omitempty"`
	Steps        []TimelineStep `json:"steps"`
	// Video is the segment's moment in its phone's recording, when one
	// was kept.
	Video *video.Moment `json:"video,omitempty"`
}

// TimelineStep is one step of a segment: a replayed case step, or one
// Agent action of an explore step.
type TimelineStep struct {
	Index  int    `json:"index"`
	StepID string `json:"stepId,omitempty"`
	Action string `json:"action,omitempty"`
	Status string `json:"status"`
	// OffsetMs is the step's start after the run's start.
	OffsetMs   int64         `json:"offsetMs"`
	DurationMs int64         `json:"durationMs"`
	Message    string        `json:"message,omitempty"`
	Video      *video.Moment `json:"video,omitempty"`
}

// segmentTrace collects one segment's steps while it runs.
type segmentTrace struct {
	steps []TimelineStep
	// startedAt is the segment's start (epoch ms), the clamp of the
	// replay's device-timed steps.
	startedAt int64
}

// replaySteps reads the run response's steps[] (the replay's timeline from
// the device's log). Their times are the device's wall clock on the UTC
// timeline; they are placed after the run's start and kept inside the
// segment's window [from, to], so a phone whose clock drifts from the
// host's cannot put a step outside the segment that ran it.
func replaySteps(response map[string]any, runStart, from, to int64) []TimelineStep {
	raw, ok := response["steps"]
	if !ok {
		return nil
	}
	b, err := canonjson.Marshal(raw)
	if err != nil {
		return nil
	}
	var steps []struct {
		Index      int    `json:"index"`
		StepID     string `json:"stepId"`
		Action     string `json:"action"`
		Status     string `json:"status"`
		Start      string `json:"start"`
		DurationMs int64  `json:"durationMs"`
		Message    string `json:"message"`
	}
	if canonjson.Unmarshal(b, &steps) != nil {
		return nil
	}
	out := make([]TimelineStep, 0, len(steps))
	for _, s := range steps {
		at := from
		if t, err := time.Parse(time.RFC3339Nano, s.Start); err == nil {
			at = min(max(t.UnixMilli(), from), to)
		}
		out = append(out, TimelineStep{Index: s.Index, StepID: s.StepID, Action: s.Action, Status: s.Status,
			OffsetMs: at - runStart, DurationMs: max(min(s.DurationMs, to-at), 0), Message: s.Message})
	}
	return out
}

// actStep is one Agent action as a timeline step: its receipt's status
// (succeeded is passed, anything else failed, with the receipt's error).
func actStep(i int, req ActRequest, res *ActResult, err error, start, end, runStart int64) TimelineStep {
	s := TimelineStep{Index: i, StepID: req.StepID, Action: req.Action, Status: stepPassed, OffsetMs: start - runStart, DurationMs: max(end-start, 0)}
	switch {
	case err != nil:
		s.Status, s.Message = stepFailed, err.Error()
	case res == nil || res.Status != "succeeded":
		s.Status = stepFailed
		if res != nil {
			s.Message = "receipt " + res.Status
			if msg, ok := res.Response["error"].(string); ok && msg != "" {
				s.Message += ": " + msg
			}
		}
	}
	return s
}

// recordSegment adds a finished segment to the run's timeline.
func (r *run) recordSegment(sc *verify.Scenario, seg *verify.Segment, o *verify.SegmentOutcome, tr *segmentTrace, end int64) {
	st := SegmentTimeline{ScenarioID: sc.ID, SegmentID: seg.ID, Phase: seg.Phase, Route: seg.Route, State: o.State, Reason: o.Reason,
		OffsetMs: tr.startedAt - r.rec.StartedAt, DurationMs: max(end-tr.startedAt, 0), FailedStepID: o.FailedStepID, Steps: tr.steps}
	if st.Steps == nil {
		st.Steps = []TimelineStep{}
	}
	if len(r.e.Phones) > 1 {
		st.Serial = r.p.Serial
	}
	r.mu.Lock()
	r.segments = append(r.segments, st)
	r.mu.Unlock()
}

// timeline is the run's timeline, the recordings' moments put on it.
func (r *run) timeline(videos []PhoneVideo) *Timeline {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := &Timeline{StartedAt: r.rec.StartedAt, FinishedAt: r.rec.FinishedAt, Segments: append([]SegmentTimeline{}, r.segments...), Videos: videos}
	for i := range t.Segments {
		s := &t.Segments[i]
		v := videoOf(videos, s.Serial)
		if v == nil {
			continue
		}
		s.Video = v.moment(s.OffsetMs)
		for j := range s.Steps {
			s.Steps[j].Video = v.moment(s.Steps[j].OffsetMs)
		}
	}
	return t
}

// redact hides the run's owner tokens and secrets in the timeline's texts
// (the output carries it as well as timeline.json).
func (t *Timeline) redact(red func(string) string) {
	for i := range t.Segments {
		s := &t.Segments[i]
		for j := range s.Steps {
			s.Steps[j].Message = red(s.Steps[j].Message)
		}
	}
}

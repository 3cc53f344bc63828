package report

import (
	"strconv"
)

// verifyTimeline is the file of a verification run's segment timeline
// (verify/execution's timeline.json).
const verifyTimeline = "timeline.json"

// timelineFile of a verification run, as the report reads it.
type verifyTimelineFile struct {
	Segments []struct {
		ScenarioID string          `json:"scenarioId"`
		SegmentID  string          `json:"segmentId"`
		Serial     string          `json:"serial"`
		OffsetMs   int64           `json:"offsetMs"`
		DurationMs int64           `json:"durationMs"`
		Video      *timelineMoment `json:"video"`
		Steps      []struct {
			Index      int             `json:"index"`
			StepID     string          `json:"stepId"`
			Action     string          `json:"action"`
			Status     string          `json:"status"`
			OffsetMs   int64           `json:"offsetMs"`
			DurationMs int64           `json:"durationMs"`
			Message    string          `json:"message"`
			Video      *timelineMoment `json:"video"`
		} `json:"steps"`
	} `json:"segments"`
	Videos []struct {
		Serial string `json:"serial"`
		Kept   bool   `json:"kept"`
		Files  []struct {
			Path string `json:"path"`
		} `json:"files"`
	} `json:"videos"`
}

type timelineMoment struct {
	File    string  `json:"file"`
	Seconds float64 `json:"seconds"`
}

// segmentTimeline is one segment's place on the run's timeline.
type segmentTimeline struct {
	Serial               string
	OffsetMs, DurationMs int64
	Seek                 string
	Steps                []timelineStep
}

// timelineStep is one step of a segment on the run's timeline.
type timelineStep struct {
	Index                  int
	StepID, Action, Status string
	OffsetMs, DurationMs   int64
	Message, Seek          string
}

// videoView is one recording of a verification run.
type videoView struct {
	Serial string
	Parts  []string
}

// readVerifyTimeline reads timeline.json: each segment's timeline by
// scenario/segment, and the kept recordings. A run without the file
// (written before it existed, or interrupted before the end) has none.
func readVerifyTimeline(e *evidence) (map[string]*segmentTimeline, []videoView) {
	out := map[string]*segmentTimeline{}
	if !e.isFile(verifyTimeline) {
		return out, nil
	}
	var tl verifyTimelineFile
	if e.readJSON(verifyTimeline, &tl) != nil {
		return out, nil
	}
	var videos []videoView
	for _, v := range tl.Videos {
		vv := videoView{Serial: v.Serial}
		for _, f := range v.Files {
			if e.isFile(f.Path) {
				vv.Parts = append(vv.Parts, href(f.Path))
			}
		}
		if v.Kept && len(vv.Parts) > 0 {
			videos = append(videos, vv)
		}
	}
	seek := func(m *timelineMoment) string {
		if m == nil || !e.isFile(m.File) {
			return ""
		}
		return href(m.File) + "#t=" + strconv.FormatFloat(max(m.Seconds, 0), 'f', 1, 64)
	}
	for _, s := range tl.Segments {
		st := &segmentTimeline{Serial: s.Serial, OffsetMs: s.OffsetMs, DurationMs: s.DurationMs, Seek: seek(s.Video)}
		for _, x := range s.Steps {
			st.Steps = append(st.Steps, timelineStep{Index: x.Index, StepID: x.StepID, Action: x.Action, Status: x.Status,
				OffsetMs: x.OffsetMs, DurationMs: x.DurationMs, Message: x.Message, Seek: seek(x.Video)})
		}
		// A segment that ran on several phones keeps the first.
		key := s.ScenarioID + "/" + s.SegmentID
		if _, ok := out[key]; !ok {
			out[key] = st
		}
	}
	return out, videos
}

// seekReplaySteps links a replayed segment's steps to their moments in the
// recording, by their index.
func seekReplaySteps(v *runView, tl *segmentTimeline) {
	if v == nil || tl == nil {
		return
	}
	seeks := map[int]string{}
	for _, s := range tl.Steps {
		seeks[s.Index] = s.Seek
	}
	for i := range v.Steps {
		if s := seeks[v.Steps[i].Index]; s != "" {
			v.Steps[i].Seek = s
		}
	}
}

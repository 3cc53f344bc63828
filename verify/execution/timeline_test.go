package execution

import (
	"testing"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/solopi/video"
)

// A moment is the part and second of a recording that rolled over: the
// part's start is the previous parts' lengths, a moment before the
// recording began is its first frame, and one past the last part stays in
// it.
func TestVideoMoment(t *testing.T) {
	t.Parallel()
	v := &PhoneVideo{Result: video.Result{Kept: true, Files: []artifacts.FileEntry{{Path: "video-1.mp4"}, {Path: "video-2.mp4"}}}, OffsetMs: 500, partMs: 180000}
	for _, c := range []struct {
		at   int64
		file string
		sec  float64
	}{{0, "video-1.mp4", 0}, {1500, "video-1.mp4", 1}, {180500, "video-2.mp4", 0}, {200500, "video-2.mp4", 20}, {900500, "video-2.mp4", 720}} {
		m := v.moment(c.at)
		if m.File != c.file || m.Seconds != c.sec {
			t.Errorf("at %d ms: %+v, want %s at %v s", c.at, m, c.file, c.sec)
		}
	}
	if got := videoName("127.0.0.1:5555", 2); got != "video-127.0.0.1_5555" {
		t.Errorf("videoName %q", got)
	}
}

// FuzzReplaySteps: whatever steps[] a replay's response holds (the device's
// log, read by the replay), its steps on the run's timeline lie inside the
// segment's window with durations that do not leave it.
func FuzzReplaySteps(f *testing.F) {
	f.Add([]byte(`{"steps":[{"index":0,"stepId":"a","action":"CLICK","status":"passed","start":"2026-01-01T00:00:01.000Z","durationMs":300},`+
		`{"index":1,"status":"failed","start":"2026-01-01T00:00:09.000Z","durationMs":99999999,"message":"x"}]}`), int64(1767225600000), int64(1767225600500), int64(1767225605000))
	f.Add([]byte(`{"steps":{"index":"x"}}`), int64(0), int64(0), int64(0))
	f.Add([]byte(`{"steps":[{"start":"not a time","durationMs":-5}]}`), int64(10), int64(20), int64(15))
	f.Fuzz(func(t *testing.T, data []byte, runStart, from, to int64) {
		if from < runStart || to < from || to-runStart > 1<<40 {
			return // the engine's windows: after the run's start, in order
		}
		doc, err := canonjson.Decode(data)
		if err != nil {
			return
		}
		m, ok := doc.(map[string]any)
		if !ok {
			return
		}
		for _, s := range replaySteps(m, runStart, from, to) {
			if s.OffsetMs < from-runStart || s.OffsetMs > to-runStart || s.DurationMs < 0 || s.OffsetMs+s.DurationMs > to-runStart {
				t.Fatalf("step %+v outside [%d, %d] of the run", s, from-runStart, to-runStart)
			}
		}
	})
}

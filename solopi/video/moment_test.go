package video

import (
	"testing"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
)

// A moment lands in the part that was recording then, clamped to the
// recording (before its start: the first second; past its end: the last
// part), in whole milliseconds.
func TestMomentIn(t *testing.T) {
	t.Parallel()
	parts := []artifacts.FileEntry{{Path: "video-1.mp4"}, {Path: "video-2.mp4"}}
	for _, c := range []struct {
		part, after time.Duration
		file        string
		sec         float64
	}{
		{0, 1500 * time.Millisecond, "video-1.mp4", 1.5},
		{time.Second, 1250 * time.Millisecond, "video-2.mp4", 0.25},
		{time.Second, -time.Second, "video-1.mp4", 0},
		{time.Second, 5 * time.Second, "video-2.mp4", 4},
		{time.Second, 999_600 * time.Microsecond, "video-2.mp4", 0},
		{time.Second, 1234_400 * time.Microsecond, "video-2.mp4", 0.234},
	} {
		m := MomentIn(parts, c.part, c.after)
		if m == nil || m.File != c.file || m.Seconds != c.sec {
			t.Errorf("part %v after %v: %+v, want %s at %v", c.part, c.after, m, c.file, c.sec)
		}
	}
	if MomentIn(nil, time.Second, time.Second) != nil {
		t.Error("a moment without parts")
	}
}

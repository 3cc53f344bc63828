package video

import (
	"time"

	"github.com/solopi-dev/solopi/artifacts"
)

// Moment is a moment in a recording: its part's file (relative to the
// evidence directory) and the second in it, for a report's seek link.
type Moment struct {
	File    string  `json:"file"`
	Seconds float64 `json:"seconds"`
}

// MomentIn is the moment after the recording's start among its kept
// parts, each partLen long before it rolled over (0: one part): a moment
// past the last part's end stays in the last part, one before the start
// is its first second. Seconds are whole milliseconds. nil without parts.
func MomentIn(parts []artifacts.FileEntry, partLen, after time.Duration) *Moment {
	if len(parts) == 0 {
		return nil
	}
	after = max(after, 0).Round(time.Millisecond)
	part := 0
	if partLen > 0 {
		part = int(min(int64(after/partLen), int64(len(parts)-1)))
		after -= time.Duration(part) * partLen
	}
	return &Moment{File: parts[part].Path, Seconds: float64(after.Milliseconds()) / 1000}
}

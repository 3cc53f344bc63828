package agentloop

// An agent run's screen recording (agent-run --video): adb screenrecord
// from just before the task starts to its end, kept beside the trajectory
// (video.mp4, or numbered parts) with video.json, which says when it
// began so that the report seeks it to each step. It never changes the
// outcome: its faults are the record's error.

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/solopi/video"
)

// VideoFile is the recording's record beside the trajectory.
const VideoFile = "video.json"

// videoPart matches the evidence a recording leaves in a directory.
var videoPart = regexp.MustCompile(`^video(-[0-9]+)?\.mp4$`)

// VideoRecord is what became of the recording (agent-run's "video" and
// video.json).
type VideoRecord struct {
	video.Result
	// StartedAt is when the recording began (host clock; absent when it
	// never did); a step's moment in it is its first event's timestamp
	// after this.
	StartedAt *time.Time `json:"startedAt,omitempty"`
	// PartSeconds is each part's length before it rolls over.
	PartSeconds float64 `json:"partSeconds"`
}

// RunVideo is a recording in progress.
type RunVideo struct {
	mode    video.Mode
	o       video.Options
	dir     *artifacts.Dir
	rec     *video.Recorder
	started time.Time
	err     string
}

// OpenVideo readies a recording kept in dir (the trajectory's directory)
// before the device is touched: a recording an earlier run left there is
// refused unless overwrite, and then removed, so that the report never
// shows a stale one. Mode off returns nil.
func OpenVideo(dir string, mode video.Mode, o video.Options, overwrite bool) (*RunVideo, error) {
	if mode == "" || mode == video.ModeOff {
		return nil, nil
	}
	var stale []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if videoPart.MatchString(e.Name()) || e.Name() == VideoFile {
			stale = append(stale, e.Name())
		}
	}
	if len(stale) > 0 && !overwrite {
		return nil, fault.Usage(fault.CodeOutputExists, "a recording of an earlier run is beside the trajectory").With("output", filepath.Join(dir, stale[0])).
			WithUserAction("Pass --overwrite to replace it, or name a trajectory in another directory.")
	}
	d, err := artifacts.Open(dir, artifacts.EvidenceOverwrite, stale...)
	if err != nil {
		return nil, err
	}
	return &RunVideo{mode: mode, o: o, dir: d}, nil
}

// Start starts the recording on dev; a recorder that cannot start is
// reported when it stops, and the run goes on without it.
func (v *RunVideo) Start(ctx context.Context, dev video.Device) {
	if v == nil {
		return
	}
	rec, err := video.Start(ctx, dev, v.o)
	if err != nil {
		v.err = "screenrecord did not start: " + err.Error()
		return
	}
	v.rec, v.started = rec, dev.Clock().Now()
}

// Stop stops the recording (after an interrupt too, within the recorder's
// short budget) and keeps it, with video.json, when the mode keeps it for
// this outcome (completed is passed).
func (v *RunVideo) Stop(ctx context.Context, completed bool) *VideoRecord {
	if v == nil {
		return nil
	}
	r := &VideoRecord{Result: video.Result{Mode: v.mode, Files: []artifacts.FileEntry{}, Error: v.err}, PartSeconds: v.o.PartLength().Seconds()}
	if v.rec == nil {
		return r
	}
	keep := v.mode.Keep(completed)
	var into *artifacts.Dir
	if keep {
		into = v.dir
	}
	r.Result = *v.rec.Stop(ctx, into)
	started := v.started.UTC()
	r.Mode, r.StartedAt = v.mode, &started
	if !keep {
		r.Discarded = "passed"
		return r
	}
	if r.Kept {
		if _, err := v.dir.WriteJSON(VideoFile, "recording", r); err != nil {
			r.Error = joinError(r.Error, "video.json: "+err.Error())
		}
		// The recording and its record are durable before the run's
		// output names them.
		if err := v.dir.Sync(); err != nil {
			r.Error = joinError(r.Error, "sync: "+err.Error())
		}
	}
	return r
}

func joinError(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

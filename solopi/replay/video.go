package replay

// The run's screen recording (RunOptions.Video): started just before the
// replay, stopped on every ending; with on-failure its parts are kept only
// when the verdict is not passed. It never changes the verdict: its faults
// are the output's "video" object.

import (
	"context"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/redact"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/video"
)

// startVideo starts the recording when one was asked for; a recorder that
// cannot start is reported, and the run goes on without it.
func (rs *runState) startVideo(ctx context.Context) {
	mode := rs.o.Video
	if mode == "" || mode == video.ModeOff {
		return
	}
	rec, err := video.Start(ctx, rs.d.RecorderView(), rs.o.VideoOptions)
	if err != nil {
		rs.video = &video.Result{Mode: mode, Files: []artifacts.FileEntry{}, Error: "screenrecord did not start: " + errText(err)}
		return
	}
	rs.rec = rec
	rs.videoStarted = rs.d.Clock().Now()
	rs.o.Progress.Report(device.Event{Phase: "video", Message: "recording the screen (screenrecord)", Case: rs.o.CaseName})
}

// stopVideo stops the recording (once) and pulls it into dir when the mode
// keeps it for this verdict; dir nil (no evidence for this run) discards
// it. The device files are deleted either way.
func (rs *runState) stopVideo(ctx context.Context, dir *artifacts.Dir, passed bool) {
	if rs.rec == nil {
		return
	}
	rec := rs.rec
	rs.rec = nil
	keep := rs.o.Video.Keep(passed)
	var into *artifacts.Dir
	if keep {
		into = dir
	}
	res := rec.Stop(ctx, into)
	res.Mode = rs.o.Video
	switch {
	case !keep:
		res.Discarded = "passed"
	case dir == nil:
		res.Discarded = "no_evidence"
	}
	rs.video = res
}

// videoReport is the output's "video" object.
type videoReport struct {
	Discarded  string                `json:"discarded,omitempty"`
	DurationMs int64                 `json:"durationMs"`
	Error      string                `json:"error,omitempty"`
	Files      []artifacts.FileEntry `json:"files"`
	Kept       bool                  `json:"kept"`
	Mode       string                `json:"mode"`
	Parts      int                   `json:"parts"`
}

// newVideoReport renders the recording, redacted: its error quotes the
// device.
func newVideoReport(r *video.Result, red *redact.Redactor) *videoReport {
	return &videoReport{Mode: red.Text(string(r.Mode)), Kept: r.Kept, Parts: r.Parts, DurationMs: r.DurationMs, Files: r.Files,
		Discarded: red.Text(r.Discarded), Error: red.Text(r.Error)}
}

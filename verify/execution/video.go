package execution

// The run's screen recording (verify-run --video): one recording per
// phone for the whole run, not one per segment. A run's segments follow
// each other within seconds and what happens between them (the app
// restarted, brought to the front for an explore step, a cleanup) is part
// of what a failure may need explained; one recording keeps it, costs one
// screenrecord start (up to a few seconds each) instead of one per
// segment, and a segment or step is a moment in it (timeline.json). With
// on-failure the recordings are kept when the run's verdict is not
// passed: the verdict is the run's, and a segment that passed inside a
// failed run is part of the explanation. A recording never changes the
// verdict: its faults are the output's video[].error.

import (
	"context"
	"regexp"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/solopi/video"
)

// PhoneVideo is what became of one phone's recording.
type PhoneVideo struct {
	// Serial names the phone in a run on several (omitted on one).
	Serial string `json:"serial,omitempty"`
	video.Result
	// OffsetMs is when the recording began after the run's start.
	OffsetMs int64 `json:"offsetMs"`
	// partMs is the length of each part before it rolls over.
	partMs int64
}

// recording is one phone's running recording.
type recording struct {
	serial  string
	rec     *video.Recorder
	started int64
	failed  string // the recorder did not start
}

// videoName is the evidence name of a phone's recording: video.mp4 on
// one phone, video-<serial>.mp4 on several (the serial's characters a
// file name cannot hold replaced).
func videoName(serial string, phones int) string {
	if phones < 2 {
		return "video"
	}
	return "video-" + unsafeName.ReplaceAllString(serial, "_")
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// startVideos starts a recording on every phone that can record, when the
// run asks for one. A recorder that cannot start is reported; the run goes
// on without it.
func (r *run) startVideos(ctx context.Context) []*recording {
	if r.e.Video == "" || r.e.Video == video.ModeOff {
		return nil
	}
	var out []*recording
	for _, p := range r.e.Phones {
		rc := &recording{serial: p.Serial}
		out = append(out, rc)
		if p.Screen == nil {
			rc.failed = "this phone cannot record its screen"
			continue
		}
		o := r.e.VideoOptions
		o.Name = videoName(p.Serial, len(r.e.Phones))
		rec, err := video.Start(ctx, p.Screen, o)
		if err != nil {
			rc.failed = "screenrecord did not start: " + r.a.redact(err.Error())
			continue
		}
		rc.rec, rc.started = rec, r.e.Clock.Now().UnixMilli()
	}
	return out
}

// stopVideos stops every recording (on every ending: Stop works after an
// interrupt, within its short budget) and keeps the parts in the evidence
// when the mode keeps them for this verdict; the device files are deleted
// either way.
func (r *run) stopVideos(ctx context.Context, recs []*recording, passed bool) []PhoneVideo {
	if len(recs) == 0 {
		return nil
	}
	keep := r.e.Video.Keep(passed)
	partMs := r.e.VideoOptions.PartLength().Milliseconds()
	out := make([]PhoneVideo, 0, len(recs))
	for _, rc := range recs {
		pv := PhoneVideo{partMs: partMs}
		if len(r.e.Phones) > 1 {
			pv.Serial = rc.serial
		}
		if rc.rec == nil {
			pv.Result = video.Result{Mode: r.e.Video, Files: []artifacts.FileEntry{}, Error: rc.failed}
			out = append(out, pv)
			continue
		}
		var into *artifacts.Dir
		if keep {
			into = r.a.dir
		}
		pv.Result = *rc.rec.Stop(ctx, into)
		pv.Mode, pv.OffsetMs = r.e.Video, rc.started-r.rec.StartedAt
		if !keep {
			pv.Discarded = "passed"
		}
		pv.Error = r.a.redact(pv.Error)
		out = append(out, pv)
	}
	return out
}

// videoOf is the kept recording of the phone serial ("" on one phone).
func videoOf(videos []PhoneVideo, serial string) *PhoneVideo {
	for i := range videos {
		if videos[i].Serial == serial && videos[i].Kept && len(videos[i].Files) > 0 {
			return &videos[i]
		}
	}
	return nil
}

// moment is the part and second of the recording at offsetMs after the
// run's start (the parts roll over every partMs).
func (v *PhoneVideo) moment(offsetMs int64) *video.Moment {
	return video.MomentIn(v.Files, time.Duration(v.partMs)*time.Millisecond, time.Duration(offsetMs-v.OffsetMs)*time.Millisecond)
}

// videoManifest writes manifest.json, binding the files the run wrote
// (the recordings with them) to its report by their digests; each
// replay's directory keeps its own manifest. Only a run with
// --video writes it: without a recording the report's evidence list is
// the binding, as it always was.
func (r *run) videoManifest(reportID string) error {
	if r.e.Video == "" || r.e.Video == video.ModeOff {
		return nil
	}
	_, err := r.a.dir.WriteManifest(artifacts.Manifest{Kind: "verification", RunID: reportID, CreatedAt: r.e.Clock.Now().UTC().Format(time.RFC3339Nano), Complete: true,
		Extra: map[string]string{"scope": "the files verify-run wrote; each replay's own files are bound by its segments/<segmentId>/replay/manifest.json"}})
	return err
}

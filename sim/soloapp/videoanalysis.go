package soloapp

// video-analysis: one visual-response analysis at a time over an MP4 in
// ScreenCaptures (docs/device-protocol.md#video-analysis). Every rejection
// after the requestId is known is a stored failed receipt; the receipt store
// is an LRU of 32 that never evicts the active request. The simulated
// analyzer needs the hulu_screenRecord plugin in the registry and derives its
// result from the file's bytes, so the same video always measures the same.

import (
	"context"
	"errors"
	"hash/fnv"
	"io/fs"
	"math"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/protocol"
)

var videoMachine = protocol.VideoAnalysis()

// videoAnalysisTime is how long the simulated FFmpeg comparison takes.
const videoAnalysisTime = 1500 * time.Millisecond

func (a *Media) videoAnalysisResolver(ctx context.Context, p *process, via transport, q params) obj {
	act, present := q["action"]
	switch {
	case !present || act == "":
		return e1(protocol.ErrMissingAction, "Parameter 'action' is required")
	case act == "status":
		return a.videoStatus(p, q)
	case act != "start":
		return e1(protocol.ErrUnsupportedAction, "Unsupported video analysis action: "+act)
	}
	if via != viaAdb {
		return e1(protocol.ErrAdbRequired, "Video analysis start is only available through the protected ADB transport")
	}
	return a.videoStart(p, q)
}

func (a *Media) videoStatus(p *process, q params) obj {
	id := q["requestId"]
	if !protocol.ValidID(id, 128) {
		return e1(protocol.ErrInvalidRequestID, "Parameter 'requestId' is invalid")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	r, found := mediaSx(p).video.get(id)
	if !found {
		return append(e1(protocol.ErrAnalysisNotFound, "Video analysis request was not found"), kv{"requestId", id})
	}
	return r.clone()
}

// videoReject stores and returns a failed receipt for id.
func (a *Media) videoRejectLocked(p *process, id, code, msg string, extra ...kv) obj {
	if _, err := videoMachine.Step(videoMachine.Initial, protocol.EvAnalysisReject); err != nil {
		panic(err) // the table always allows it; a broken table is a bug
	}
	r := append(e1(code, msg), kv{"requestId", id})
	r = append(r, extra...)
	mediaSx(p).video.put(id, r, mediaSx(p).videoActive)
	return r.clone()
}

func (a *Media) videoStart(p *process, q params) obj {
	id := q["requestId"]
	if !protocol.ValidID(id, 128) {
		return e1(protocol.ErrInvalidRequestID, "Parameter 'requestId' is invalid")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if r, found := mediaSx(p).video.get(id); found {
		return r.clone()
	}
	reject := func(code, msg string) obj { return a.videoRejectLocked(p, id, code, msg) }
	raw := q["videoPath"]
	if strings.TrimSpace(raw) == "" {
		return reject(protocol.ErrInvalidParameter, "videoPath is required")
	}
	offset, good := javaParseLong(q["actionOffsetMs"])
	if !good || offset < 0 || offset > 3600000 {
		return reject(protocol.ErrInvalidParameter, "actionOffsetMs must be between 0 and 3600000")
	}
	thr, err := strconv.ParseFloat(strings.TrimSpace(q["differenceThreshold"]), 64)
	if err != nil || math.IsNaN(thr) || math.IsInf(thr, 0) || thr <= 0 || thr > 1 {
		return reject(protocol.ErrInvalidParameter, "differenceThreshold must be greater than 0 and at most 1")
	}
	root := a.capturesRootLocked()
	canon := normPath(raw)
	name := path.Base(canon)
	if path.Dir(canon) != root || strings.HasPrefix(name, ".") || !strings.HasSuffix(strings.ToLower(name), ".mp4") {
		return reject(protocol.ErrInvalidParameter, "videoPath must be a non-empty direct MP4 child of capturesRoot")
	}
	st, err := a.phone.Stat(canon)
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return reject(protocol.ErrUnsafeVideoPath, "Unable to resolve the requested video path")
	case err != nil || !st.Mode().IsRegular() || st.Size() <= 0:
		return reject(protocol.ErrInvalidParameter, "videoPath must be a non-empty direct MP4 child of capturesRoot")
	}
	if a.plugins.registry[analyzerPluginName] == nil {
		return reject(protocol.ErrPluginMissing, "Screen recording analyzer plugin is not installed")
	}
	if active := mediaSx(p).videoActive; active != "" {
		return a.videoRejectLocked(p, id, protocol.ErrAnalysisBusy, "Another video analysis is already active", kv{"activeRequestId", active})
	}
	state, _ := videoMachine.Step(videoMachine.Initial, protocol.EvAnalysisAccept)
	r := ok("requestId", id, "state", string(state), "terminal", false, "videoFileName", name,
		"videoPath", shellForm(canon), "sizeBytes", st.Size(), "actionOffsetMs", offset,
		"differenceThreshold", thr, "startedAt", a.nowMs())
	mediaSx(p).videoActive = id
	mediaSx(p).video.put(id, r, id)
	go a.runVideoAnalysis(p, id, canon, offset, thr, orDefault(a.videoAnalysisTime, videoAnalysisTime))
	return r.clone()
}

// runVideoAnalysis is the analyzer thread; the result replaces the
// receipt (completed or failed) and frees the analyzer.
func (a *Media) runVideoAnalysis(p *process, id, file string, offset int64, thr float64, took time.Duration) {
	if !a.sleepDevice(p, took) {
		return
	}
	data, err := a.phone.ReadFile(file)
	var result int64
	msg := ""
	switch _, parsed := parseMP4(data); {
	case err != nil || len(data) == 0 || !parsed:
		msg = "Unable to analyze screen recording"
	default:
		// A stand-in for the frame-difference search: stable per file and
		// parameters, in a plausible 80..1279 ms range.
		h := fnv.New64a()
		_, _ = h.Write(data)
		_, _ = h.Write([]byte(strconv.FormatInt(offset, 10) + "/" + strconv.FormatFloat(thr, 'g', -1, 64)))
		result = 80 + int64(h.Sum64()%1200)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.currentLocked(p) || mediaSx(p).videoActive != id {
		return
	}
	mediaSx(p).videoActive = ""
	r, found := mediaSx(p).video.m[id] // no access-order change for the worker
	if !found {
		return
	}
	r = r.clone()
	r.set("terminal", true)
	r.set("completedAt", a.nowMs())
	if msg != "" {
		st, _ := videoMachine.Step(protocol.AnalysisAnalyzing, protocol.EvAnalysisFail)
		r.set("success", false)
		r.set("state", string(st))
		r.set("errorCode", protocol.ErrAnalysisFailed)
		r.set("error", msg)
	} else {
		st, _ := videoMachine.Step(protocol.AnalysisAnalyzing, protocol.EvAnalysisComplete)
		r.set("state", string(st))
		r.set("visualResponseTimeMs", result)
		r.set("measurement", "SoloPi screen-recording video difference")
	}
	mediaSx(p).video.m[id] = r
}

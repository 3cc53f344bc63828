package media

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
	"github.com/solopi-dev/solopi/sim/soloapp/core"
	"github.com/solopi-dev/solopi/sim/soloapp/plugins"
)

var videoMachine = protocol.VideoAnalysis()

// videoAnalysisTime is how long the simulated FFmpeg comparison takes.
const videoAnalysisTime = 1500 * time.Millisecond

func (a *Media) VideoAnalysisResolver(ctx context.Context, p *core.Process, via core.Transport, q core.Params) core.Obj {
	act, present := q["action"]
	switch {
	case !present || act == "":
		return core.E1(protocol.ErrMissingAction, "Parameter 'action' is required")
	case act == "status":
		return a.videoStatus(p, q)
	case act != "start":
		return core.E1(protocol.ErrUnsupportedAction, "Unsupported video analysis action: "+act)
	}
	if via != core.ViaAdb {
		return core.E1(protocol.ErrAdbRequired, "Video analysis start is only available through the protected ADB transport")
	}
	return a.videoStart(p, q)
}

func (a *Media) videoStatus(p *core.Process, q core.Params) core.Obj {
	id := q["requestId"]
	if !protocol.ValidID(id, 128) {
		return core.E1(protocol.ErrInvalidRequestID, "Parameter 'requestId' is invalid")
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	r, found := SessionsOf(p).Video.Get(id)
	if !found {
		return append(core.E1(protocol.ErrAnalysisNotFound, "Video analysis request was not found"), core.KV{K: "requestId", V: id})
	}
	return r.Clone()
}

// videoReject stores and returns a failed receipt for id.
func (a *Media) videoRejectLocked(p *core.Process, id, code, msg string, extra ...core.KV) core.Obj {
	if _, err := videoMachine.Step(videoMachine.Initial, protocol.EvAnalysisReject); err != nil {
		panic(err) // the table always allows it; a broken table is a bug
	}
	r := append(core.E1(code, msg), core.KV{K: "requestId", V: id})
	r = append(r, extra...)
	SessionsOf(p).Video.Put(id, r, SessionsOf(p).videoActive)
	return r.Clone()
}

func (a *Media) videoStart(p *core.Process, q core.Params) core.Obj {
	id := q["requestId"]
	if !protocol.ValidID(id, 128) {
		return core.E1(protocol.ErrInvalidRequestID, "Parameter 'requestId' is invalid")
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if r, found := SessionsOf(p).Video.Get(id); found {
		return r.Clone()
	}
	reject := func(code, msg string) core.Obj { return a.videoRejectLocked(p, id, code, msg) }
	raw := q["videoPath"]
	if strings.TrimSpace(raw) == "" {
		return reject(protocol.ErrInvalidParameter, "videoPath is required")
	}
	offset, good := core.JavaParseLong(q["actionOffsetMs"])
	if !good || offset < 0 || offset > 3600000 {
		return reject(protocol.ErrInvalidParameter, "actionOffsetMs must be between 0 and 3600000")
	}
	thr, err := strconv.ParseFloat(strings.TrimSpace(q["differenceThreshold"]), 64)
	if err != nil || math.IsNaN(thr) || math.IsInf(thr, 0) || thr <= 0 || thr > 1 {
		return reject(protocol.ErrInvalidParameter, "differenceThreshold must be greater than 0 and at most 1")
	}
	root := a.capturesRootLocked()
	canon := core.NormPath(raw)
	name := path.Base(canon)
	if path.Dir(canon) != root || strings.HasPrefix(name, ".") || !strings.HasSuffix(strings.ToLower(name), ".mp4") {
		return reject(protocol.ErrInvalidParameter, "videoPath must be a non-empty direct MP4 child of capturesRoot")
	}
	st, err := a.Phone.Stat(canon)
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return reject(protocol.ErrUnsafeVideoPath, "Unable to resolve the requested video path")
	case err != nil || !st.Mode().IsRegular() || st.Size() <= 0:
		return reject(protocol.ErrInvalidParameter, "videoPath must be a non-empty direct MP4 child of capturesRoot")
	}
	if a.Plugins.Registry[plugins.AnalyzerPluginName] == nil {
		return reject(protocol.ErrPluginMissing, "Screen recording analyzer plugin is not installed")
	}
	if active := SessionsOf(p).videoActive; active != "" {
		return a.videoRejectLocked(p, id, protocol.ErrAnalysisBusy, "Another video analysis is already active", core.KV{K: "activeRequestId", V: active})
	}
	state, _ := videoMachine.Step(videoMachine.Initial, protocol.EvAnalysisAccept)
	r := core.OK("requestId", id, "state", string(state), "terminal", false, "videoFileName", name,
		"videoPath", core.ShellForm(canon), "sizeBytes", st.Size(), "actionOffsetMs", offset,
		"differenceThreshold", thr, "startedAt", a.NowMs())
	SessionsOf(p).videoActive = id
	SessionsOf(p).Video.Put(id, r, id)
	go a.runVideoAnalysis(p, id, canon, offset, thr, core.OrDefault(a.videoAnalysisTime, videoAnalysisTime))
	return r.Clone()
}

// runVideoAnalysis is the analyzer thread; the result replaces the
// receipt (completed or failed) and frees the analyzer.
func (a *Media) runVideoAnalysis(p *core.Process, id, file string, offset int64, thr float64, took time.Duration) {
	if !a.SleepDevice(p, took) {
		return
	}
	data, err := a.Phone.ReadFile(file)
	var result int64
	msg := ""
	switch _, parsed := ParseMP4(data); {
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
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if !a.CurrentLocked(p) || SessionsOf(p).videoActive != id {
		return
	}
	SessionsOf(p).videoActive = ""
	r, found := SessionsOf(p).Video.M[id] // no access-order change for the worker
	if !found {
		return
	}
	r = r.Clone()
	r.Set("terminal", true)
	r.Set("completedAt", a.NowMs())
	if msg != "" {
		st, _ := videoMachine.Step(protocol.AnalysisAnalyzing, protocol.EvAnalysisFail)
		r.Set("success", false)
		r.Set("state", string(st))
		r.Set("errorCode", protocol.ErrAnalysisFailed)
		r.Set("error", msg)
	} else {
		st, _ := videoMachine.Step(protocol.AnalysisAnalyzing, protocol.EvAnalysisComplete)
		r.Set("state", string(st))
		r.Set("visualResponseTimeMs", result)
		r.Set("measurement", "SoloPi screen-recording video difference")
	}
	SessionsOf(p).Video.M[id] = r
}

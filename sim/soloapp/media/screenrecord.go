package media

// screen-record: the standalone MediaProjection recording
// (docs/device-protocol.md#session-types). The system dialog is answered
// through ConfirmScreenRecord (or the auto-confirm knob); stopping writes a
// real MP4 (mp4.go) under <solopiDir>/ScreenCaptures.

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/solopi-dev/solopi/internal/lazyregexp"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
	"github.com/solopi-dev/solopi/sim/soloapp/plugins"
)

var screenMachine = protocol.ScreenRecord()

// Device timings of the recorder (device time).
const (
	screenEncoderStart = 200 * time.Millisecond // service bound, encoder running
	screenFinalize     = 300 * time.Millisecond // muxer closes the file
	screenAutoConfirm  = 300 * time.Millisecond // a simulated user taps "Start now"
)

const requiredScreenAction = "Confirm the Android MediaProjection system dialog"

var resolutionPattern = lazyregexp.New(`^(\d{3,4})x(\d{3,4})$`)

// Media is the screen-record and video-analysis resolvers and their
// installation-level knobs (they survive Restart). Video analysis needs the
// analyzer plugin, which it looks up in the plugin registry.
type Media struct {
	*core.App
	Plugins *plugins.Plugins

	autoConfirm       bool
	ExternalRecorder  bool
	videoAnalysisTime time.Duration
	encoderStartTime  time.Duration
}

// sessions is the screen-record and video-analysis state of one process.
type sessions struct {
	screen      *screenSession
	Video       *core.ReceiptLRU
	videoActive string // requestId of the running analysis
}

var mediaSlot = core.NewSlot(func() *sessions { return &sessions{Video: core.NewReceiptLRU(32)} })

func SessionsOf(p *core.Process) *sessions { return mediaSlot.Of(p) }

// ScreenLiveLocked reports whether p's screen recording is a
// RuntimeSessionGuard session (plugin maintenance waits for it).
func (a *Media) ScreenLiveLocked(p *core.Process) bool {
	s := SessionsOf(p).screen
	return s != nil && screenMachine.IsLive(s.State)
}

type screenSession struct {
	core.SessionClock
	id                                        string
	resolution                                string
	width, height, bitrate, frameRate, maxSec int
	requestedAt                               int64
	capturesRoot, outputPath                  string
	autoStopped, cancelledBeforeStart         bool
}

func (a *Media) capturesRootLocked() string {
	return core.NormPath(a.SolopiDirLocked() + "/ScreenCaptures")
}

func (a *Media) screenSnapshotLocked(p *core.Process) core.Obj {
	s := SessionsOf(p).screen
	o := core.OK("kind", "screen-recording")
	if s == nil {
		return append(o, core.NewObj("state", string(protocol.SessionIdle), "recording", false, "active", false,
			"terminal", false, "userActionRequired", false, "autoStopped", false, "cancelledBeforeStart", false)...)
	}
	pending := s.State == protocol.ScreenPending
	o.Set("sessionId", s.id)
	o.Set("state", string(s.State))
	o.Set("recording", s.State == protocol.SessionRecording)
	o.Set("active", screenMachine.IsLive(s.State))
	o.Set("terminal", screenMachine.IsTerminal(s.State))
	o.Set("userActionRequired", pending)
	if pending {
		o.Set("requiredUserAction", requiredScreenAction)
	}
	o.Set("resolution", s.resolution)
	for _, f := range []struct {
		k string
		v int
	}{{"width", s.width}, {"height", s.height}, {"bitrateKbps", s.bitrate}, {"frameRate", s.frameRate}, {"durationSec", s.maxSec}} {
		if f.v != 0 {
			o.Set(f.k, f.v)
		}
	}
	o.Set("requestedAt", s.requestedAt)
	// durationMs runs live from startedAt while the recording has not
	// finished, as the app computes it (finishedAt, or now, minus startedAt).
	s.SetTimes(&o, a.NowMs())
	o.Set("capturesRoot", s.capturesRoot)
	if s.outputPath != "" {
		o.Set("outputPath", s.outputPath)
		if st, err := a.Phone.Stat(s.outputPath); err == nil && st.Mode().IsRegular() {
			o.Set("fileSize", st.Size())
		}
	}
	o.Set("autoStopped", s.autoStopped)
	o.Set("cancelledBeforeStart", s.cancelledBeforeStart)
	if s.Err != "" {
		o.Set("error", s.Err)
	}
	return o
}

func (a *Media) ScreenRecordResolver(ctx context.Context, p *core.Process, via core.Transport, q core.Params) core.Obj {
	act := q["action"]
	switch act {
	case "status":
		a.Mu.Lock()
		defer a.Mu.Unlock()
		return a.screenSnapshotLocked(p)
	case "start", "stop":
	default:
		return core.E1(protocol.ErrUnsupportedAction, "Unsupported screen-record action: "+core.JavaString(q, "action"))
	}
	if via != core.ViaAdb {
		return core.E1(protocol.ErrMutationTransportRequired, "Screen recording changes require the ADB scheme transport")
	}
	if act == "start" {
		return a.screenStart(p, q)
	}
	return a.screenStop(p, q)
}

// intParam reads an optional integer in [lo, hi] (empty = default).
func intParam(q core.Params, key string, def, lo, hi int) (int, core.Obj) {
	v := q[key]
	if v == "" {
		return def, nil
	}
	n, good := core.JavaParseInt(v)
	if !good {
		return 0, core.E1(protocol.ErrInvalidScreenRecordConfig, key+" must be an integer")
	}
	if n < int64(lo) || n > int64(hi) {
		return 0, core.E1(protocol.ErrInvalidScreenRecordConfig, key+" is outside the supported range")
	}
	return int(n), nil
}

func (a *Media) screenStart(p *core.Process, q core.Params) core.Obj {
	if a.Cfg.Device.SDK < 21 {
		return core.E1(protocol.ErrUnsupportedAndroidVersion, "Screen recording requires Android 5.0 or newer")
	}
	sid := q["sessionId"]
	if !protocol.ValidIDChars(sid, 128) {
		return core.E1(protocol.ErrInvalidSessionID, "sessionId must contain 1-128 letters, numbers, dots, underscores, or hyphens")
	}
	res := q["resolution"]
	if res == "" {
		res = "720x480"
	}
	m := resolutionPattern.FindStringSubmatch(res)
	if m == nil {
		return core.E1(protocol.ErrInvalidScreenRecordConfig, "resolution must use WIDTHxHEIGHT format")
	}
	w, _ := strconv.Atoi(m[1])
	h, _ := strconv.Atoi(m[2])
	if w%2 != 0 || h%2 != 0 || w < 128 || w > 4096 || h < 128 || h > 4096 {
		return core.E1(protocol.ErrInvalidScreenRecordConfig, "resolution dimensions must be even numbers between 128 and 4096")
	}
	bitrate, bad := intParam(q, "bitrateKbps", 2500, 100, 50000)
	if bad != nil {
		return bad
	}
	fps, bad := intParam(q, "frameRate", 30, 1, 120)
	if bad != nil {
		return bad
	}
	dur, bad := intParam(q, "durationSec", 300, 1, 3600)
	if bad != nil {
		return bad
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if cur := SessionsOf(p).screen; cur != nil && screenMachine.IsLive(cur.State) {
		return append(core.E1(protocol.ErrScreenRecordConflict, "A screen recording session is already active"),
			core.KV{K: "screenRecording", V: a.screenSnapshotLocked(p)})
	}
	// The ScreenRecorderLease is a runtime session: another recorder or
	// plugin maintenance keeps it from being acquired.
	if a.ExternalRecorder || p.MaintenanceLocked() {
		return append(core.E1(protocol.ErrExternalScreenRecordConflict, "Another SoloPi screen recorder is already active"),
			core.KV{K: "screenRecording", V: a.screenSnapshotLocked(p)})
	}
	s := &screenSession{SessionClock: core.SessionClock{State: screenMachine.Initial}, id: sid, resolution: fmt.Sprintf("%dx%d", w, h), width: w, height: h,
		bitrate: bitrate, frameRate: fps, maxSec: dur, requestedAt: a.NowMs(), capturesRoot: a.capturesRootLocked()}
	a.StepClockLocked(screenMachine, &s.SessionClock, protocol.EvStart, "")
	SessionsOf(p).screen = s
	if a.autoConfirm {
		go func() {
			if a.SleepDevice(p, screenAutoConfirm) {
				a.answerScreenDialog(p, s, true)
			}
		}()
	}
	return a.screenSnapshotLocked(p)
}

// answerScreenDialog is the MediaProjection dialog's result for s; a late
// answer for a session that moved on (or a dead process) is ignored.
func (a *Media) answerScreenDialog(p *core.Process, s *screenSession, grant bool) {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if SessionsOf(p).screen != s || !a.CurrentLocked(p) || s.State != protocol.ScreenPending {
		return
	}
	if !grant {
		a.StepClockLocked(screenMachine, &s.SessionClock, protocol.EvError, "MediaProjection permission was not granted: the user refused the screen capture request")
		return
	}
	a.StepClockLocked(screenMachine, &s.SessionClock, protocol.EvUserGranted, "")
	go a.screenEncoder(p, s, core.OrDefault(a.encoderStartTime, screenEncoderStart))
}

// screenEncoder binds the service and waits for the recorder to run; then
// it schedules the auto-stop after durationSec.
func (a *Media) screenEncoder(p *core.Process, s *screenSession, took time.Duration) {
	if !a.SleepDevice(p, took) {
		return
	}
	a.Mu.Lock()
	if SessionsOf(p).screen != s || !a.CurrentLocked(p) || s.State != protocol.SessionStarting {
		a.Mu.Unlock()
		return
	}
	start := a.Clk.Now().UTC()
	s.outputPath = fmt.Sprintf("%s/Screen-%s-%dx%d.mp4", s.capturesRoot, start.Format("20060102-150405"), s.width, s.height)
	a.StepClockLocked(screenMachine, &s.SessionClock, protocol.EvEncoderRunning, "")
	maxDur := time.Duration(s.maxSec) * time.Second
	a.Mu.Unlock()
	if !a.SleepDevice(p, maxDur) {
		return
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if SessionsOf(p).screen == s && a.CurrentLocked(p) && s.State == protocol.SessionRecording {
		s.autoStopped = true
		a.StepClockLocked(screenMachine, &s.SessionClock, protocol.EvAutoStop, "")
		go a.screenFinish(p, s)
	}
}

func (a *Media) screenStop(p *core.Process, q core.Params) core.Obj {
	sid := q["sessionId"]
	if !protocol.ValidIDChars(sid, 128) {
		return core.E1(protocol.ErrInvalidSessionID, "A valid sessionId is required")
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	s := SessionsOf(p).screen
	if s == nil || s.id != sid {
		return append(core.E1(protocol.ErrSessionMismatch, "Screen recording sessionId does not match"),
			core.KV{K: "screenRecording", V: a.screenSnapshotLocked(p)})
	}
	switch s.State {
	case protocol.ScreenPending:
		s.cancelledBeforeStart = true
		a.StepClockLocked(screenMachine, &s.SessionClock, protocol.EvStopBeforeStart, "")
	case protocol.SessionStarting:
		// The flag is published with stopped: the host requires
		// cancelledBeforeStart ⇒ stopped.
		a.StepClockLocked(screenMachine, &s.SessionClock, protocol.EvStop, "")
		go func() {
			if !a.SleepDevice(p, 100*time.Millisecond) {
				return
			}
			a.Mu.Lock()
			defer a.Mu.Unlock()
			if SessionsOf(p).screen == s && a.CurrentLocked(p) && a.StepClockLocked(screenMachine, &s.SessionClock, protocol.EvStopped, "") {
				s.cancelledBeforeStart = true
			}
		}()
	case protocol.SessionRecording:
		a.StepClockLocked(screenMachine, &s.SessionClock, protocol.EvStop, "")
		go a.screenFinish(p, s)
	}
	return a.screenSnapshotLocked(p)
}

// screenFinish stops the encoder, closes the MP4 and publishes stopped
// (or failed when the output is missing or empty).
func (a *Media) screenFinish(p *core.Process, s *screenSession) {
	if !a.SleepDevice(p, screenFinalize) {
		return
	}
	a.Mu.Lock()
	w, h, out, root := s.width, s.height, s.outputPath, s.capturesRoot
	durMs := a.NowMs() - s.StartedAt
	a.Mu.Unlock()
	data, err := BuildMP4(w, h, durMs)
	if err == nil {
		if err = a.Phone.MkdirAll(root); err == nil {
			err = a.Phone.WriteFile(out, data)
		}
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	if SessionsOf(p).screen != s || !a.CurrentLocked(p) || s.State != protocol.SessionStopping {
		return
	}
	st, statErr := a.Phone.Stat(out)
	if err != nil || statErr != nil || st.Size() == 0 || core.NormPath(out) != out || pathDir(out) != root {
		a.StepClockLocked(screenMachine, &s.SessionClock, protocol.EvError, "Screen recording output was not written successfully")
		return
	}
	a.StepClockLocked(screenMachine, &s.SessionClock, protocol.EvStopped, "")
}

func pathDir(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			if i == 0 {
				return "/"
			}
			return p[:i]
		}
	}
	return "."
}

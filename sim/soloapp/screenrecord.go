package soloapp

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
	*appCore
	plugins *Plugins

	autoConfirm       bool
	externalRecorder  bool
	videoAnalysisTime time.Duration
	encoderStartTime  time.Duration
}

// mediaProc is the screen-record and video-analysis state of one process.
type mediaProc struct {
	screen      *screenSession
	video       *receiptLRU
	videoActive string // requestId of the running analysis
}

var mediaSlot = NewSlot(func() *mediaProc { return &mediaProc{video: newReceiptLRU(32)} })

func mediaSx(p *process) *mediaProc { return mediaSlot.Of(p) }

// ScreenLiveLocked reports whether p's screen recording is a
// RuntimeSessionGuard session (plugin maintenance waits for it).
func (a *Media) ScreenLiveLocked(p *process) bool {
	s := mediaSx(p).screen
	return s != nil && screenMachine.IsLive(s.state)
}

type screenSession struct {
	sessionClock
	id                                        string
	resolution                                string
	width, height, bitrate, frameRate, maxSec int
	requestedAt                               int64
	capturesRoot, outputPath                  string
	autoStopped, cancelledBeforeStart         bool
}

func (a *Media) capturesRootLocked() string { return normPath(a.solopiDirLocked() + "/ScreenCaptures") }

func (a *Media) screenSnapshotLocked(p *process) obj {
	s := mediaSx(p).screen
	o := ok("kind", "screen-recording")
	if s == nil {
		return append(o, newObj("state", string(protocol.SessionIdle), "recording", false, "active", false,
			"terminal", false, "userActionRequired", false, "autoStopped", false, "cancelledBeforeStart", false)...)
	}
	pending := s.state == protocol.ScreenPending
	o.set("sessionId", s.id)
	o.set("state", string(s.state))
	o.set("recording", s.state == protocol.SessionRecording)
	o.set("active", screenMachine.IsLive(s.state))
	o.set("terminal", screenMachine.IsTerminal(s.state))
	o.set("userActionRequired", pending)
	if pending {
		o.set("requiredUserAction", requiredScreenAction)
	}
	o.set("resolution", s.resolution)
	for _, f := range []struct {
		k string
		v int
	}{{"width", s.width}, {"height", s.height}, {"bitrateKbps", s.bitrate}, {"frameRate", s.frameRate}, {"durationSec", s.maxSec}} {
		if f.v != 0 {
			o.set(f.k, f.v)
		}
	}
	o.set("requestedAt", s.requestedAt)
	// durationMs runs live from startedAt while the recording has not
	// finished, as the app computes it (finishedAt, or now, minus startedAt).
	s.setTimes(&o, a.nowMs())
	o.set("capturesRoot", s.capturesRoot)
	if s.outputPath != "" {
		o.set("outputPath", s.outputPath)
		if st, err := a.phone.Stat(s.outputPath); err == nil && st.Mode().IsRegular() {
			o.set("fileSize", st.Size())
		}
	}
	o.set("autoStopped", s.autoStopped)
	o.set("cancelledBeforeStart", s.cancelledBeforeStart)
	if s.err != "" {
		o.set("error", s.err)
	}
	return o
}

func (a *Media) screenRecordResolver(ctx context.Context, p *process, via transport, q params) obj {
	act := q["action"]
	switch act {
	case "status":
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.screenSnapshotLocked(p)
	case "start", "stop":
	default:
		return e1(protocol.ErrUnsupportedAction, "Unsupported screen-record action: "+javaString(q, "action"))
	}
	if via != viaAdb {
		return e1(protocol.ErrMutationTransportRequired, "Screen recording changes require the ADB scheme transport")
	}
	if act == "start" {
		return a.screenStart(p, q)
	}
	return a.screenStop(p, q)
}

// intParam reads an optional integer in [lo, hi] (empty = default).
func intParam(q params, key string, def, lo, hi int) (int, obj) {
	v := q[key]
	if v == "" {
		return def, nil
	}
	n, good := javaParseInt(v)
	if !good {
		return 0, e1(protocol.ErrInvalidScreenRecordConfig, key+" must be an integer")
	}
	if n < int64(lo) || n > int64(hi) {
		return 0, e1(protocol.ErrInvalidScreenRecordConfig, key+" is outside the supported range")
	}
	return int(n), nil
}

func (a *Media) screenStart(p *process, q params) obj {
	if a.cfg.Device.SDK < 21 {
		return e1(protocol.ErrUnsupportedAndroidVersion, "Screen recording requires Android 5.0 or newer")
	}
	sid := q["sessionId"]
	if !protocol.ValidIDChars(sid, 128) {
		return e1(protocol.ErrInvalidSessionID, "sessionId must contain 1-128 letters, numbers, dots, underscores, or hyphens")
	}
	res := q["resolution"]
	if res == "" {
		res = "720x480"
	}
	m := resolutionPattern.FindStringSubmatch(res)
	if m == nil {
		return e1(protocol.ErrInvalidScreenRecordConfig, "resolution must use WIDTHxHEIGHT format")
	}
	w, _ := strconv.Atoi(m[1])
	h, _ := strconv.Atoi(m[2])
	if w%2 != 0 || h%2 != 0 || w < 128 || w > 4096 || h < 128 || h > 4096 {
		return e1(protocol.ErrInvalidScreenRecordConfig, "resolution dimensions must be even numbers between 128 and 4096")
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
	a.mu.Lock()
	defer a.mu.Unlock()
	if cur := mediaSx(p).screen; cur != nil && screenMachine.IsLive(cur.state) {
		return append(e1(protocol.ErrScreenRecordConflict, "A screen recording session is already active"),
			kv{"screenRecording", a.screenSnapshotLocked(p)})
	}
	// The ScreenRecorderLease is a runtime session: another recorder or
	// plugin maintenance keeps it from being acquired.
	if a.externalRecorder || p.maintenanceLocked() {
		return append(e1(protocol.ErrExternalScreenRecordConflict, "Another SoloPi screen recorder is already active"),
			kv{"screenRecording", a.screenSnapshotLocked(p)})
	}
	s := &screenSession{sessionClock: sessionClock{state: screenMachine.Initial}, id: sid, resolution: fmt.Sprintf("%dx%d", w, h), width: w, height: h,
		bitrate: bitrate, frameRate: fps, maxSec: dur, requestedAt: a.nowMs(), capturesRoot: a.capturesRootLocked()}
	a.stepClockLocked(screenMachine, &s.sessionClock, protocol.EvStart, "")
	mediaSx(p).screen = s
	if a.autoConfirm {
		go func() {
			if a.sleepDevice(p, screenAutoConfirm) {
				a.answerScreenDialog(p, s, true)
			}
		}()
	}
	return a.screenSnapshotLocked(p)
}

// answerScreenDialog is the MediaProjection dialog's result for s; a late
// answer for a session that moved on (or a dead process) is ignored.
func (a *Media) answerScreenDialog(p *process, s *screenSession, grant bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if mediaSx(p).screen != s || !a.currentLocked(p) || s.state != protocol.ScreenPending {
		return
	}
	if !grant {
		a.stepClockLocked(screenMachine, &s.sessionClock, protocol.EvError, "MediaProjection permission was not granted: the user refused the screen capture request")
		return
	}
	a.stepClockLocked(screenMachine, &s.sessionClock, protocol.EvUserGranted, "")
	go a.screenEncoder(p, s, orDefault(a.encoderStartTime, screenEncoderStart))
}

// screenEncoder binds the service and waits for the recorder to run; then
// it schedules the auto-stop after durationSec.
func (a *Media) screenEncoder(p *process, s *screenSession, took time.Duration) {
	if !a.sleepDevice(p, took) {
		return
	}
	a.mu.Lock()
	if mediaSx(p).screen != s || !a.currentLocked(p) || s.state != protocol.SessionStarting {
		a.mu.Unlock()
		return
	}
	start := a.clk.Now().UTC()
	s.outputPath = fmt.Sprintf("%s/Screen-%s-%dx%d.mp4", s.capturesRoot, start.Format("20060102-150405"), s.width, s.height)
	a.stepClockLocked(screenMachine, &s.sessionClock, protocol.EvEncoderRunning, "")
	maxDur := time.Duration(s.maxSec) * time.Second
	a.mu.Unlock()
	if !a.sleepDevice(p, maxDur) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if mediaSx(p).screen == s && a.currentLocked(p) && s.state == protocol.SessionRecording {
		s.autoStopped = true
		a.stepClockLocked(screenMachine, &s.sessionClock, protocol.EvAutoStop, "")
		go a.screenFinish(p, s)
	}
}

func (a *Media) screenStop(p *process, q params) obj {
	sid := q["sessionId"]
	if !protocol.ValidIDChars(sid, 128) {
		return e1(protocol.ErrInvalidSessionID, "A valid sessionId is required")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s := mediaSx(p).screen
	if s == nil || s.id != sid {
		return append(e1(protocol.ErrSessionMismatch, "Screen recording sessionId does not match"),
			kv{"screenRecording", a.screenSnapshotLocked(p)})
	}
	switch s.state {
	case protocol.ScreenPending:
		s.cancelledBeforeStart = true
		a.stepClockLocked(screenMachine, &s.sessionClock, protocol.EvStopBeforeStart, "")
	case protocol.SessionStarting:
		// The flag is published with stopped: the host requires
		// cancelledBeforeStart ⇒ stopped.
		a.stepClockLocked(screenMachine, &s.sessionClock, protocol.EvStop, "")
		go func() {
			if !a.sleepDevice(p, 100*time.Millisecond) {
				return
			}
			a.mu.Lock()
			defer a.mu.Unlock()
			if mediaSx(p).screen == s && a.currentLocked(p) && a.stepClockLocked(screenMachine, &s.sessionClock, protocol.EvStopped, "") {
				s.cancelledBeforeStart = true
			}
		}()
	case protocol.SessionRecording:
		a.stepClockLocked(screenMachine, &s.sessionClock, protocol.EvStop, "")
		go a.screenFinish(p, s)
	}
	return a.screenSnapshotLocked(p)
}

// screenFinish stops the encoder, closes the MP4 and publishes stopped
// (or failed when the output is missing or empty).
func (a *Media) screenFinish(p *process, s *screenSession) {
	if !a.sleepDevice(p, screenFinalize) {
		return
	}
	a.mu.Lock()
	w, h, out, root := s.width, s.height, s.outputPath, s.capturesRoot
	durMs := a.nowMs() - s.startedAt
	a.mu.Unlock()
	data, err := buildMP4(w, h, durMs)
	if err == nil {
		if err = a.phone.MkdirAll(root); err == nil {
			err = a.phone.WriteFile(out, data)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if mediaSx(p).screen != s || !a.currentLocked(p) || s.state != protocol.SessionStopping {
		return
	}
	st, statErr := a.phone.Stat(out)
	if err != nil || statErr != nil || st.Size() == 0 || normPath(out) != out || pathDir(out) != root {
		a.stepClockLocked(screenMachine, &s.sessionClock, protocol.EvError, "Screen recording output was not written successfully")
		return
	}
	a.stepClockLocked(screenMachine, &s.sessionClock, protocol.EvStopped, "")
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

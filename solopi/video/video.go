// Package video records a run's screen with adb's screenrecord: Start
// launches it to a device file, rolls over to a new part at the tool's time
// limit, and Stop interrupts it (SIGINT, so the file is finished), waits for
// the last part to be complete, pulls every part into the evidence
// directory (video.mp4, or video-1.mp4, video-2.mp4 ...) with its digest for
// the manifest, and deletes the device files. No SoloPi session and no
// MediaProjection dialog is involved.
//
// A recording never decides a run: its faults are reported in Result, and
// Stop is bounded by a short budget of its own, so it cannot hold off an
// interrupt for long.
package video

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"path"
	"strconv"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/solopi/adb"
)

// Mode says when a run's recording is kept.
type Mode string

const (
	ModeOff       Mode = "off"
	ModeOnFailure Mode = "on-failure"
	ModeAlways    Mode = "always"
)

// ParseMode reads a --video value ("" is off).
func ParseMode(s string) (Mode, bool) {
	switch Mode(s) {
	case "", ModeOff:
		return ModeOff, true
	case ModeOnFailure, ModeAlways:
		return Mode(s), true
	}
	return ModeOff, false
}

// Keep reports whether a recording in mode m is kept for a run that passed
// (or did not).
func (m Mode) Keep(passed bool) bool {
	return m == ModeAlways || m == ModeOnFailure && !passed
}

// Device is what the recorder needs of the device: the shell, a verified
// pull (the digest checked against the device's) and a file's size.
// solopi/replay adapts *device.Device to it.
type Device interface {
	Shell(ctx context.Context, cmd string) (stdout, stderr []byte, exitCode int, err error)
	Pull(ctx context.Context, remote string, w io.Writer) error
	Stat(ctx context.Context, remote string) (fs.FileInfo, error)
	Clock() clock.Clock
}

// Defaults of Options.
const (
	// defaultTimeLimit is screenrecord's own maximum (and default).
	defaultTimeLimit = 180 * time.Second
	// defaultStopBudget bounds Stop as a whole: the interrupt, the wait
	// for the last part, every pull and the deletion.
	defaultStopBudget = 15 * time.Second
	// interruptedStopBudget caps the budget when Stop is called after an
	// interrupt (ctx already cancelled): the user is waiting for the
	// command to end.
	interruptedStopBudget = 5 * time.Second
	// startWait bounds Start's wait for the first part's file to appear.
	startWait = 5 * time.Second
	// interruptRetry is how long Stop waits after an interrupt before it
	// sends another (one sent before the part's process existed is lost).
	interruptRetry = 500 * time.Millisecond
	// maxParts bounds the rollovers (10 hours at the default time limit),
	// so a screenrecord that keeps ending at once cannot loop for ever.
	maxParts = 200
)

// Options configure a Recorder.
type Options struct {
	// DeviceDir is where the parts are written (default /data/local/tmp).
	DeviceDir string
	// TimeLimit is each part's --time-limit (default and at most 180 s).
	TimeLimit time.Duration
	// Size (WxH) and BitRate (bits/s) are passed to screenrecord when set.
	Size    string
	BitRate int
	// StopBudget bounds Stop (default DefaultStopBudget).
	StopBudget time.Duration
	// Name is the evidence name of the parts without ".mp4" (default
	// "video": video.mp4, or video-1.mp4, video-2.mp4 ...); a run that
	// records several phones into one directory names each its own.
	Name string
}

// Recorder is one running recording.
type Recorder struct {
	dev    Device
	o      Options
	prefix string // device path of the parts without "-N.mp4"
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	start  time.Time

	mu       sync.Mutex
	parts    []string
	stopping bool
	err      error
}

// Start launches screenrecord. It returns once the first part's file exists
// on the device (screenrecord creates it when it starts), or with an error
// when the tool could not start; the recording then runs until Stop,
// unaffected by ctx.
func Start(ctx context.Context, dev Device, o Options) (*Recorder, error) {
	if o.DeviceDir == "" {
		o.DeviceDir = "/data/local/tmp"
	}
	o.TimeLimit = o.PartLength()
	if o.StopBudget <= 0 {
		o.StopBudget = defaultStopBudget
	}
	if o.Name == "" {
		o.Name = "video"
	}
	var id [6]byte
	for i := range id {
		id[i] = byte(rand.Uint32())
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r := &Recorder{dev: dev, o: o, prefix: path.Join(o.DeviceDir, "solopi-video-"+hex.EncodeToString(id[:])),
		ctx: rctx, cancel: cancel, done: make(chan struct{}), start: dev.Clock().Now()}
	go r.loop()
	first := r.partPath(1)
	wctx, wcancel := clock.WithTimeout(ctx, dev.Clock(), startWait, errors.New("screenrecord did not create its file in time"))
	defer wcancel()
	for {
		if _, err := dev.Stat(wctx, first); err == nil {
			return r, nil
		}
		select {
		case <-r.done:
			err := r.failure()
			if err == nil {
				err = errors.New("screenrecord ended before its file appeared")
			}
			return nil, err
		default:
		}
		if err := dev.Clock().Sleep(wctx, 20*time.Millisecond); err != nil {
			cause := context.Cause(wctx)
			r.Stop(ctx, nil)
			return nil, cause
		}
	}
}

// PartLength is how long each part of a recording with o runs before it
// rolls over to the next (a moment's part and second in it).
func (o Options) PartLength() time.Duration {
	if o.TimeLimit <= 0 || o.TimeLimit > defaultTimeLimit {
		return defaultTimeLimit
	}
	return o.TimeLimit
}

func (r *Recorder) partPath(n int) string { return r.prefix + "-" + strconv.Itoa(n) + ".mp4" }

func (r *Recorder) failure() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func (r *Recorder) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = err
	}
}

// loop runs one screenrecord per part until Stop or a failure.
func (r *Recorder) loop() {
	defer close(r.done)
	for n := 1; ; n++ {
		r.mu.Lock()
		if r.stopping {
			r.mu.Unlock()
			return
		}
		p := r.partPath(n)
		r.parts = append(r.parts, p)
		r.mu.Unlock()
		args := []string{"screenrecord", "--time-limit", strconv.Itoa(int(r.o.TimeLimit / time.Second))}
		if r.o.Size != "" {
			args = append(args, "--size", r.o.Size)
		}
		if r.o.BitRate > 0 {
			args = append(args, "--bit-rate", strconv.Itoa(r.o.BitRate))
		}
		_, stderr, code, err := r.dev.Shell(r.ctx, adb.ShellJoin(append(args, p)...))
		switch {
		case err != nil:
			if r.ctx.Err() == nil {
				r.fail(fmt.Errorf("screenrecord: %w", err))
			}
			return
		case code != 0:
			r.fail(fmt.Errorf("screenrecord exited with %d: %s", code, firstLine(stderr)))
			return
		}
		r.mu.Lock()
		stop := r.stopping
		r.mu.Unlock()
		if stop {
			return
		}
		// The time limit ended the part: roll over, unless the part is not
		// a finished file (the tool did not really record).
		if st, err := r.dev.Stat(r.ctx, p); err != nil || st.Size() == 0 {
			r.fail(errors.New("screenrecord ended without finishing its file; the recording was stopped"))
			return
		}
		if n >= maxParts {
			r.fail(fmt.Errorf("the recording reached %d parts and was stopped", maxParts))
			return
		}
	}
}

func firstLine(b []byte) string {
	for i, c := range b {
		if c == '\n' {
			return string(b[:i])
		}
	}
	return string(b)
}

// Result is what became of a recording, for the run's output and
// result.json (the "video" object).
type Result struct {
	Mode Mode `json:"mode"`
	// Kept is true when the parts were pulled into the evidence.
	Kept bool `json:"kept"`
	// Files are the pulled parts, with their digests (as in the manifest).
	Files []artifacts.FileEntry `json:"files"`
	// Parts is how many parts screenrecord wrote (rollovers + 1).
	Parts int `json:"parts"`
	// DurationMs is how long the recording ran (host clock).
	DurationMs int64 `json:"durationMs"`
	// Discarded says why nothing was kept ("passed" with on-failure).
	Discarded string `json:"discarded,omitempty"`
	// Error is the recording's fault, if any; it never changes the run's
	// verdict.
	Error string `json:"error,omitempty"`
}

// Stop ends the recording: it interrupts screenrecord (SIGINT through
// pkill), waits for the last part to be finished, pulls every part into
// dir (nil discards them) and deletes the device files. It runs on its own
// context, bounded by Options.StopBudget (InterruptedStopBudget when ctx
// is already cancelled), so it works after an interrupt (an interrupted
// run keeps what was recorded) and never takes longer than the budget.
// Call it once.
func (r *Recorder) Stop(ctx context.Context, dir *artifacts.Dir) *Result {
	clk := r.dev.Clock()
	budget := r.o.StopBudget
	if ctx.Err() != nil {
		budget = min(budget, interruptedStopBudget)
	}
	sctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), clk, budget, errors.New("the video's stop budget ran out"))
	defer cancel()
	// An interrupt that arrives during Stop leaves it InterruptedStopBudget
	// more at most.
	var stopTimer func() bool
	var timerMu sync.Mutex
	stopWatch := context.AfterFunc(ctx, func() {
		timerMu.Lock()
		defer timerMu.Unlock()
		stopTimer = clock.AfterFunc(clk, interruptedStopBudget, cancel)
	})
	defer func() {
		stopWatch()
		timerMu.Lock()
		defer timerMu.Unlock()
		if stopTimer != nil {
			stopTimer()
		}
	}()
	r.mu.Lock()
	r.stopping = true
	r.mu.Unlock()
	res := &Result{Files: []artifacts.FileEntry{}}
	var errs []string
	// The interrupt gets a third of the budget; the rest is for the pulls.
	ictx, icancel := clock.WithTimeout(sctx, clk, budget/3, nil)
	r.interrupt(ictx)
	icancel()
	select {
	case <-r.done:
	default:
		// Not finished within the budget: close the shell stream (adbd
		// hangs up the process; the part may be incomplete).
		r.cancel()
		select {
		case <-r.done:
		case <-sctx.Done():
		}
		errs = append(errs, "screenrecord did not finish in time after the interrupt; the last part may be incomplete")
	}
	r.cancel()
	res.DurationMs = clk.Now().Sub(r.start).Milliseconds()
	if err := r.failure(); err != nil {
		errs = append(errs, err.Error())
	}
	r.mu.Lock()
	parts := r.parts
	r.mu.Unlock()
	res.Parts = len(parts)
	if dir != nil {
		res.Kept = true
		for i, p := range parts {
			name := r.o.Name + ".mp4"
			if len(parts) > 1 {
				name = fmt.Sprintf("%s-%d.mp4", r.o.Name, i+1)
			}
			e, err := r.pull(sctx, dir, p, name)
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", name, err))
				continue
			}
			res.Files = append(res.Files, e)
		}
		res.Kept = len(res.Files) > 0
	}
	if len(parts) > 0 {
		args := append([]string{"rm", "-f"}, parts...)
		if _, stderr, code, err := r.dev.Shell(sctx, adb.ShellJoin(args...)); err != nil || code != 0 {
			msg := firstLine(stderr)
			if err != nil {
				msg = err.Error()
			}
			errs = append(errs, "deleting the device files failed: "+msg)
		}
	}
	if len(errs) > 0 {
		res.Error = joinErrs(errs)
	}
	return res
}

// interrupt sends SIGINT to this recording's screenrecord until the loop
// ends or ictx does. The pattern matches the parts' unique path prefix;
// its bracket keeps it from matching pkill's own command line.
func (r *Recorder) interrupt(ictx context.Context) {
	base := path.Base(r.prefix)
	pattern := base[:len(base)-1] + "[" + base[len(base)-1:] + "]"
	for {
		_, _, _, _ = r.dev.Shell(ictx, adb.ShellJoin("pkill", "-INT", "-f", pattern))
		wctx, cancel := clock.WithTimeout(ictx, r.dev.Clock(), interruptRetry, nil)
		select {
		case <-r.done:
			cancel()
			return
		case <-wctx.Done():
			cancel()
		}
		if ictx.Err() != nil {
			return
		}
	}
}

// pull copies one part into dir; an empty part (screenrecord never
// finished it) is an error, not a video.
func (r *Recorder) pull(ctx context.Context, dir *artifacts.Dir, remote, name string) (artifacts.FileEntry, error) {
	st, err := r.dev.Stat(ctx, remote)
	if err != nil {
		return artifacts.FileEntry{}, fmt.Errorf("the part is missing on the device: %w", err)
	}
	if st.Size() == 0 {
		return artifacts.FileEntry{}, errors.New("the part is empty (screenrecord did not finish it)")
	}
	w, err := dir.Create(name, "screenrecord")
	if err != nil {
		return artifacts.FileEntry{}, err
	}
	if err := r.dev.Pull(ctx, remote, w); err != nil {
		w.Abort()
		return artifacts.FileEntry{}, err
	}
	return w.Commit()
}

func joinErrs(errs []string) string {
	out := errs[0]
	for _, e := range errs[1:] {
		out += "; " + e
	}
	return out
}

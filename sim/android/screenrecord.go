package android

// adb's screenrecord: records what the rendered screen shows into an MP4
// (JPEG frames through the simulator's one MP4 writer, sim/android/mp4)
// until its time limit (default and maximum 180 s of device time, as
// Android), a SIGINT/SIGTERM/SIGHUP (kill, pkill) or the shell stream
// closing; each of these ends keeps what was recorded. SIGKILL leaves the
// empty file the muxer opened at the start, as on a device.

import (
	"bytes"
	"context"
	"hash/maphash"
	"image"
	"image/jpeg"
	"strconv"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/sim/android/mp4"
	"github.com/solopi-dev/solopi/sim/android/shell"
)

const (
	screenrecordMaxLimit = 180 // seconds
	// screenrecordGap is the shortest time (device time) between two
	// frames: a frame is taken when the screen changes, at most this often
	// (an unchanged screen extends the previous frame).
	screenrecordGap = 100 * time.Millisecond
)

type screenrecordOpts struct {
	limit   time.Duration
	w, h    int
	bitRate int
	verbose bool
	out     string
}

func parseScreenrecord(sc *shellCtx, args []string) (screenrecordOpts, bool) {
	o := screenrecordOpts{limit: screenrecordMaxLimit * time.Second, bitRate: 20000000}
	sc.p.view(func() { o.w, o.h = sc.p.cfg.Width, sc.p.cfg.Height })
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		needs := name == "--time-limit" || name == "--size" || name == "--bit-rate"
		if needs && !hasVal {
			if i+1 >= len(args) {
				sc.Errf("screenrecord: option '%s' requires an argument\n", name)
				return o, false
			}
			i++
			val = args[i]
		}
		switch {
		case name == "--time-limit":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || n > screenrecordMaxLimit {
				sc.Errf("Time limit %ss outside acceptable range [1,%d]\n", val, screenrecordMaxLimit)
				return o, false
			}
			o.limit = time.Duration(n) * time.Second
		case name == "--size":
			ws, hs, ok := strings.Cut(val, "x")
			w, err1 := strconv.Atoi(ws)
			h, err2 := strconv.Atoi(hs)
			if !ok || err1 != nil || err2 != nil || w < 2 || h < 2 || w > 4096 || h > 4096 || w%2 != 0 || h%2 != 0 {
				sc.Errf("Invalid size '%s', must be width x height\n", val)
				return o, false
			}
			o.w, o.h = w, h
		case name == "--bit-rate":
			n, ok := parseBitRate(val)
			if !ok {
				sc.Errf("Invalid bit rate '%s'\n", val)
				return o, false
			}
			o.bitRate = n
		case a == "--verbose":
			o.verbose = true
		case strings.HasPrefix(a, "-") && a != "-":
			sc.Errf("screenrecord: unrecognized option '%s'\n", a)
			return o, false
		default:
			if o.out != "" {
				sc.Errf("Must specify output file (see --help).\n")
				return o, false
			}
			o.out = sc.Abs(a)
		}
	}
	if o.out == "" {
		sc.Errf("Must specify output file (see --help).\n")
		return o, false
	}
	return o, true
}

// parseBitRate reads bits per second, with an optional K or M suffix.
func parseBitRate(s string) (int, bool) {
	mul := 1
	switch {
	case strings.HasSuffix(s, "M") || strings.HasSuffix(s, "m"):
		mul, s = 1000000, s[:len(s)-1]
	case strings.HasSuffix(s, "K") || strings.HasSuffix(s, "k"):
		mul, s = 1000, s[:len(s)-1]
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > 200000000/mul {
		return 0, false
	}
	return n * mul, true
}

func cmdScreenrecord(sc *shellCtx, args []string) int {
	o, ok := parseScreenrecord(sc, args)
	if !ok {
		return 1
	}
	p := sc.p
	// The muxer opens (creates) the output at the start; it is complete
	// only once screenrecord exits.
	if err := p.fs.WriteFile(o.out, 0o660, time.Time{}, bytes.NewReader(nil)); err != nil {
		sc.Errf("Unable to open '%s': %s\n", o.out, shell.ErrText(err))
		return 1
	}
	if o.verbose {
		sc.Outf("Main display is %dx%d\nConfigured recording: %dx%d, %d bps, time limit %ds\n",
			o.w, o.h, o.w, o.h, o.bitRate, int(o.limit/time.Second))
	}
	var frames []mp4.Frame
	var stamps []time.Time
	var lastVersion uint64
	// A new UI version often draws the same pixels (a clock tick under a
	// dialog, a state change the screen does not show): such a frame
	// reuses the last one's JPEG, the bytes its encoding gave.
	var lastSum uint64
	var lastRect image.Rectangle
	var lastJPEG []byte
	start := p.clk.Now()
	capture := func(now time.Time) error {
		var img *image.RGBA
		var v uint64
		p.view(func() {
			if v = p.version; len(frames) == 0 || v != lastVersion {
				img = p.renderLocked()
			}
		})
		if img == nil {
			return nil
		}
		b := lastJPEG
		if sum := maphash.Bytes(shotSeed, img.Pix); b == nil || sum != lastSum || img.Rect != lastRect {
			var err error
			b, err = encodeFrame(img, o.w, o.h)
			if err != nil {
				releaseFrame(img)
				return err
			}
			lastSum, lastRect, lastJPEG = sum, img.Rect, b
		}
		releaseFrame(img)
		lastVersion = v
		frames = append(frames, mp4.Frame{JPEG: b})
		stamps = append(stamps, now)
		return nil
	}
	if err := capture(start); err != nil {
		sc.Errf("screenrecord: %v\n", err)
		return 1
	}
	// Listed (and signalable) once the first frame is in.
	sp := p.procs.start("screenrecord", args)
	defer p.procs.done(sp)
	waitCtx, cancel := context.WithCancel(sc.Ctx)
	defer cancel()
	go func() {
		// The time limit ends the recording like an interrupt does.
		_ = p.clk.Sleep(waitCtx, o.limit)
		cancel()
	}()
	sig := 0
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case sig = <-sp.sig:
			cancel()
		case <-waitCtx.Done():
		}
	}()
	for waitCtx.Err() == nil {
		var changed chan struct{}
		p.view(func() { changed = p.changed })
		if err := capture(p.clk.Now()); err != nil {
			sc.Errf("screenrecord: %v\n", err)
			return 1
		}
		select {
		case <-changed:
		case <-waitCtx.Done():
		}
		_ = p.clk.Sleep(waitCtx, screenrecordGap)
	}
	cancel() // stops the signal watcher, so reading sig below is safe
	<-watched
	if sig == sigKILL {
		return 128 + sigKILL
	}
	end := p.clk.Now()
	if limit := start.Add(o.limit); end.After(limit) {
		end = limit
	}
	// The last change before the end is shown too.
	if err := capture(end); err != nil {
		sc.Errf("screenrecord: %v\n", err)
		return 1
	}
	for i := range frames {
		next := end
		if i+1 < len(frames) {
			next = stamps[i+1]
		}
		frames[i].DurationMs = uint32(max(1, next.Sub(stamps[i]).Milliseconds()))
	}
	data, err := mp4.MJPEG(o.w, o.h, frames)
	if err == nil {
		err = p.fs.WriteFile(o.out, 0o660, time.Time{}, bytes.NewReader(data))
	}
	if err != nil {
		sc.Errf("screenrecord: writing '%s' failed: %v\n", o.out, err)
		return 1
	}
	return 0
}

// encodeFrame scales img to w×h (nearest neighbour) and encodes it as JPEG.
func encodeFrame(img *image.RGBA, w, h int) ([]byte, error) {
	src := img
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		src = image.NewRGBA(image.Rect(0, 0, w, h))
		for y := range h {
			sy := b.Min.Y + y*b.Dy()/h
			for x := range w {
				sx := b.Min.X + x*b.Dx()/w
				i, j := src.PixOffset(x, y), img.PixOffset(sx, sy)
				copy(src.Pix[i:i+4], img.Pix[j:j+4])
			}
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, src, &jpeg.Options{Quality: 60}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

package android

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"image"
	"image/png"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/internal/recent"
	"github.com/solopi-dev/solopi/sim/android/ui"
	"github.com/solopi-dev/solopi/sim/screenstyle"
)

// ErrScreenshotFault is the default error of an injected screenshot fault.
var ErrScreenshotFault = errors.New("screen capture failed")

// The phone's names for the simulator's shared window backgrounds, and the
// keyboard's, which only the phone draws (package ui paints the nodes).
var (
	bgApp       = screenstyle.Background
	bgStatusBar = screenstyle.StatusBar
	fgStatusBar = screenstyle.StatusBarText
	bgIME       = screenstyle.RGB(0x21, 0x21, 0x21)
)

// SetScreenshotFault makes every following screenshot wait delay (simulated
// time) and then fail with err; err nil with a delay only slows screenshots
// down. SetScreenshotFault(nil, 0) clears the fault.
func (p *Phone) SetScreenshotFault(err error, delay time.Duration) {
	p.view(func() { p.shotErr, p.shotDelay = err, delay })
}

// Screenshot renders the screen as a PNG. The same UI state always gives
// identical bytes.
func (p *Phone) Screenshot() ([]byte, error) { return p.ScreenshotContext(context.Background()) }

// ScreenshotContext is Screenshot with a context for the injected delay.
func (p *Phone) ScreenshotContext(ctx context.Context) ([]byte, error) {
	var ferr error
	var delay time.Duration
	p.view(func() { ferr, delay = p.shotErr, p.shotDelay })
	if delay > 0 {
		if err := p.clk.Sleep(ctx, delay); err != nil {
			return nil, fmt.Errorf("screenshot: %w", err)
		}
	}
	if ferr != nil {
		return nil, fmt.Errorf("screenshot: %w", ferr)
	}
	var img *image.RGBA
	var version uint64
	var cached []byte
	p.view(func() {
		version = p.version
		if p.shotCache.png != nil && p.shotCache.version == version {
			cached = p.shotCache.png
			return
		}
		img = p.renderLocked()
	})
	if cached != nil {
		return bytes.Clone(cached), nil
	}
	out, err := p.shots.encode(img)
	releaseFrame(img)
	if err != nil {
		return nil, fmt.Errorf("screenshot: encode png: %w", err)
	}
	p.view(func() {
		if p.version == version {
			p.shotCache.version, p.shotCache.png = version, out
		}
	})
	return bytes.Clone(out), nil
}

// shotEncodings keeps the PNGs of the last screens a phone showed, keyed by
// their pixels. The UI version changes with every state change (a tap, a
// clock tick), but a suite shows the same few screens over and over (the
// counter at 0 before every shard), and encoding a screen is most of a
// screenshot's cost: hashing the pixels is a small part of it, and the bytes
// stay exactly those the encoder gives for them.
type shotEncodings struct {
	list recent.List[shotKey, []byte]
}

// shotKey is a screen's pixels: their hash and their length.
type shotKey struct {
	sum uint64
	n   int
}

// shotSeed keys the pixels with a 64-bit hash under a seed chosen at
// random per process: a wrong screenshot needs two different screens of
// the same size to collide among the last 16, about one chance in 10^18
// per screenshot. Hashing a screen is a few ms where SHA-256 takes 15; a
// second independent hash doubled that for no safety a suite can measure
// (it was half of screencap's CPU time in the farm test).
var shotSeed = maphash.MakeSeed()

// shotEncodingsKept is how many screens a phone remembers.
const shotEncodingsKept = 16

func (c *shotEncodings) encode(img *image.RGBA) ([]byte, error) {
	key := shotKey{maphash.Bytes(shotSeed, img.Pix), len(img.Pix)}
	if b, ok := c.list.Get(key); ok {
		return b, nil
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, err
	}
	c.list.Put(key, buf.Bytes())
	return buf.Bytes(), nil
}

// frames recycles the pixel buffers renders draw into. A render is 10 MB
// at 1080×2400, encoded once and dropped; allocating each one afresh made
// the garbage collector run every other screenshot of a farm's worker.
var frames sync.Pool

// releaseFrame hands a render's buffer back once nothing reads it.
func releaseFrame(img *image.RGBA) { frames.Put(img) }

// renderLocked draws the windows bottom to top, over the whole screen (a
// recycled buffer keeps nothing of the screen it held before).
func (p *Phone) renderLocked() *image.RGBA {
	r := image.Rect(0, 0, p.cfg.Width, p.cfg.Height)
	img, ok := frames.Get().(*image.RGBA)
	if !ok || img.Rect != r {
		img = image.NewRGBA(r)
	}
	screenstyle.Fill(img, img.Rect, bgApp)
	lws := p.liveWindowsLocked()
	for i := len(lws) - 1; i >= 0; i-- {
		lw := lws[i]
		switch lw.w.Kind {
		case ui.WindowStatusBar:
			screenstyle.Fill(img, lw.w.Bounds.Rectangle(), bgStatusBar)
			lw.root.walk(func(n *liveNode) {
				if n.n.Text != "" {
					ui.DrawLabel(img, n.n.Bounds, n.n.Bounds.Rectangle(), n.n.Text, fgStatusBar, false)
				}
			})
			continue
		case ui.WindowIME:
			screenstyle.Fill(img, lw.w.Bounds.Rectangle(), bgIME)
		case ui.WindowApp:
			// The bottom window lies on the background already filled
			// with its colour: a second fill of a full screen was a
			// tenth of a screenshot's time.
			if i != len(lws)-1 {
				screenstyle.Fill(img, lw.w.Bounds.Rectangle(), bgApp)
			}
		}
		lw.root.walk(func(n *liveNode) {
			// Draw at the unclipped position and clip to the visible part, so
			// a half-scrolled row shows half of its label, as on a device.
			full := n.n.Bounds
			if !n.refB.Empty() {
				full = p.scaleRect(n.refB)
			}
			ui.DrawNode(img, &n.n, full)
		})
	}
	return img
}

func (ln *liveNode) walk(f func(*liveNode)) {
	if ln == nil {
		return
	}
	f(ln)
	for _, c := range ln.children {
		c.walk(f)
	}
}

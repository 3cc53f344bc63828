package android

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"time"

	"github.com/solopi-dev/solopi/sim/screenstyle"
)

// FontScale is how many times the bitmap font is enlarged in screenshots.
const FontScale = screenstyle.FontScale

// ErrScreenshotFault is the default error of an injected screenshot fault.
var ErrScreenshotFault = errors.New("screen capture failed")

// The phone's names for the simulator's shared visual style, and the
// colours only the phone draws.
var (
	kindStyle   = screenstyle.Kinds
	bgApp       = screenstyle.Background
	bgStatusBar = screenstyle.StatusBar
	fgStatusBar = screenstyle.StatusBarText
	bgIME       = screenstyle.RGB(0x21, 0x21, 0x21)
	hintColor   = screenstyle.RGB(0x9e, 0x9e, 0x9e)
	focusColor  = screenstyle.RGB(0xff, 0x98, 0x00)
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
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("screenshot: encode png: %w", err)
	}
	out := buf.Bytes()
	p.view(func() {
		if p.version == version {
			p.shotCache.version, p.shotCache.png = version, out
		}
	})
	return bytes.Clone(out), nil
}

// renderLocked draws the windows bottom to top.
func (p *Phone) renderLocked() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, p.cfg.Width, p.cfg.Height))
	fill(img, img.Rect, bgApp)
	lws := p.liveWindowsLocked()
	for i := len(lws) - 1; i >= 0; i-- {
		lw := lws[i]
		switch lw.w.Kind {
		case WindowStatusBar:
			fill(img, toImg(lw.w.Bounds), bgStatusBar)
			lw.root.walk(func(n *liveNode) {
				if n.n.Text != "" {
					drawLabel(img, n.n.Bounds, toImg(n.n.Bounds), n.n.Text, fgStatusBar, false)
				}
			})
			continue
		case WindowIME:
			fill(img, toImg(lw.w.Bounds), bgIME)
		case WindowApp:
			fill(img, toImg(lw.w.Bounds), bgApp)
		}
		lw.root.walk(func(n *liveNode) {
			// Draw at the unclipped position and clip to the visible part, so
			// a half-scrolled row shows half of its label, as on a device.
			full := n.n.Bounds
			if !n.refB.Empty() {
				full = p.scaleRect(n.refB)
			}
			drawNode(img, &n.n, full)
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

func toImg(r Rect) image.Rectangle { return image.Rect(r.Left, r.Top, r.Right, r.Bottom) }

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) { screenstyle.Fill(img, r, c) }

func drawNode(img *image.RGBA, n *Node, full Rect) {
	st, ok := kindStyle[n.Kind]
	if !ok {
		st = kindStyle["container"]
	}
	clip := toImg(n.Bounds)
	r := toImg(full)
	if st.Fill.A != 0 {
		fill(img, clip, st.Fill)
	}
	border := st.Border
	if n.Focused {
		border = focusColor
	}
	if border.A != 0 {
		const t = 4
		for _, edge := range []image.Rectangle{
			image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+t), image.Rect(r.Min.X, r.Max.Y-t, r.Max.X, r.Max.Y),
			image.Rect(r.Min.X, r.Min.Y, r.Min.X+t, r.Max.Y), image.Rect(r.Max.X-t, r.Min.Y, r.Max.X, r.Max.Y),
		} {
			fill(img, edge.Intersect(clip), border)
		}
	}
	label := n.Text
	if label == "" && (n.Kind == "image" || n.Kind == "icon") {
		label = n.Description
	}
	if label == "" {
		return
	}
	tc := st.Text
	if n.Editable && n.Hint != "" && label == n.Hint {
		tc = hintColor
	}
	drawLabel(img, full, clip, label, tc, st.Center)
}

// drawLabel draws text scaled by FontScale inside b (clipped to visible), vertically
// centred, left-aligned with padding or centred, truncated with ".." when it
// does not fit. Runes outside ASCII are drawn as '?' (the password bullet
// as '*').
func drawLabel(img *image.RGBA, b Rect, visible image.Rectangle, text string, c color.RGBA, center bool) {
	gw, gh := screenstyle.GlyphSize()
	const pad = 16
	avail := (b.Width() - 2*pad) / gw
	if avail <= 0 {
		return
	}
	runes := []rune(text)
	if len(runes) > avail {
		if avail > 2 {
			runes = append(runes[:avail-2:avail-2], '.', '.')
		} else {
			runes = runes[:avail]
		}
	}
	x := b.Left + pad
	if center {
		x = b.Left + (b.Width()-len(runes)*gw)/2
	}
	y := b.Top + (b.Height()-gh)/2
	clip := visible.Intersect(img.Rect)
	for i, r := range runes {
		if r == '\u2022' {
			runes[i] = '*'
		}
	}
	screenstyle.DrawRunes(img, runes, x, y, clip, c)
}

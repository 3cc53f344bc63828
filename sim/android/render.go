package android

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"time"

	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// FontScale is how many times the 7x13 bitmap font is enlarged when labels
// are drawn into screenshots: at 3x a glyph is 21x39 pixels, which a vision
// model reads reliably on a 1080-pixel-wide screen.
const FontScale = 3

// ErrScreenshotFault is the default error of an injected screenshot fault.
var ErrScreenshotFault = errors.New("screen capture failed")

// Colours per control kind. They are deliberately distinct so that a vision
// model (or a test) can tell controls apart by colour alone.
var kindStyle = map[string]struct {
	fill, border, text color.RGBA
	center             bool
}{
	"container": {text: rgb(0x21, 0x21, 0x21)},
	"toolbar":   {fill: rgb(0x3f, 0x51, 0xb5), text: rgb(0xff, 0xff, 0xff)},
	"button":    {fill: rgb(0x19, 0x76, 0xd2), border: rgb(0x0d, 0x47, 0xa1), text: rgb(0xff, 0xff, 0xff), center: true},
	"field":     {fill: rgb(0xff, 0xff, 0xff), border: rgb(0x61, 0x61, 0x61), text: rgb(0x00, 0x00, 0x00)},
	"text":      {fill: rgb(0xff, 0xf8, 0xe1), text: rgb(0x21, 0x21, 0x21), center: true},
	"item":      {fill: rgb(0xe8, 0xf5, 0xe9), border: rgb(0x81, 0xc7, 0x84), text: rgb(0x1b, 0x5e, 0x20)},
	"image":     {fill: rgb(0xff, 0xb7, 0x4d), border: rgb(0xe6, 0x51, 0x00), text: rgb(0x3e, 0x27, 0x23), center: true},
	"list":      {fill: rgb(0xf5, 0xf5, 0xf5), border: rgb(0xbd, 0xbd, 0xbd)},
	"icon":      {fill: rgb(0x7e, 0x57, 0xc2), border: rgb(0x4a, 0x14, 0x8c), text: rgb(0xff, 0xff, 0xff), center: true},
	"key":       {fill: rgb(0x42, 0x42, 0x42), border: rgb(0x61, 0x61, 0x61), text: rgb(0xff, 0xff, 0xff), center: true},
	"overlay":   {fill: rgb(0xb7, 0x1c, 0x1c), border: rgb(0xff, 0xeb, 0x3b), text: rgb(0xff, 0xff, 0xff), center: true},
}

var (
	bgApp       = rgb(0xfa, 0xfa, 0xfa)
	bgStatusBar = rgb(0x00, 0x00, 0x00)
	fgStatusBar = rgb(0xff, 0xff, 0xff)
	bgIME       = rgb(0x21, 0x21, 0x21)
	hintColor   = rgb(0x9e, 0x9e, 0x9e)
	focusColor  = rgb(0xff, 0x98, 0x00)
)

func rgb(r, g, b uint8) color.RGBA { return color.RGBA{r, g, b, 0xff} }

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

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	draw.Draw(img, r.Intersect(img.Rect), &image.Uniform{C: c}, image.Point{}, draw.Src)
}

func drawNode(img *image.RGBA, n *Node, full Rect) {
	st, ok := kindStyle[n.Kind]
	if !ok {
		st = kindStyle["container"]
	}
	clip := toImg(n.Bounds)
	r := toImg(full)
	if st.fill.A != 0 {
		fill(img, clip, st.fill)
	}
	border := st.border
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
	tc := st.text
	if n.Editable && n.Hint != "" && label == n.Hint {
		tc = hintColor
	}
	drawLabel(img, full, clip, label, tc, st.center)
}

// drawLabel draws text scaled by FontScale inside b (clipped to visible), vertically
// centred, left-aligned with padding or centred, truncated with ".." when it
// does not fit. Runes outside ASCII are drawn as '?' (the password bullet
// as '*').
func drawLabel(img *image.RGBA, b Rect, visible image.Rectangle, text string, c color.RGBA, center bool) {
	face := basicfont.Face7x13
	gw, gh := face.Advance*FontScale, (face.Ascent+face.Descent)*FontScale
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
	for _, r := range runes {
		switch {
		case r == '\u2022':
			r = '*'
		case r < 0x20 || r > 0x7e:
			r = '?'
		}
		dr, mask, mp, _, ok := face.Glyph(fixed.P(0, face.Ascent), r)
		if ok {
			for gy := 0; gy < dr.Dy(); gy++ {
				for gx := 0; gx < dr.Dx(); gx++ {
					_, _, _, a := mask.At(mp.X+gx, mp.Y+gy).RGBA()
					if a < 0x8000 {
						continue
					}
					px, py := x+(dr.Min.X+gx)*FontScale, y+(dr.Min.Y+gy)*FontScale
					fill(img, image.Rect(px, py, px+FontScale, py+FontScale).Intersect(clip), c)
				}
			}
		}
		x += gw
	}
}

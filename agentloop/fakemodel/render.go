package fakemodel

import (
	"image"
	"image/color"
	"image/draw"

	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// FontScale matches the simulator: the 7×13 bitmap font drawn 3× larger.
const FontScale = 3

// Style is one control kind's colours, the simulator's palette: every kind
// has a distinct fill so that a vision model can tell controls apart.
type Style struct {
	Fill, Border, Text color.RGBA
	Center             bool
}

func rgb(r, g, b uint8) color.RGBA { return color.RGBA{r, g, b, 0xff} }

// Styles are the simulator's control kinds.
var Styles = map[string]Style{
	"toolbar": {Fill: rgb(0x3f, 0x51, 0xb5), Text: rgb(0xff, 0xff, 0xff)},
	"button":  {Fill: rgb(0x19, 0x76, 0xd2), Border: rgb(0x0d, 0x47, 0xa1), Text: rgb(0xff, 0xff, 0xff), Center: true},
	"field":   {Fill: rgb(0xff, 0xff, 0xff), Border: rgb(0x61, 0x61, 0x61), Text: rgb(0x00, 0x00, 0x00)},
	"text":    {Fill: rgb(0xff, 0xf8, 0xe1), Text: rgb(0x21, 0x21, 0x21), Center: true},
	"item":    {Fill: rgb(0xe8, 0xf5, 0xe9), Border: rgb(0x81, 0xc7, 0x84), Text: rgb(0x1b, 0x5e, 0x20)},
	"overlay": {Fill: rgb(0xb7, 0x1c, 0x1c), Border: rgb(0xff, 0xeb, 0x3b), Text: rgb(0xff, 0xff, 0xff), Center: true},
	"label":   {Text: rgb(0x21, 0x21, 0x21)},
}

// Background colours of the simulator.
var (
	BackgroundApp = rgb(0xfa, 0xfa, 0xfa)
	StatusBar     = rgb(0x00, 0x00, 0x00)
)

// Canvas draws screens in the simulator's visual style: light background,
// coloured boxes, labels in basicfont at FontScale.
type Canvas struct{ Img *image.RGBA }

// NewCanvas returns a w×h screen with a black status bar of statusH
// pixels (0 for none).
func NewCanvas(w, h, statusH int) *Canvas {
	c := &Canvas{Img: image.NewRGBA(image.Rect(0, 0, w, h))}
	fill(c.Img, c.Img.Rect, BackgroundApp)
	if statusH > 0 {
		fill(c.Img, image.Rect(0, 0, w, statusH), StatusBar)
	}
	return c
}

func fill(img *image.RGBA, r image.Rectangle, col color.RGBA) {
	draw.Draw(img, r.Intersect(img.Rect), &image.Uniform{C: col}, image.Point{}, draw.Src)
}

// Box draws a control of a kind with its label.
func (c *Canvas) Box(kind string, r image.Rectangle, label string) {
	st, ok := Styles[kind]
	if !ok {
		st = Styles["label"]
	}
	if st.Fill.A != 0 {
		fill(c.Img, r, st.Fill)
	}
	if st.Border.A != 0 {
		const t = 4
		fill(c.Img, image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+t), st.Border)
		fill(c.Img, image.Rect(r.Min.X, r.Max.Y-t, r.Max.X, r.Max.Y), st.Border)
		fill(c.Img, image.Rect(r.Min.X, r.Min.Y, r.Min.X+t, r.Max.Y), st.Border)
		fill(c.Img, image.Rect(r.Max.X-t, r.Min.Y, r.Max.X, r.Max.Y), st.Border)
	}
	if label != "" {
		DrawLabel(c.Img, r, label, st.Text, st.Center)
	}
}

// DrawLabel draws text the way the simulator does: scaled by FontScale,
// vertically centred, centred or left-aligned with 16 px padding.
func DrawLabel(img *image.RGBA, b image.Rectangle, text string, col color.RGBA, center bool) {
	face := basicfont.Face7x13
	gw, gh := face.Advance*FontScale, (face.Ascent+face.Descent)*FontScale
	const pad = 16
	avail := (b.Dx() - 2*pad) / gw
	if avail <= 0 {
		return
	}
	runes := []rune(text)
	if len(runes) > avail {
		runes = runes[:avail]
	}
	x := b.Min.X + pad
	if center {
		x = b.Min.X + (b.Dx()-len(runes)*gw)/2
	}
	y := b.Min.Y + (b.Dy()-gh)/2
	clip := b.Intersect(img.Rect)
	for _, r := range runes {
		if r < 0x20 || r > 0x7e {
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
					fill(img, image.Rect(px, py, px+FontScale, py+FontScale).Intersect(clip), col)
				}
			}
		}
		x += gw
	}
}

// CounterScreen draws the simulator's counter app (same bounds as
// sim/android/apps/counter.json) showing value, on a 1080×2340 screen.
func CounterScreen(value string) *image.RGBA {
	c := NewCanvas(1080, 2340, 63)
	c.Box("toolbar", image.Rect(0, 63, 1080, 231), "Counter")
	c.Box("text", image.Rect(340, 640, 740, 880), value)
	status := "Idle"
	if value != "0" {
		status = "Counting"
	}
	c.Box("label", image.Rect(240, 900, 840, 1000), status)
	c.Box("button", image.Rect(120, 1120, 520, 1290), "Reset")
	c.Box("button", image.Rect(560, 1120, 960, 1290), "+1")
	return c.Img
}

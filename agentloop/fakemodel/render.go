package fakemodel

import (
	"image"
	"image/color"
	"maps"

	"github.com/solopi-dev/solopi/sim/screenstyle"
)

// fontScale matches the simulator: the 7×13 bitmap font drawn 3× larger.
const fontScale = screenstyle.FontScale

// style is one control kind's colours, the simulator's palette: every kind
// has a distinct fill so that a vision model can tell controls apart.
type style = screenstyle.Style

// styles are the simulator's control kinds, plus "label": a container's
// text colour on no box.
var styles = func() map[string]style {
	m := maps.Clone(screenstyle.Kinds)
	m["label"] = screenstyle.Kinds["container"]
	return m
}()

// Background colours of the simulator.
var (
	backgroundApp = screenstyle.Background
	statusBar     = screenstyle.StatusBar
)

// Canvas draws screens in the simulator's visual style: light background,
// coloured boxes, labels in basicfont at FontScale.
type Canvas struct{ Img *image.RGBA }

// NewCanvas returns a w×h screen with a black status bar of statusH
// pixels (0 for none).
func NewCanvas(w, h, statusH int) *Canvas {
	c := &Canvas{Img: image.NewRGBA(image.Rect(0, 0, w, h))}
	fill(c.Img, c.Img.Rect, backgroundApp)
	if statusH > 0 {
		fill(c.Img, image.Rect(0, 0, w, statusH), statusBar)
	}
	return c
}

func fill(img *image.RGBA, r image.Rectangle, col color.RGBA) { screenstyle.Fill(img, r, col) }

// Box draws a control of a kind with its label.
func (c *Canvas) Box(kind string, r image.Rectangle, label string) {
	st, ok := styles[kind]
	if !ok {
		st = styles["label"]
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
		drawLabel(c.Img, r, label, st.Text, st.Center)
	}
}

// drawLabel draws text the way the simulator does: scaled by FontScale,
// vertically centred, centred or left-aligned with 16 px padding.
func drawLabel(img *image.RGBA, b image.Rectangle, text string, col color.RGBA, center bool) {
	gw, gh := screenstyle.GlyphSize()
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
	screenstyle.DrawRunes(img, runes, x, y, clip, col)
}

// CounterScreen draws the simulator's counter app (same bounds as
// sim/android/appspec/apps/counter.json) showing value, on a 1080×2340 screen.
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

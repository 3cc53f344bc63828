// Package screenstyle is the simulator's visual style: the colours of each
// control kind and the scaled bitmap font of its labels. The simulated
// phone (sim/android) renders its screenshots with it, and the fake vision
// model (agentloop/fakemodel) draws and reads the same style.
package screenstyle

import (
	"image"
	"image/color"
	"image/draw"

	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// FontScale is how many times the 7x13 bitmap font is enlarged when labels
// are drawn into screenshots: at 3x a glyph is 21x39 pixels, which a vision
// model reads reliably on a 1080-pixel-wide screen.
const FontScale = 3

// Style is one control kind's colours; a zero colour is not drawn.
type Style struct {
	Fill, Border, Text color.RGBA
	Center             bool
}

// RGB is an opaque colour.
func RGB(r, g, b uint8) color.RGBA { return color.RGBA{r, g, b, 0xff} }

// Kinds are the colours per control kind. They are deliberately distinct so
// that a vision model (or a test) can tell controls apart by colour alone.
var Kinds = map[string]Style{
	"container": {Text: RGB(0x21, 0x21, 0x21)},
	"toolbar":   {Fill: RGB(0x3f, 0x51, 0xb5), Text: RGB(0xff, 0xff, 0xff)},
	"button":    {Fill: RGB(0x19, 0x76, 0xd2), Border: RGB(0x0d, 0x47, 0xa1), Text: RGB(0xff, 0xff, 0xff), Center: true},
	"field":     {Fill: RGB(0xff, 0xff, 0xff), Border: RGB(0x61, 0x61, 0x61), Text: RGB(0x00, 0x00, 0x00)},
	"text":      {Fill: RGB(0xff, 0xf8, 0xe1), Text: RGB(0x21, 0x21, 0x21), Center: true},
	"item":      {Fill: RGB(0xe8, 0xf5, 0xe9), Border: RGB(0x81, 0xc7, 0x84), Text: RGB(0x1b, 0x5e, 0x20)},
	"image":     {Fill: RGB(0xff, 0xb7, 0x4d), Border: RGB(0xe6, 0x51, 0x00), Text: RGB(0x3e, 0x27, 0x23), Center: true},
	"list":      {Fill: RGB(0xf5, 0xf5, 0xf5), Border: RGB(0xbd, 0xbd, 0xbd)},
	"icon":      {Fill: RGB(0x7e, 0x57, 0xc2), Border: RGB(0x4a, 0x14, 0x8c), Text: RGB(0xff, 0xff, 0xff), Center: true},
	"key":       {Fill: RGB(0x42, 0x42, 0x42), Border: RGB(0x61, 0x61, 0x61), Text: RGB(0xff, 0xff, 0xff), Center: true},
	"overlay":   {Fill: RGB(0xb7, 0x1c, 0x1c), Border: RGB(0xff, 0xeb, 0x3b), Text: RGB(0xff, 0xff, 0xff), Center: true},
}

// Screen colours outside the controls.
var (
	Background    = RGB(0xfa, 0xfa, 0xfa)
	StatusBar     = RGB(0x00, 0x00, 0x00)
	StatusBarText = RGB(0xff, 0xff, 0xff)
)

// Fill paints r (clipped to img) with col.
func Fill(img *image.RGBA, r image.Rectangle, col color.RGBA) {
	draw.Draw(img, r.Intersect(img.Rect), &image.Uniform{C: col}, image.Point{}, draw.Src)
}

// GlyphSize is the advance and the line height of a scaled glyph.
func GlyphSize() (w, h int) {
	face := basicfont.Face7x13
	return face.Advance * FontScale, (face.Ascent + face.Descent) * FontScale
}

// DrawRunes draws runes left to right from (x, y), the top left of the
// first glyph, each one FontScale times enlarged and clipped to clip.
// Runes outside printable ASCII are drawn as '?'.
func DrawRunes(img *image.RGBA, runes []rune, x, y int, clip image.Rectangle, col color.RGBA) {
	face := basicfont.Face7x13
	gw, _ := GlyphSize()
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
					Fill(img, image.Rect(px, py, px+FontScale, py+FontScale).Intersect(clip), col)
				}
			}
		}
		x += gw
	}
}

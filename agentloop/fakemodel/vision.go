package fakemodel

import (
	"image"
	"image/color"
	"math"
	"strconv"

	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// control is a control found in a screenshot: its kind (by fill colour),
// its box in image pixels and its label read by template matching.
type control struct {
	Kind  string
	Box   image.Rectangle
	Label string
	Score float64
}

// Center is the control's centre in image pixels.
func (c control) Center() (float64, float64) {
	return float64(c.Box.Min.X+c.Box.Max.X-1) / 2, float64(c.Box.Min.Y+c.Box.Max.Y-1) / 2
}

func near(p []uint8, c color.RGBA, tol int) bool {
	d := func(a, b uint8) int {
		if a > b {
			return int(a - b)
		}
		return int(b - a)
	}
	return d(p[0], c.R) <= tol && d(p[1], c.G) <= tol && d(p[2], c.B) <= tol
}

// fillTolerance is how far (per channel) a pixel may be from a fill colour
// and still belong to its box. JPEG's ringing and chroma subsampling move
// pixels near edges and glyphs by up to about a dozen levels, which must
// not split a box; the closest pair the simulator draws side by side (the
// "text" fill on the background) differs by 25.
const fillTolerance = 16

// findBoxes returns the bounding boxes of connected regions of a fill
// colour at least minSide pixels wide and high.
func findBoxes(img *image.RGBA, fill color.RGBA, minSide int) []image.Rectangle {
	w, h := img.Rect.Dx(), img.Rect.Dy()
	seen := make([]bool, w*h)
	var out []image.Rectangle
	var stack []int
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := y*w + x
			if seen[i] {
				continue
			}
			o := img.PixOffset(x, y)
			if !near(img.Pix[o:o+3], fill, fillTolerance) {
				continue
			}
			r := image.Rect(x, y, x+1, y+1)
			seen[i] = true
			stack = append(stack[:0], i)
			for len(stack) > 0 {
				j := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				jx, jy := j%w, j/w
				r = r.Union(image.Rect(jx, jy, jx+1, jy+1))
				for _, d := range [4][2]int{{1, 0}, {-1, 0}, {0, 1}, {0, -1}} {
					nx, ny := jx+d[0], jy+d[1]
					if nx < 0 || ny < 0 || nx >= w || ny >= h {
						continue
					}
					k := ny*w + nx
					if seen[k] {
						continue
					}
					po := img.PixOffset(nx, ny)
					if near(img.Pix[po:po+3], fill, fillTolerance) {
						seen[k] = true
						stack = append(stack, k)
					}
				}
			}
			if r.Dx() >= minSide && r.Dy() >= minSide {
				out = append(out, r)
			}
		}
	}
	return out
}

// inkLevel is the share of the fill-to-text distance that makes ink.
const inkLevel = 0.3

// inkMask marks the pixels of box closer to the text colour than to the
// fill colour.
func inkMask(img *image.RGBA, box image.Rectangle, st style) ([]bool, image.Rectangle) {
	// A pixel is ink when it lies at least inkLevel of the way from the
	// fill colour to the text colour: downscaled strokes are blends, and a
	// midpoint cut would lose the thin ones.
	fr, fg, fb := float64(st.Fill.R), float64(st.Fill.G), float64(st.Fill.B)
	vr, vg, vb := float64(st.Text.R)-fr, float64(st.Text.G)-fg, float64(st.Text.B)-fb
	norm := vr*vr + vg*vg + vb*vb
	isInk := func(p []uint8) bool {
		t := ((float64(p[0])-fr)*vr + (float64(p[1])-fg)*vg + (float64(p[2])-fb)*vb) / norm
		return t >= inkLevel
	}
	w := box.Dx()
	mask := make([]bool, w*box.Dy())
	ink := image.Rectangle{}
	first := true
	for y := box.Min.Y; y < box.Max.Y; y++ {
		for x := box.Min.X; x < box.Max.X; x++ {
			o := img.PixOffset(x, y)
			p := img.Pix[o : o+3]
			if isInk(p) {
				mask[(y-box.Min.Y)*w+(x-box.Min.X)] = true
				pt := image.Rect(x, y, x+1, y+1)
				if first {
					ink, first = pt, false
				} else {
					ink = ink.Union(pt)
				}
			}
		}
	}
	return mask, ink
}

// glyphTemplate renders s at scale 1 with the simulator's font and
// returns its ink bitmap cropped to the ink bounding box.
func glyphTemplate(s string) ([]bool, int, int) {
	face := basicfont.Face7x13
	w, h := face.Advance*len(s), face.Ascent+face.Descent
	full := make([]bool, w*h)
	x := 0
	for _, r := range s {
		dr, mask, mp, _, ok := face.Glyph(fixed.P(0, face.Ascent), r)
		if ok {
			for gy := 0; gy < dr.Dy(); gy++ {
				for gx := 0; gx < dr.Dx(); gx++ {
					_, _, _, a := mask.At(mp.X+gx, mp.Y+gy).RGBA()
					px, py := x+dr.Min.X+gx, dr.Min.Y+gy
					if a >= 0x8000 && px >= 0 && px < w && py >= 0 && py < h {
						full[py*w+px] = true
					}
				}
			}
		}
		x += face.Advance
	}
	minX, minY, maxX, maxY := w, h, -1, -1
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			if full[y*w+x] {
				minX, minY = min(minX, x), min(minY, y)
				maxX, maxY = max(maxX, x), max(maxY, y)
			}
		}
	}
	if maxX < 0 {
		return nil, 0, 0
	}
	cw, ch := maxX-minX+1, maxY-minY+1
	out := make([]bool, cw*ch)
	for y := 0; y < ch; y++ {
		for x := 0; x < cw; x++ {
			out[y*cw+x] = full[(y+minY)*w+x+minX]
		}
	}
	return out, cw, ch
}

// matchScore compares the observed ink (mask over box, ink bbox) with the
// template of s stretched over the same bounding box (the glyph scale is
// whatever the screenshot was resized to, so no fixed scale is assumed):
// the score is the intersection over union of the two ink sets.
func matchScore(mask []bool, box, ink image.Rectangle, s string) float64 {
	tpl, tw, th := glyphTemplate(s)
	if tpl == nil || ink.Empty() {
		return 0
	}
	// The aspect ratio must be close: "1" and "10" differ here first.
	oa := float64(ink.Dx()) / float64(ink.Dy())
	ta := float64(tw) / float64(th)
	if math.Abs(math.Log(oa/ta)) > 0.35 {
		return 0
	}
	bw := box.Dx()
	inter, union := 0, 0
	for y := ink.Min.Y; y < ink.Max.Y; y++ {
		ty := (y - ink.Min.Y) * th / ink.Dy()
		for x := ink.Min.X; x < ink.Max.X; x++ {
			tx := (x - ink.Min.X) * tw / ink.Dx()
			a := mask[(y-box.Min.Y)*bw+(x-box.Min.X)]
			b := tpl[ty*tw+tx]
			if a && b {
				inter++
			}
			if a || b {
				union++
			}
		}
	}
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

// readLabel reads the label of a control box among candidates; it returns
// the best candidate and its score (0 when nothing matches).
func readLabel(img *image.RGBA, box image.Rectangle, kind string, candidates []string) (string, float64) {
	st := styles[kind]
	// Skip the border and the blurred edge.
	inner := box.Inset(max(3, min(box.Dx(), box.Dy())/20))
	if inner.Empty() {
		return "", 0
	}
	mask, ink := inkMask(img, inner, st)
	best, score, second := "", 0.0, 0.0
	for _, c := range candidates {
		s := matchScore(mask, inner, ink, c)
		switch {
		case s > score:
			best, score, second = c, s, score
		case s > second:
			second = s
		}
	}
	// A reading must stand out from the runner-up: a downscaled glyph
	// never matches its template perfectly, but it matches it clearly
	// better than any other string.
	if score < minScore || score-second < minMargin {
		return "", score
	}
	return best, score
}

// numberCandidates are the values a counter can show to the fake model.
func numberCandidates(n int) []string {
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, strconv.Itoa(i))
	}
	return out
}

// MinScore is the lowest ink overlap accepted, and MinMargin the lead a
// reading must have over the next candidate.
const (
	minScore  = 0.35
	minMargin = 0.02
)

// FindControls locates every control of a kind and reads its label among
// candidates.
func FindControls(img *image.RGBA, kind string, candidates []string) []control {
	st := styles[kind]
	minSide := max(8, img.Rect.Dx()/60)
	boxes := findBoxes(img, st.Fill, minSide)
	var out []control
	for i, b := range boxes {
		if enclosed(b, boxes, i) {
			// The fill inside a glyph's loop (the hole of an "O") is cut
			// off from its box by the ink: not a control.
			continue
		}
		c := control{Kind: kind, Box: b}
		if len(candidates) > 0 {
			c.Label, c.Score = readLabel(img, b, kind, candidates)
		}
		out = append(out, c)
	}
	return out
}

// enclosed reports whether b lies inside another of boxes.
func enclosed(b image.Rectangle, boxes []image.Rectangle, self int) bool {
	for j, o := range boxes {
		if j != self && b.In(o) && b != o {
			return true
		}
	}
	return false
}

// FindTarget returns the centroid of the calibration disc colour, or
// false when the image has none.
func FindTarget(img *image.RGBA, c color.RGBA) (float64, float64, bool) {
	var sx, sy, n float64
	for y := img.Rect.Min.Y; y < img.Rect.Max.Y; y++ {
		for x := img.Rect.Min.X; x < img.Rect.Max.X; x++ {
			o := img.PixOffset(x, y)
			if near(img.Pix[o:o+3], c, 60) {
				sx += float64(x)
				sy += float64(y)
				n++
			}
		}
	}
	if n == 0 {
		return 0, 0, false
	}
	return sx / n, sy / n, true
}

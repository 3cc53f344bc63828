package agentloop

import (
	"bytes"
	"image"
	"math"
)

// pixelDelta is the per-pixel change (largest channel difference over 255)
// above which a pixel counts as changed.
const pixelDelta = 0.08

// barCrop is the share of the height dropped at the top and the bottom
// before comparing frames: the status bar clock and the navigation bar
// change on their own and are not evidence of anything.
const barCrop = 0.04

// diffStats summarise the difference of two frames over a region.
type diffStats struct {
	// MeanDiff is the mean absolute channel difference in [0,1].
	MeanDiff float64 `json:"mean_diff"`
	// ChangedRatio is the share of pixels whose largest channel
	// difference exceeds PixelDelta.
	ChangedRatio float64 `json:"changed_ratio"`
	Changed      int     `json:"changed_pixels"`
	Pixels       int     `json:"pixels"`
}

// contentRect is the frame without the status and navigation bars.
func contentRect(w, h int) image.Rectangle {
	c := int(math.Round(float64(h) * barCrop))
	return image.Rect(0, c, w, h-c)
}

// compareRegion compares a and b (same size) over r. It reads the pixel
// buffers directly: this runs before every dispatch and after every
// action, on full-resolution frames.
func compareRegion(a, b *image.RGBA, r image.Rectangle) diffStats {
	r = r.Intersect(a.Rect).Intersect(b.Rect)
	if r.Empty() {
		return diffStats{}
	}
	const thr = 20 // PixelDelta*255 = 20.4: a channel step of 21 or more
	var sum uint64
	changed := 0
	w := r.Dx()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		ra := a.Pix[a.PixOffset(r.Min.X, y):][: w*4 : w*4]
		rb := b.Pix[b.PixOffset(r.Min.X, y):][: w*4 : w*4]
		// Most rows of two consecutive frames are identical; memcmp speed
		// skips them.
		if bytes.Equal(ra, rb) {
			continue
		}
		for i := 0; i < len(ra); i += 4 {
			d0 := absDiff(ra[i], rb[i])
			d1 := absDiff(ra[i+1], rb[i+1])
			d2 := absDiff(ra[i+2], rb[i+2])
			sum += uint64(d0 + d1 + d2)
			if d0 > thr || d1 > thr || d2 > thr {
				changed++
			}
		}
	}
	n := w * r.Dy()
	return diffStats{MeanDiff: float64(sum) / float64(n*3*255), ChangedRatio: float64(changed) / float64(n), Changed: changed, Pixels: n}
}

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

// compareContent compares two screens over their content region.
func compareContent(a, b *Screen) diffStats {
	return compareRegion(a.Image, b.Image, contentRect(a.Width(), a.Height()))
}

// meaningfulChange is the smallest change that counts as an observable
// effect: a handful of glyph pixels (a counter going from 0 to 1 changes a
// few hundred), never compression noise.
func meaningfulChange(d diffStats) bool {
	return d.Changed >= 24 || d.MeanDiff > 0.002
}

// targetRegion is the area around a device point that must be unchanged
// for an action planned on an older frame to still be valid: ±10 % of the
// width and ±5 % of the height.
func targetRegion(x, y, w, h int) image.Rectangle {
	dx, dy := int(math.Round(0.10*float64(w))), int(math.Round(0.05*float64(h)))
	return image.Rect(x-dx, y-dy, x+dx+1, y+dy+1).Intersect(image.Rect(0, 0, w, h))
}

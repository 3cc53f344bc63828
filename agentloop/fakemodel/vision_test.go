package fakemodel

import (
	"bytes"
	"image"
	"image/jpeg"
	"math"
	"strconv"
	"testing"

	xdraw "golang.org/x/image/draw"
)

func resize(img *image.RGBA, w, h int) *image.RGBA {
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	xdraw.ApproxBiLinear.Scale(dst, dst.Rect, img, img.Rect, xdraw.Src, nil)
	return dst
}

// TestReadCounterAtSeveralScales reads the counter value and the button
// labels from screens rendered like the simulator, at full size and after
// the resizes the runtime applies.
func TestReadCounterAtSeveralScales(t *testing.T) {
	t.Parallel()
	sizes := [][2]int{{1080, 2340}, {591, 1280}, {720, 1560}}
	for _, v := range []int{0, 1, 2, 3, 7, 10, 42} {
		full := CounterScreen(strconv.Itoa(v))
		for _, sz := range sizes {
			img := full
			if sz[0] != 1080 {
				img = resize(full, sz[0], sz[1])
			}
			texts := FindControls(img, "text", numberCandidates(100))
			if len(texts) != 1 || texts[0].Label != strconv.Itoa(v) {
				l, sc := readLabel(img, texts[0].Box, "text", numberCandidates(100))
				t.Errorf("value %d at %v: read %+v best %q %.2f", v, sz, texts, l, sc)
			}
			buttons := FindControls(img, "button", []string{"+1", "Reset"})
			got := map[string]bool{}
			for _, b := range buttons {
				got[b.Label] = true
			}
			if len(buttons) != 2 || !got["+1"] || !got["Reset"] {
				t.Errorf("value %d at %v: buttons %+v", v, sz, buttons)
			}
		}
	}
}

func TestFindTargetNoTarget(t *testing.T) {
	t.Parallel()
	if _, _, ok := FindTarget(CounterScreen("1"), styles["overlay"].Fill); ok {
		t.Fatal("found a target colour that is not on the screen")
	}
}

func jpegRoundTrip(t *testing.T, img *image.RGBA, quality int) *image.RGBA {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: quality}); err != nil {
		t.Fatal(err)
	}
	d, err := jpeg.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	out := image.NewRGBA(d.Bounds())
	xdraw.Draw(out, out.Rect, d, d.Bounds().Min, xdraw.Src)
	return out
}

// TestReadCounterFromJPEG: the runtime sends JPEG by default, whose
// ringing near edges and glyphs must neither split a control's box nor
// spoil its label, at the production size and at full size.
func TestReadCounterFromJPEG(t *testing.T) {
	t.Parallel()
	for _, q := range []int{85, 60} {
		for _, v := range []int{0, 3, 10} {
			full := CounterScreen(strconv.Itoa(v))
			for _, img := range []*image.RGBA{full, resize(full, 591, 1280)} {
				img = jpegRoundTrip(t, img, q)
				texts := FindControls(img, "text", numberCandidates(100))
				buttons := FindControls(img, "button", []string{"+1", "Reset"})
				got := map[string]bool{}
				for _, b := range buttons {
					got[b.Label] = true
				}
				if len(texts) != 1 || texts[0].Label != strconv.Itoa(v) || len(buttons) != 2 || !got["+1"] || !got["Reset"] {
					t.Errorf("q%d value %d at %v: texts %+v buttons %+v", q, v, img.Rect.Size(), texts, buttons)
				}
			}
		}
	}
	// A dialog over the counter, and the launcher's icon, in JPEG.
	c := &Canvas{Img: resize(CounterScreen("2"), 591, 1280)}
	c.Box("overlay", image.Rect(76, 330, 514, 766), "OK")
	dlg := FindControls(jpegRoundTrip(t, c.Img, 85), "overlay", []string{"OK", "Close", "Allow", "Cancel"})
	if len(dlg) != 1 || dlg[0].Label != "OK" {
		t.Errorf("dialog read as %+v", dlg)
	}
}

// TestFindTargetInJPEG: the calibration disc's centroid survives JPEG to
// well under the calibration bound.
func TestFindTargetInJPEG(t *testing.T) {
	t.Parallel()
	const w, h = 591, 1280
	img := NewCanvas(w, h, 0).Img
	cx, cy, r := 0.79*float64(w-1), 0.41*float64(h-1), 18.0
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			if math.Hypot(float64(x)-cx, float64(y)-cy) <= r {
				img.SetRGBA(x, y, targetColor)
			}
		}
	}
	x, y, ok := FindTarget(jpegRoundTrip(t, img, 85), targetColor)
	if !ok || math.Hypot(x-cx, y-cy) > 2 {
		t.Fatalf("disc at (%.1f,%.1f), found (%.1f,%.1f) %v", cx, cy, x, y, ok)
	}
}

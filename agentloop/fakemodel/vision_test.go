package fakemodel

import (
	"image"
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
				l, sc := ReadLabel(img, texts[0].Box, "text", numberCandidates(100))
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
	if _, _, ok := FindTarget(CounterScreen("1"), Styles["overlay"].Fill); ok {
		t.Fatal("found a target colour that is not on the screen")
	}
}

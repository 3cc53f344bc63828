package ui

import (
	"image"
	"testing"
)

func TestRect(t *testing.T) {
	t.Parallel()
	r := Rect{Left: 10, Top: 20, Right: 110, Bottom: 70}
	if r.String() != "[10,20][110,70]" || r.Width() != 100 || r.Height() != 50 || r.CenterX() != 60 || r.CenterY() != 45 {
		t.Errorf("%v: size %dx%d centre (%d,%d)", r, r.Width(), r.Height(), r.CenterX(), r.CenterY())
	}
	if !r.Contains(10, 20) || r.Contains(110, 20) {
		t.Error("Right and Bottom must be exclusive")
	}
	if got := r.Intersect(Rect{Left: 100, Top: 0, Right: 200, Bottom: 30}); got != (Rect{Left: 100, Top: 20, Right: 110, Bottom: 30}) {
		t.Errorf("Intersect = %v", got)
	}
	if got := r.Intersect(Rect{Left: 110, Top: 0, Right: 200, Bottom: 30}); !got.Empty() || got != (Rect{}) {
		t.Errorf("disjoint Intersect = %v", got)
	}
	if got := r.Offset(-10, 5); got != (Rect{Left: 0, Top: 25, Right: 100, Bottom: 75}) {
		t.Errorf("Offset = %v", got)
	}
	if got := r.Rectangle(); got != image.Rect(10, 20, 110, 70) {
		t.Errorf("Rectangle = %v", got)
	}
}

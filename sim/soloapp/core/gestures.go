package core

import "time"

// Scroll swipes inside r: SCROLL_TO_BOTTOM moves the content up (finger
// from bottom to top), and so on.
func (a *App) Scroll(r Rect, act string, percent int) error {
	cx, cy := r.Centre()
	dy := r.Height() * percent / 200
	dx := r.Width() * percent / 200
	d := 300 * time.Millisecond
	switch act {
	case "SCROLL_TO_BOTTOM":
		return a.Phone.Swipe(cx, cy+dy, cx, cy-dy, d)
	case "SCROLL_TO_TOP":
		return a.Phone.Swipe(cx, cy-dy, cx, cy+dy, d)
	case "SCROLL_TO_RIGHT":
		return a.Phone.Swipe(cx+dx, cy, cx-dx, cy, d)
	default: // SCROLL_TO_LEFT
		return a.Phone.Swipe(cx-dx, cy, cx+dx, cy, d)
	}
}

// rectValue is android.graphics.Rect as fastjson writes it.
func rectValue(r Rect) Obj {
	return NewObj("bottom", r.Bottom, "empty", r.javaEmpty(), "left", r.Left, "right", r.Right, "top", r.Top)
}

package ui

import (
	"fmt"
	"image"
)

// Rect is a screen rectangle in pixels, Android style: Right and Bottom are
// exclusive.
type Rect struct {
	Left, Top, Right, Bottom int
}

// Width is Right-Left (never negative).
func (r Rect) Width() int { return max(0, r.Right-r.Left) }

// Height is Bottom-Top (never negative).
func (r Rect) Height() int { return max(0, r.Bottom-r.Top) }

// Empty reports whether the rectangle has no area.
func (r Rect) Empty() bool { return r.Width() == 0 || r.Height() == 0 }

// Contains reports whether the point lies inside the rectangle.
func (r Rect) Contains(x, y int) bool {
	return x >= r.Left && x < r.Right && y >= r.Top && y < r.Bottom
}

// Intersect returns the overlap of r and o (an empty Rect when disjoint).
func (r Rect) Intersect(o Rect) Rect {
	out := Rect{max(r.Left, o.Left), max(r.Top, o.Top), min(r.Right, o.Right), min(r.Bottom, o.Bottom)}
	if out.Right <= out.Left || out.Bottom <= out.Top {
		return Rect{}
	}
	return out
}

// CenterX is the horizontal centre, as Android's Rect.centerX.
func (r Rect) CenterX() int { return (r.Left + r.Right) / 2 }

// CenterY is the vertical centre, as Android's Rect.centerY.
func (r Rect) CenterY() int { return (r.Top + r.Bottom) / 2 }

// String prints the Rect the way uiautomator and dumpsys do: [l,t][r,b].
func (r Rect) String() string {
	return fmt.Sprintf("[%d,%d][%d,%d]", r.Left, r.Top, r.Right, r.Bottom)
}

// Offset returns r moved by (dx, dy).
func (r Rect) Offset(dx, dy int) Rect {
	return Rect{r.Left + dx, r.Top + dy, r.Right + dx, r.Bottom + dy}
}

// Rectangle converts r for the image packages.
func (r Rect) Rectangle() image.Rectangle { return image.Rect(r.Left, r.Top, r.Right, r.Bottom) }

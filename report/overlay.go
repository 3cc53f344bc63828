package report

import (
	"math"

	"github.com/solopi-dev/solopi/canonjson"
)

// overlay is an action drawn over the screenshot it was planned on, in
// the screenshot's own pixels (the SVG's viewBox is the image size, so it
// scales with the image at any width).
type overlay struct {
	W, H   int
	Taps   []mark
	Arrow  *arrow
	Text   string // typed text, shown in a box
	Label  string // the action's name when it has no point (Back, Home, Wait)
	Stroke float64
	Font   float64
	// Box is where Text or Label is written: across the bottom for typed
	// text, across the top for a label.
	Box box
}

type box struct{ X, Y, W, H, TextX, TextY float64 }

type mark struct {
	X, Y, R float64
	// Ring is the outer ring of a double tap, Dot the centre of a long
	// press (0: not drawn).
	Ring, Dot float64
}

type arrow struct {
	X1, Y1, X2, Y2 float64
	// Head is the arrowhead polygon's points attribute.
	Head string
}

// actionOverlay draws an action from the trajectory's action event: the
// device coordinates of its mapped points (display pixels, the size of
// the screenshot), for a w×h screenshot.
func actionOverlay(name string, fields obj, text string, w, h int) *overlay {
	if w <= 0 || h <= 0 {
		return nil
	}
	short := float64(min(w, h))
	o := &overlay{W: w, H: h, Stroke: math.Max(2, short/110), Font: math.Max(12, short/22)}
	point := func(key string) ([2]float64, bool) {
		return pair(fields.Object(key)["device_coordinate"])
	}
	switch name {
	case "Tap", "Double Tap", "Long Press":
		p, ok := point("element")
		if !ok {
			return nil
		}
		m := mark{X: p[0], Y: p[1], R: short / 16}
		if name == "Double Tap" {
			m.Ring = m.R * 1.6
		}
		if name == "Long Press" {
			m.Dot = m.R * 0.4
		}
		o.Taps = []mark{m}
	case "Swipe":
		s, ok1 := point("start")
		e, ok2 := point("end")
		if !ok1 || !ok2 {
			return nil
		}
		o.Arrow = &arrow{X1: s[0], Y1: s[1], X2: e[0], Y2: e[1], Head: arrowHead(s, e, short/18)}
		o.Taps = []mark{{X: s[0], Y: s[1], R: short / 40}}
	case "Type":
		o.Text = clip(text, 60)
		o.Box = textBox(w, h, o.Font, float64(h)-o.Font*3)
	case "finish":
		return nil
	default:
		o.Label = name
		o.Box = textBox(w, h, o.Font, o.Font)
	}
	return o
}

func textBox(w, h int, font, y float64) box {
	return box{X: float64(w) * 0.05, Y: y, W: float64(w) * 0.9, H: font * 1.8, TextX: float64(w) * 0.08, TextY: y + font*1.25}
}

// arrowHead is a triangle at e pointing away from s.
func arrowHead(s, e [2]float64, size float64) string {
	dx, dy := e[0]-s[0], e[1]-s[1]
	l := math.Hypot(dx, dy)
	if l == 0 {
		return ""
	}
	ux, uy := dx/l, dy/l
	bx, by := e[0]-ux*size, e[1]-uy*size
	px, py := -uy*size/2, ux*size/2
	return formatNumber(e[0]) + "," + formatNumber(e[1]) + " " +
		formatNumber(bx+px) + "," + formatNumber(by+py) + " " +
		formatNumber(bx-px) + "," + formatNumber(by-py)
}

// pair reads a two-number array such as [x, y].
func pair(v any) ([2]float64, bool) {
	list, ok := v.([]any)
	if !ok || len(list) != 2 {
		return [2]float64{}, false
	}
	var out [2]float64
	for i, e := range list {
		if out[i], ok = canonjson.Number(e); !ok {
			return out, false
		}
	}
	return out, true
}

// Package coord is the coordinate contract between the planner's model and
// the device: the frozen coordinate space a model answers in, the geometry
// of one observation (the image the model was sent and the display the
// device acts on), the exact mapping of a model point to canonical,
// runtime 0..999 and device pixel coordinates, and the resize policy that
// turns a screenshot into the model's image. It is pure arithmetic,
// pinned by golden vectors.
package coord

import (
	"fmt"
	"math"
	"strconv"

	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/fault"
)

// Space is a model coordinate space.
type Space string

// Coordinate spaces. Auto is not a space: it asks for negotiation.
const (
	SpaceAuto     Space = "auto"
	SpaceRelative Space = "relative_0_999"
	SpaceImage    Space = "image_pixels"
	SpaceDisplay  Space = "display_pixels"
)

// ParseSpace validates a configured space.
func ParseSpace(s string) (Space, error) {
	switch Space(s) {
	case SpaceAuto, SpaceRelative, SpaceImage, SpaceDisplay:
		return Space(s), nil
	case "":
		return SpaceAuto, nil
	}
	return "", fmt.Errorf("unknown coordinate space %q (want auto, relative_0_999, image_pixels or display_pixels)", s)
}

// Frame is the geometry of one observation: the image the model was sent
// and the display the device acts on.
type Frame struct {
	ImageWidth    int `json:"image_width"`
	ImageHeight   int `json:"image_height"`
	DisplayWidth  int `json:"display_width"`
	DisplayHeight int `json:"display_height"`
}

// Valid reports whether every size is positive.
func (f Frame) Valid() bool {
	return f.ImageWidth > 0 && f.ImageHeight > 0 && f.DisplayWidth > 0 && f.DisplayHeight > 0
}

// Contract is a frozen coordinate space applied to one frame.
type Contract struct {
	Space Space `json:"space"`
	Frame Frame `json:"frame"`
}

// Bounds returns the inclusive maximum x and y a model point may have.
func (c Contract) Bounds() (xmax, ymax float64) {
	switch c.Space {
	case SpaceImage:
		return float64(c.Frame.ImageWidth - 1), float64(c.Frame.ImageHeight - 1)
	case SpaceDisplay:
		return float64(c.Frame.DisplayWidth - 1), float64(c.Frame.DisplayHeight - 1)
	}
	return 999, 999
}

// action.ParseOptions are the parser bounds of this contract.
func (c Contract) ParseOptions(task string) action.ParseOptions {
	x, y := c.Bounds()
	return action.ParseOptions{XMax: x, YMax: y, Task: task}
}

// ModelView is the coordinate_contract object shown to the model: only
// this space's geometry. Showing every geometry at once (display size,
// image size and "0..999") is what invited models to mix spaces, so the
// relative contract carries no pixel sizes at all.
func (c Contract) ModelView() map[string]any {
	xmax, ymax := c.Bounds()
	m := map[string]any{
		"space":   string(c.Space),
		"origin":  "top-left",
		"x_range": []int{0, int(xmax)},
		"y_range": []int{0, int(ymax)},
	}
	switch c.Space {
	case SpaceImage:
		m["image_width"], m["image_height"] = c.Frame.ImageWidth, c.Frame.ImageHeight
		m["instruction"] = fmt.Sprintf("Use integer pixel coordinates of the exact image attached to this turn: x from 0 (left) to %d (right), y from 0 (top) to %d (bottom).", int(xmax), int(ymax))
	case SpaceDisplay:
		m["display_width"], m["display_height"] = c.Frame.DisplayWidth, c.Frame.DisplayHeight
		m["instruction"] = fmt.Sprintf("Use integer device display pixels: x from 0 (left) to %d (right), y from 0 (top) to %d (bottom).", int(xmax), int(ymax))
	default:
		m["instruction"] = "Use normalized integer coordinates: [0,0] is the top-left corner and [999,999] the bottom-right corner of the screenshot, whatever its pixel size."
	}
	return m
}

// MappedPoint keeps every stage of one coordinate for the audit trail.
type MappedPoint struct {
	Model     [2]float64 `json:"model_coordinate"`
	Canonical [2]float64 `json:"canonical_coordinate"`
	// Runtime is the runtime's 0..999 action coordinate. It is carried
	// unrounded: rounding it to integers first would move image-pixel taps
	// by a pixel (the golden vector's y would become 1701).
	Runtime [2]float64 `json:"runtime_coordinate_0_999"`
	Device  [2]int     `json:"device_coordinate"`
}

// Error is a model point that cannot be mapped.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Map turns a model point into canonical [0,1], the runtime 0..999 space
// and device pixels. It rejects points outside the contract's bounds
// instead of clamping them.
//
// Rounding rule (chosen so that both golden vectors hold): with x_max the
// space's inclusive maximum (999, image_w-1 or display_w-1),
//
//	u = x / x_max                 canonical, exact
//	r = u * 999                   runtime 0..999, unrounded
//	device = floor(u*(W-1) + 1/2) round half up, W = display width
//
// evaluated as the exact fraction x*(W-1)/x_max when x is an integer (no
// float drift at .5 ties). For image 590×1280, display 1216×2640 and model
// [362,825]: image_pixels gives [747,1702] and relative_0_999 [440,2179].
// Dividing by 1000 (Open-AutoGLM) or by the size instead of size-1, or
// truncating, or rounding r to an integer before scaling, each break one of
// the two vectors.
func (c Contract) Map(p action.Point) (MappedPoint, error) {
	if !c.Frame.Valid() {
		return MappedPoint{}, &Error{Code: "invalid_frame", Message: "the observation frame has no size"}
	}
	xmax, ymax := c.Bounds()
	var mp MappedPoint
	mp.Model = [2]float64(p)
	dims := [2]int{c.Frame.DisplayWidth, c.Frame.DisplayHeight}
	lim := [2]float64{xmax, ymax}
	for i := 0; i < 2; i++ {
		v := p[i]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return MappedPoint{}, &Error{Code: fault.CodeNonFiniteCoordinate, Message: fmt.Sprintf("coordinate %d is not finite", i)}
		}
		if v < 0 || v > lim[i] {
			return MappedPoint{}, &Error{Code: fault.CodeCoordinateOutOfRange,
				Message: fmt.Sprintf("coordinate %d = %s is outside 0..%s of %s", i, fmtNum(v), fmtNum(lim[i]), c.Space)}
		}
		u := v / lim[i]
		mp.Canonical[i] = u
		mp.Runtime[i] = u * 999
		mp.Device[i] = scaleRound(v, lim[i], dims[i]-1)
		if mp.Device[i] < 0 || mp.Device[i] > dims[i]-1 {
			return MappedPoint{}, &Error{Code: fault.CodeCoordinateOutOfRange, Message: "the mapped point leaves the display"}
		}
	}
	return mp, nil
}

// scaleRound computes floor(v*span/vmax + 1/2) exactly for integral v and
// vmax, and in float64 otherwise.
func scaleRound(v, vmax float64, span int) int {
	if vmax <= 0 {
		return 0
	}
	if v == math.Trunc(v) && vmax == math.Trunc(vmax) && v < 1<<30 && vmax < 1<<30 {
		num := int64(v) * int64(span)
		den := int64(vmax)
		return int((2*num + den) / (2 * den))
	}
	return int(math.Floor(v*float64(span)/vmax + 0.5))
}

// ResizePolicy is how a screenshot becomes the model's image.
type ResizePolicy struct {
	// MaxLongSide bounds the longer side; 0 sends the screenshot as it is.
	MaxLongSide int `json:"max_long_side"`
}

// DefaultResizePolicy sends at most 1280 pixels on the long side (the
// size the coordinate-contract work was measured with).
func DefaultResizePolicy() ResizePolicy { return ResizePolicy{MaxLongSide: 1280} }

// String is the policy's cache-key form.
func (r ResizePolicy) String() string {
	if r.MaxLongSide <= 0 {
		return "original"
	}
	return fmt.Sprintf("long_side_%d", r.MaxLongSide)
}

// ImageSize is the model image size for a display: scaled so the long side
// is at most MaxLongSide, each side rounded half up (1216×2640 → 590×1280).
func (r ResizePolicy) ImageSize(w, h int) (int, int) {
	long := max(w, h)
	if r.MaxLongSide <= 0 || long <= r.MaxLongSide {
		return w, h
	}
	s := float64(r.MaxLongSide) / float64(long)
	iw := max(1, int(math.Floor(float64(w)*s+0.5)))
	ih := max(1, int(math.Floor(float64(h)*s+0.5)))
	return iw, ih
}

// fmtNum prints a coordinate as the model wrote it (no exponent, no
// trailing zeros).
func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

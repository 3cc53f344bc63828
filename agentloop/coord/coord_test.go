package coord

import (
	"errors"
	"math"
	"testing"

	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/fault"
)

var goldenFrame = Frame{ImageWidth: 590, ImageHeight: 1280, DisplayWidth: 1216, DisplayHeight: 2640}

// TestGoldenVectors: image 590×1280, display 1216×2640, raw [362,825].
func TestGoldenVectors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		space Space
		want  [2]int
	}{
		{SpaceImage, [2]int{747, 1702}},
		{SpaceRelative, [2]int{440, 2179}},
		{SpaceDisplay, [2]int{362, 825}},
	}
	for _, tt := range tests {
		mp, err := Contract{Space: tt.space, Frame: goldenFrame}.Map(action.Point{362, 825})
		if err != nil {
			t.Fatalf("%s: %v", tt.space, err)
		}
		if mp.Device != tt.want {
			t.Errorf("%s: device %v, want %v", tt.space, mp.Device, tt.want)
		}
		if mp.Model != [2]float64{362, 825} {
			t.Errorf("%s: model coordinate not kept: %v", tt.space, mp.Model)
		}
		for i := 0; i < 2; i++ {
			if math.Abs(mp.Runtime[i]-mp.Canonical[i]*999) > 1e-9 {
				t.Errorf("%s: runtime %v is not canonical×999 %v", tt.space, mp.Runtime, mp.Canonical)
			}
			// The handler path (runtime 0..999 → device) gives the same pixel.
			if got := runtimeToDevice(mp.Runtime[i], [2]int{1216, 2640}[i]); got != mp.Device[i] {
				t.Errorf("%s: RuntimeToDevice %d != %d", tt.space, got, mp.Device[i])
			}
		}
	}
}

// TestRoundingAlternativesBreakGolden documents why the rule is what it
// is: the common alternatives each break one golden vector.
func TestRoundingAlternativesBreakGolden(t *testing.T) {
	t.Parallel()
	// Rounding the runtime coordinate to an integer first moves the
	// image-pixel y to 1701.
	v := 825.0 / 1279
	r := math.Round(v * 999)
	if got := int(math.Floor(r/999*2639 + 0.5)); got == 1702 {
		t.Error("integer runtime rounding unexpectedly keeps 1702")
	}
	// Open-AutoGLM: x/1000*size truncated gives y 2178.
	if got := int(825.0 / 1000 * 2640); got == 2179 {
		t.Error("the ÷1000 rule unexpectedly gives 2179")
	}
	// Dividing by the size instead of size-1 gives x 441.
	if got := int(math.Floor(362.0/999*1216 + 0.5)); got == 440 {
		t.Error("the size (not size-1) rule unexpectedly gives 440")
	}
}

func TestMapRejectsOutOfBounds(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		space Space
		p     action.Point
	}{
		{SpaceRelative, action.Point{1000, 5}},
		{SpaceRelative, action.Point{5, -0.5}},
		{SpaceImage, action.Point{590, 10}},
		{SpaceImage, action.Point{10, 1280}},
		{SpaceDisplay, action.Point{1216, 10}},
		{SpaceRelative, action.Point{math.NaN(), 1}},
		{SpaceRelative, action.Point{math.Inf(1), 1}},
	} {
		if mp, err := (Contract{Space: tt.space, Frame: goldenFrame}).Map(tt.p); err == nil {
			t.Errorf("%s %v mapped to %v instead of being rejected", tt.space, tt.p, mp.Device)
		}
	}
	// The inclusive maxima map to the last pixel, never past it.
	for _, s := range []Space{SpaceRelative, SpaceImage, SpaceDisplay} {
		c := Contract{Space: s, Frame: goldenFrame}
		x, y := c.Bounds()
		mp, err := c.Map(action.Point{x, y})
		if err != nil || mp.Device != [2]int{1215, 2639} {
			t.Errorf("%s max: %v %v", s, mp.Device, err)
		}
		mp, err = c.Map(action.Point{0, 0})
		if err != nil || mp.Device != [2]int{0, 0} {
			t.Errorf("%s origin: %v %v", s, mp.Device, err)
		}
	}
}

func TestResizePolicy(t *testing.T) {
	t.Parallel()
	if w, h := DefaultResizePolicy().ImageSize(1216, 2640); w != 590 || h != 1280 {
		t.Errorf("1216×2640 → %d×%d, want 590×1280", w, h)
	}
	if w, h := DefaultResizePolicy().ImageSize(1080, 2340); w != 591 || h != 1280 {
		t.Errorf("1080×2340 → %d×%d", w, h)
	}
	if w, h := (ResizePolicy{}).ImageSize(1080, 2340); w != 1080 || h != 2340 {
		t.Errorf("original → %d×%d", w, h)
	}
}

// TestModelViewShowsOnlyItsGeometry: the relative contract carries no
// pixel sizes; pixel contracts carry only their own.
func TestModelViewShowsOnlyItsGeometry(t *testing.T) {
	t.Parallel()
	rel := Contract{Space: SpaceRelative, Frame: goldenFrame}.ModelView()
	for _, k := range []string{"image_width", "image_height", "display_width", "display_height"} {
		if _, ok := rel[k]; ok {
			t.Errorf("relative contract shows %s", k)
		}
	}
	img := Contract{Space: SpaceImage, Frame: goldenFrame}.ModelView()
	if img["image_width"] != 590 || img["display_width"] != nil {
		t.Errorf("image contract %v", img)
	}
	disp := Contract{Space: SpaceDisplay, Frame: goldenFrame}.ModelView()
	if disp["display_width"] != 1216 || disp["image_width"] != nil {
		t.Errorf("display contract %v", disp)
	}
}

func TestParseSpace(t *testing.T) {
	t.Parallel()
	for _, s := range spaces() {
		if _, err := ParseSpace(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	if _, err := ParseSpace("pixels"); err == nil {
		t.Error("accepted an unknown space")
	}
}

// TestParseBoundsFollowContract: pixel contracts accept their own range.
func TestParseBoundsFollowContract(t *testing.T) {
	t.Parallel()
	c := Contract{Space: SpaceImage, Frame: Frame{ImageWidth: 590, ImageHeight: 1280, DisplayWidth: 1216, DisplayHeight: 2640}}
	if _, err := action.Parse(`do(action="Tap", element=[589,1279])`, "", c.ParseOptions("")); err != nil {
		t.Fatal(err)
	}
	_, err := action.Parse(`do(action="Tap", element=[590,10])`, "", c.ParseOptions(""))
	var pe *action.ProtocolError
	if !errors.As(err, &pe) || pe.Code != fault.CodeCoordinateOutOfRange {
		t.Fatalf("x=590 on a 590-wide image: %v", err)
	}
}

package android

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/png"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/sim/android/ui"
	"github.com/solopi-dev/solopi/sim/screenstyle"
)

func decodePNG(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decode png: %v", err)
	}
	return img
}

func colorAt(img image.Image, x, y int) color.RGBA {
	r, g, b, a := img.At(x, y).RGBA()
	return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(a >> 8)}
}

func TestScreenshotDeterministic(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	launch(t, p, "com.example.counter")
	a, err := p.Screenshot()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := p.Screenshot()
	if !bytes.Equal(a, b) {
		t.Fatal("two screenshots of the same state differ")
	}
	// A second phone in the same state renders the same bytes (no cache,
	// no clock in the picture).
	q := newTestPhone(t)
	launch(t, q, "com.example.counter")
	c, _ := q.Screenshot()
	if !bytes.Equal(a, c) {
		t.Fatal("identical phones render different bytes")
	}
	img := decodePNG(t, a)
	if img.Bounds() != image.Rect(0, 0, 1080, 2340) {
		t.Fatalf("png size %v", img.Bounds())
	}
	tapNode(t, p, byID(t, p, "increment_button"))
	d, _ := p.Screenshot()
	if bytes.Equal(a, d) {
		t.Fatal("screenshot unchanged after the counter changed")
	}
	// Back to the first state: back to the first bytes.
	tapNode(t, p, byID(t, p, "reset_button"))
	e, _ := p.Screenshot()
	if !bytes.Equal(a, e) {
		t.Fatal("same UI state rendered differently after a round trip")
	}
	// The remembered encoding is the caller's copy: changing it changes no
	// later screenshot.
	e[len(e)/2] ^= 0xff
	tapNode(t, p, byID(t, p, "increment_button"))
	tapNode(t, p, byID(t, p, "reset_button"))
	if f, _ := p.Screenshot(); !bytes.Equal(a, f) {
		t.Fatal("a caller's change to a screenshot leaked into the next one")
	}
}

func TestScreenshotColoursAndText(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	launch(t, p, "com.example.login")
	img := decodePNG(t, must(p.Screenshot()))
	btn := byID(t, p, "sign_in_button").Bounds
	field := byID(t, p, "username").Bounds
	text := byID(t, p, "username_label").Bounds
	samples := map[string]color.RGBA{
		"button":    colorAt(img, btn.Left+10, btn.Top+10),
		"field":     colorAt(img, field.Left+10, field.Top+10),
		"text":      colorAt(img, text.Right-10, text.Top+5),
		"toolbar":   colorAt(img, 1070, 70),
		"statusbar": colorAt(img, 5, 5),
	}
	seen := map[color.RGBA]string{}
	for k, c := range samples {
		if other, dup := seen[c]; dup {
			t.Errorf("%s and %s share colour %v", k, other, c)
		}
		seen[c] = k
	}
	if samples["button"] != screenstyle.Kinds["button"].Fill || samples["statusbar"] != bgStatusBar {
		t.Errorf("colours = %v", samples)
	}
	// The label is drawn: the button's middle row contains text pixels.
	textPixels := 0
	for x := btn.Left; x < btn.Right; x++ {
		for y := btn.Top + 20; y < btn.Bottom-20; y++ {
			if colorAt(img, x, y) == screenstyle.Kinds["button"].Text {
				textPixels++
			}
		}
	}
	// "Sign in" = 7 glyphs at FontScale^2 pixels per font pixel.
	if textPixels < 7*ui.FontScale*ui.FontScale*10 {
		t.Errorf("only %d text pixels on the button", textPixels)
	}
	// Focus shows the keyboard in the picture.
	tapNode(t, p, byID(t, p, "username"))
	img = decodePNG(t, must(p.Screenshot()))
	if c := colorAt(img, 2, 2300); c != bgIME {
		t.Errorf("keyboard area colour %v", c)
	}
	if c := colorAt(img, field.Left+1, field.Top+1); c != ui.FocusColor {
		t.Errorf("focused field border %v", c)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func TestScreenshotFault(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	boom := errors.New("boom")
	p.SetScreenshotFault(boom, 5*time.Second)
	start := p.Clock().Now()
	if _, err := p.Screenshot(); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if p.Clock().Now().Sub(start) < 5*time.Second {
		t.Error("fault delay not applied")
	}
	p.SetScreenshotFault(nil, 0)
	if _, err := p.Screenshot(); err != nil {
		t.Fatal(err)
	}
}

func TestScreenshotSmallScreen(t *testing.T) {
	t.Parallel()
	p := New(Config{Width: 480, Height: 1040}, nil)
	img := decodePNG(t, must(p.Screenshot()))
	if img.Bounds().Dx() != 480 || img.Bounds().Dy() != 1040 {
		t.Fatalf("size %v", img.Bounds())
	}
}

package agentloop

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
)

// TestNewScreenSharesAnUnchangedCapture: a capture whose bytes were decoded
// a moment ago gives the same pixels and the same model image without a
// second decode or encode; different bytes give their own.
func TestNewScreenSharesAnUnchangedCapture(t *testing.T) {
	t.Parallel()
	capture := func(c color.RGBA) []byte {
		img := image.NewRGBA(image.Rect(0, 0, 1600, 900))
		for i := 0; i < len(img.Pix); i += 4 {
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	a, b := capture(color.RGBA{R: 200, A: 255}), capture(color.RGBA{G: 200, A: 255})
	pol, enc := coord.DefaultResizePolicy(), chat.DefaultImageEncoding()
	first, err := NewScreen(a, time.Unix(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	m1, err := first.ModelImage(pol, enc)
	if err != nil {
		t.Fatal(err)
	}
	again, err := NewScreen(bytes.Clone(a), time.Unix(2, 0))
	if err != nil {
		t.Fatal(err)
	}
	if again == first || again.Image != first.Image || !again.CapturedAt.Equal(time.Unix(2, 0)) || again.SHA256 != first.SHA256 {
		t.Fatalf("the same bytes: a new screen at its own time sharing the pixels, got %p/%p at %v", again.Image, first.Image, again.CapturedAt)
	}
	if m2, err := again.ModelImage(pol, enc); err != nil || m2 != m1 || m1.Width != 1280 {
		t.Fatalf("the same bytes' model image: %p vs %p (%v), width %d", m2, m1, err, m1.Width)
	}
	other, err := NewScreen(b, time.Unix(3, 0))
	if err != nil {
		t.Fatal(err)
	}
	m3, err := other.ModelImage(pol, enc)
	if err != nil {
		t.Fatal(err)
	}
	if other.Image == first.Image || other.SHA256 == first.SHA256 || bytes.Equal(m3.Data, m1.Data) {
		t.Fatal("different bytes share a decode")
	}
	if r, g, _, _ := other.Image.At(10, 10).RGBA(); r != 0 || g>>8 != 200 {
		t.Fatalf("the other capture's pixels: %d %d", r, g)
	}
}

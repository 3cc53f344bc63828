package mp4

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"testing"

	"github.com/solopi-dev/solopi/internal/mp4check"
)

func frame(t *testing.T, c color.Gray) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, 16, 8))
	for i := range img.Pix {
		img.Pix[i] = c.Y
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// The muxer's file is what a player reads: every frame decodes, and the
// track lasts the sum of the frames' durations.
func TestMJPEGIsPlayable(t *testing.T) {
	t.Parallel()
	b, err := MJPEG(16, 8, []Frame{{JPEG: frame(t, color.Gray{Y: 10}), DurationMs: 40}, {JPEG: frame(t, color.Gray{Y: 200}), DurationMs: 60}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := mp4check.Check(b)
	if err != nil {
		t.Fatal(err)
	}
	if info.Width != 16 || info.Height != 8 || info.Frames != 2 || info.Decoded != 2 || info.DurationMs != 100 || info.Codec != "mp4v" {
		t.Fatalf("%+v", info)
	}
}

func TestMJPEGNeedsAFrame(t *testing.T) {
	t.Parallel()
	if _, err := MJPEG(16, 8, nil); err == nil {
		t.Fatal("an MP4 without frames")
	}
}

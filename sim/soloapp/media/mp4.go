package media

// The MP4s of the simulated screen recorder: frames drawn here, written by
// the simulator's one MP4 writer (sim/android/mp4), and a box walker.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"

	"github.com/solopi-dev/solopi/sim/android/mp4"
)

// mp4Frames is how many frames a recording holds at most; each frame lasts
// as long as needed to cover the recording's duration.
const mp4MaxFrames = 8

// BuildMP4 returns an MP4 of w×h lasting durationMs, with frames that
// differ (a moving bar) so a visual difference analysis has something to
// find.
func BuildMP4(w, h int, durationMs int64) ([]byte, error) {
	if durationMs < 1 {
		durationMs = 1
	}
	n := int(min(int64(mp4MaxFrames), max(1, durationMs/500)))
	frames := make([]mp4.Frame, n)
	// Sample durations: equal slices, the last one takes the remainder.
	each := durationMs / int64(n)
	for i := range frames {
		f, err := jpegFrame(w, h, i, n)
		if err != nil {
			return nil, err
		}
		frames[i] = mp4.Frame{JPEG: f, DurationMs: uint32(each)}
	}
	frames[n-1].DurationMs = uint32(durationMs - each*int64(n-1))
	return mp4.MJPEG(w, h, frames)
}

func jpegFrame(w, h, i, n int) ([]byte, error) {
	// Very large recordings are encoded at a reduced JPEG size (decoders
	// scale to the track size) so the simulator never spends long here.
	for w*h > 1<<20 {
		w, h = w/2, h/2
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.RGBA{R: 30, G: 30, B: 40, A: 255}), image.Point{}, draw.Src)
	bar := w * i / max(1, n)
	draw.Draw(img, image.Rect(bar, 0, bar+max(1, w/max(1, n)), h),
		image.NewUniform(color.RGBA{R: 240, G: 200, B: 40, A: 255}), image.Point{}, draw.Src)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 50}); err != nil {
		return nil, fmt.Errorf("encode frame %d: %w", i, err)
	}
	return buf.Bytes(), nil
}

// Mp4Box is one parsed box (for validation and tests).
type Mp4Box struct {
	Type     string
	Size     int
	Children []Mp4Box
}

// ParseMP4 walks the box tree; containers listed here are descended into.
func ParseMP4(data []byte) ([]Mp4Box, bool) {
	containers := map[string]int{"moov": 0, "trak": 0, "mdia": 0, "minf": 0, "dinf": 0, "stbl": 0}
	var walk func(b []byte) ([]Mp4Box, bool)
	walk = func(b []byte) ([]Mp4Box, bool) {
		var out []Mp4Box
		for len(b) > 0 {
			if len(b) < 8 {
				return nil, false
			}
			size := int(binary.BigEndian.Uint32(b))
			if size < 8 || size > len(b) {
				return nil, false
			}
			bx := Mp4Box{Type: string(b[4:8]), Size: size}
			if _, c := containers[bx.Type]; c {
				kids, good := walk(b[8:size])
				if !good {
					return nil, false
				}
				bx.Children = kids
			}
			out = append(out, bx)
			b = b[size:]
		}
		return out, true
	}
	return walk(data)
}

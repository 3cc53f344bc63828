package agentloop

import (
	"context"
	"image"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/agentloop/fakemodel"
)

// BenchmarkStepOverhead measures the runtime's own cost per step with an
// instant in-memory model and a device whose frames are pre-encoded:
// planning request, parse, contract mapping, freshness re-observation and
// comparison, dispatch bookkeeping, post-action verification and events.
// The model's latency is excluded by construction.
func BenchmarkStepOverhead(b *testing.B) {
	// Reset taps the same place and never changes the screen, so every
	// step is a full tap cycle on identical frames.
	model := &scriptModel{plans: []string{`do(action="Tap", element=[296,515], reason="tap the left button")`}}
	dev := &counterDevice{}
	a, err := New(Config{Space: SpaceRelative, RepeatLimit: 1 << 30}, dev, model)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	task := Task{Goal: "benchmark", MaxSteps: 1 << 30, MaxDuration: time.Hour}
	if _, err := a.Step(ctx, task); err != nil { // warm-up: contract, caches
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		model.calls = model.calls[:0]
		sr, err := a.Step(ctx, task)
		if err != nil || sr.Terminal {
			b.Fatalf("%+v %v", sr, err)
		}
	}
}

// BenchmarkCompareFrames compares two 1080×2400 frames (content region,
// bars cropped), the pixel work done before and after every action.
func BenchmarkCompareFrames(b *testing.B) {
	render := func(v string) *Screen {
		c := fakemodel.NewCanvas(1080, 2400, 63)
		c.Box("text", image.Rect(340, 640, 740, 880), v)
		c.Box("button", image.Rect(560, 1120, 960, 1290), "+1")
		s, err := ScreenFromImage(c.Img, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	x, y := render("1"), render("2")
	b.SetBytes(int64(len(x.Image.Pix)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := CompareContent(x, y)
		if d.Changed == 0 {
			b.Fatal("no change found")
		}
	}
}

// BenchmarkCompareFramesAllRowsDiffer is the worst case: every row
// differs (a scrolled list), so no row can be skipped.
func BenchmarkCompareFramesAllRowsDiffer(b *testing.B) {
	x := image.NewRGBA(image.Rect(0, 0, 1080, 2400))
	y := image.NewRGBA(image.Rect(0, 0, 1080, 2400))
	for i := range x.Pix {
		x.Pix[i] = byte(i * 7)
		y.Pix[i] = byte(i*7 + 40)
	}
	sx, sy := &Screen{Image: x}, &Screen{Image: y}
	b.SetBytes(int64(len(x.Pix)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if d := CompareContent(sx, sy); d.Changed == 0 {
			b.Fatal("no change found")
		}
	}
}

package android

import (
	"context"
	"io"
	"testing"
)

// BenchmarkScreenshot renders and encodes a fresh frame each iteration (the
// counter changes, so the cache never hits).
func BenchmarkScreenshot(b *testing.B) {
	p := newTestPhone(b)
	launch(b, p, "com.example.counter")
	inc := byID(b, p, "increment_button")
	for b.Loop() {
		_ = p.Tap(inc.Bounds.CenterX(), inc.Bounds.CenterY())
		if _, err := p.Screenshot(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScreenshotSeenScreen is a screenshot of a screen the phone
// showed before, after a state change (a suite's counter at 0 before every
// shard): the encoding is remembered by the pixels.
func BenchmarkScreenshotSeenScreen(b *testing.B) {
	p := newTestPhone(b)
	launch(b, p, "com.example.counter")
	inc, reset := byID(b, p, "increment_button"), byID(b, p, "reset_button")
	for i := 0; b.Loop(); i++ {
		btn := inc
		if i%2 == 1 {
			btn = reset
		}
		_ = p.Tap(btn.Bounds.CenterX(), btn.Bounds.CenterY())
		if _, err := p.Screenshot(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWindows(b *testing.B) {
	p := newTestPhone(b)
	launch(b, p, "com.example.list")
	for b.Loop() {
		_ = p.Windows()
	}
}

func BenchmarkRunShell(b *testing.B) {
	p := newTestPhone(b)
	for b.Loop() {
		p.RunShell(context.Background(), "dumpsys window | grep mCurrentFocus", nil, io.Discard, io.Discard)
	}
}

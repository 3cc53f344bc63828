package android

import (
	"bytes"
	"context"
	"testing"
	"time"
)

func TestStalledCommandWaitsForReleaseOrItsCaller(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	if err := p.StallCommand("screencap", 0); err != nil {
		t.Fatal(err)
	}
	run := func(ctx context.Context, cmd string) (chan int, *syncBuffer) {
		var out syncBuffer
		done := make(chan int, 1)
		go func() { done <- p.RunShell(ctx, cmd, nil, &out, &out) }()
		return done, &out
	}
	// The caller giving up ends the wait: 130, nothing written.
	ctx, cancel := context.WithCancel(context.Background())
	done, out := run(ctx, "screencap -p")
	// Other commands are not held.
	if r := sh(t, p, "echo free"); r.rc != 0 || r.out != "free\n" {
		t.Fatalf("echo while screencap is stalled: %+v", r)
	}
	cancel()
	if rc := <-done; rc != 130 || out.String() != "" {
		t.Fatalf("cancelled stalled screencap: rc %d, %d bytes", rc, len(out.String()))
	}
	// Release lets the waiting run through, and later runs go at once.
	done, out = run(context.Background(), "screencap -p")
	p.ReleaseCommand("screencap")
	if rc := <-done; rc != 0 || !bytes.HasPrefix([]byte(out.String()), []byte("\x89PNG")) {
		t.Fatalf("released screencap: rc %d", rc)
	}
	if r := sh(t, p, "screencap -p"); r.rc != 0 {
		t.Fatalf("screencap after release: %+v", r)
	}
}

func TestStalledCommandWithADelay(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	p.Log('I', "Tag", "a line")
	if err := p.StallCommand("logcat", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	start := p.clk.Now()
	r := sh(t, p, "logcat -d")
	if r.rc != 0 || !bytes.Contains([]byte(r.out), []byte("a line")) {
		t.Fatalf("delayed logcat: %+v", r)
	}
	if waited := p.clk.Now().Sub(start); waited < 30*time.Second {
		t.Errorf("logcat started after %v of device time, want 30s", waited)
	}
	// A new stall replaces the old one; releasing ends it.
	if err := p.StallCommand("logcat", time.Hour); err != nil {
		t.Fatal(err)
	}
	p.ReleaseCommand("logcat")
	start = p.clk.Now()
	if r := sh(t, p, "logcat -d"); r.rc != 0 || p.clk.Now().Sub(start) >= time.Hour {
		t.Fatalf("released logcat: %+v", r)
	}
	if p.StallCommand("no-such-tool", 0) == nil || p.StallCommand("logcat", -time.Second) == nil {
		t.Error("bad stalls accepted")
	}
}

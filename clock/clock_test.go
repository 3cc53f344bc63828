package clock

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestFakeSleepWakesOnAdvance(t *testing.T) {
	t.Parallel()
	f := NewFake(time.Unix(1000, 0))
	ctx := context.Background()
	done := make(chan error, 1)
	go func() { done <- f.Sleep(ctx, 3*time.Second) }()
	if err := f.WaitForSleepers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	f.Advance(2 * time.Second)
	select {
	case <-done:
		t.Fatal("woke before its time")
	default:
	}
	f.Advance(time.Second)
	if err := <-done; err != nil {
		t.Fatalf("sleep: %v", err)
	}
	if got := f.Now(); !got.Equal(time.Unix(1003, 0)) {
		t.Fatalf("now %v", got)
	}
}

func TestFakeSleepEndsWithContext(t *testing.T) {
	t.Parallel()
	f := NewFake(time.Unix(0, 0))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Sleep(ctx, time.Hour) }()
	if err := f.WaitForSleepers(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	if err := f.WaitForSleepers(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled sleeper is still counted: %v", err)
	}
}

func TestSystemSleepZeroAndCancelled(t *testing.T) {
	t.Parallel()
	if err := System.Sleep(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := System.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	if Or(nil) != System {
		t.Fatal("Or(nil) is not the system clock")
	}
}

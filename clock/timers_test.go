package clock

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestAfterFunc(t *testing.T) {
	t.Parallel()
	f := NewFake(time.Unix(0, 0))
	ctx := context.Background()
	ran := make(chan struct{})
	AfterFunc(f, time.Second, func() { close(ran) })
	if err := f.WaitForSleepers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	f.Advance(time.Second)
	<-ran

	stop := AfterFunc(f, time.Second, func() { t.Error("a stopped AfterFunc ran") })
	if err := f.WaitForSleepers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if !stop() {
		t.Fatal("stop before the time reports false")
	}
	if stop() {
		t.Fatal("a second stop reports true")
	}
	f.Advance(time.Hour)
}

func TestWithTimeout(t *testing.T) {
	t.Parallel()
	f := NewFake(time.Unix(0, 0))
	cause := errors.New("budget over")
	ctx, cancel := WithTimeout(context.Background(), f, time.Minute, cause)
	defer cancel()
	if err := f.WaitForSleepers(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	f.Advance(time.Minute)
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), cause) {
		t.Fatalf("cause %v", context.Cause(ctx))
	}
	ctx, cancel = WithTimeout(context.Background(), f, time.Minute, cause)
	cancel()
	if !errors.Is(context.Cause(ctx), context.Canceled) {
		t.Fatalf("cancelled early: cause %v", context.Cause(ctx))
	}
}

func TestScaled(t *testing.T) {
	t.Parallel()
	c := NewScaled(1000)
	if got := c.Real(5 * time.Second); got != 5*time.Millisecond {
		t.Fatalf("Real(5 s) at 1000x = %v", got)
	}
	if NewScaled(0).Real(time.Second) != time.Second || c.Real(-time.Second) != 0 {
		t.Fatal("scale <= 0 means 1; negative durations take no time")
	}
	before := c.Now()
	if err := c.Sleep(context.Background(), 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if d := c.Now().Sub(before); d < 2*time.Second {
		t.Fatalf("slept 2 s of device time but the clock moved %v", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep on a cancelled context: %v", err)
	}
}

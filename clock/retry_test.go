package clock

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestBackoffPause(t *testing.T) {
	t.Parallel()
	b := Backoff{Base: 500 * time.Millisecond, Max: 8 * time.Second}
	for n, want := range map[int]time.Duration{0: 0, 1: 500 * time.Millisecond, 2: time.Second, 3: 2 * time.Second, 5: 8 * time.Second, 60: 8 * time.Second} {
		if got := b.Pause(n); got != want {
			t.Errorf("Pause(%d) = %v, want %v", n, got, want)
		}
	}
	if got := (Backoff{}).Pause(3); got != 0 {
		t.Errorf("the zero Backoff waits %v", got)
	}
	j := Backoff{Base: time.Second, Max: time.Second, Jitter: 0.5}
	for range 200 {
		if got := j.Pause(4); got < 500*time.Millisecond || got > time.Second {
			t.Fatalf("jittered pause %v outside [0.5 s, 1 s]", got)
		}
	}
}

var errTransient = errors.New("transient")

// runDo runs r.Do and counts the calls of op.
func runDo(ctx context.Context, r Retry, op func(n int) error) (int, error) {
	calls := 0
	err := r.Do(ctx, func(context.Context) error { calls++; return op(calls) })
	return calls, err
}

func TestRetryDo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// No backoff: these cases are about counting, the pauses are below.
	r := Retry{Attempts: 3, Clock: NewFake(time.Unix(0, 0))}

	calls, err := runDo(ctx, r, func(n int) error {
		if n < 3 {
			return errTransient
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("success on the last attempt: err %v after %d calls", err, calls)
	}
	calls, err = runDo(ctx, r, func(int) error { return errTransient })
	if !errors.Is(err, errTransient) || calls != 3 {
		t.Fatalf("attempts spent: err %v after %d calls", err, calls)
	}
	permanent := errors.New("permanent")
	r.Retryable = func(err error) bool { return errors.Is(err, errTransient) }
	calls, err = runDo(ctx, r, func(int) error { return permanent })
	if !errors.Is(err, permanent) || calls != 1 {
		t.Fatalf("a permanent failure was retried: err %v after %d calls", err, calls)
	}
	if calls, err = runDo(ctx, Retry{}, func(int) error { return errTransient }); calls != 1 || err == nil {
		t.Fatalf("the zero Retry runs once: %d calls, %v", calls, err)
	}
}

func TestRetryPausesOnItsClock(t *testing.T) {
	t.Parallel()
	f := NewFake(time.Unix(0, 0))
	r := Retry{Attempts: 3, Backoff: Backoff{Base: time.Second, Max: time.Minute}, Clock: f}
	ctx := context.Background()
	calls := make(chan int, 3)
	done := make(chan error, 1)
	n := 0
	go func() { done <- r.Do(ctx, func(context.Context) error { n++; calls <- n; return errTransient }) }()
	<-calls
	if err := f.WaitForSleepers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	f.Advance(999 * time.Millisecond)
	select {
	case <-calls:
		t.Fatal("retried before the first pause (1 s) was over")
	default:
	}
	f.Advance(time.Millisecond)
	<-calls
	if err := f.WaitForSleepers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	f.Advance(2 * time.Second) // the second pause doubles
	<-calls
	if err := <-done; !errors.Is(err, errTransient) {
		t.Fatalf("want the last failure, got %v", err)
	}
}

func TestRetryEndsWithContext(t *testing.T) {
	t.Parallel()
	f := NewFake(time.Unix(0, 0))
	r := Retry{Attempts: 5, Backoff: Backoff{Base: time.Hour}, Clock: f}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Do(ctx, func(context.Context) error { return errTransient }) }()
	if err := f.WaitForSleepers(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("a pause cut by the context returns its error, got %v", err)
	}
}

func TestRetryWaitHint(t *testing.T) {
	t.Parallel()
	f := NewFake(time.Unix(0, 0))
	r := Retry{Backoff: Backoff{Base: time.Second}, Clock: f}
	ctx := context.Background()
	done := make(chan error, 1)
	go func() { done <- r.Wait(ctx, 1, 30*time.Second) }()
	if err := f.WaitForSleepers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	f.Advance(29 * time.Second)
	select {
	case <-done:
		t.Fatal("the server's Retry-After was cut short")
	default:
	}
	f.Advance(time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

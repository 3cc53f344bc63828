package device

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
)

// pollOnFakeClock runs PollUntil in a goroutine on a fake clock and
// returns the fake times at which check ran, stepping the clock one pause
// at a time (no sleeping: the test waits for the poll loop to sleep).
func pollOnFakeClock(t *testing.T, ctx context.Context, o PollOptions, doneAt int) ([]time.Duration, error) {
	t.Helper()
	start := time.Unix(1_700_000_000, 0)
	clk := clock.NewFake(start)
	o.Clock = clk
	var at []time.Duration
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		err = PollUntil(ctx, o, func(context.Context) (bool, error) {
			at = append(at, clk.Now().Sub(start))
			return len(at) == doneAt, nil
		})
	}()
	for {
		// Wait until the loop sleeps or returns, then step the clock.
		wctx, cancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-done:
				cancel()
			case <-wctx.Done():
			}
		}()
		werr := clk.WaitForSleepers(wctx, 1)
		cancel()
		if werr != nil {
			<-done
			return at, err
		}
		clk.Advance(time.Millisecond)
	}
}

// The one poll loop: checks at once, then after pauses doubling from
// Initial up to Interval, on the injected clock.
func TestPollUntilPausesDoubleUpToInterval(t *testing.T) {
	t.Parallel()
	at, err := pollOnFakeClock(t, context.Background(), PollOptions{Timeout: time.Minute, Interval: 100 * time.Millisecond}, 6)
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{0, 25, 75, 175, 275, 375}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if !slices.Equal(at, want) {
		t.Fatalf("checks at %v, want %v", at, want)
	}
}

// Initial equal to Interval polls at a fixed interval; the budget ends
// the loop with ErrPollTimeout after a last check at the deadline.
func TestPollUntilFixedIntervalAndBudget(t *testing.T) {
	t.Parallel()
	at, err := pollOnFakeClock(t, context.Background(), PollOptions{Timeout: 120 * time.Millisecond, Interval: 50 * time.Millisecond, Initial: 50 * time.Millisecond}, -1)
	if !errors.Is(err, ErrPollTimeout) {
		t.Fatalf("err %v", err)
	}
	want := []time.Duration{0, 50 * time.Millisecond, 100 * time.Millisecond, 120 * time.Millisecond}
	if !slices.Equal(at, want) {
		t.Fatalf("checks at %v, want %v", at, want)
	}
}

// A cancelled context ends the wait with the interrupt error.
func TestPollUntilInterrupted(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	clk := clock.NewFake(time.Unix(0, 0))
	errc := make(chan error, 1)
	go func() {
		errc <- PollUntil(ctx, PollOptions{Timeout: time.Hour, Clock: clk}, func(context.Context) (bool, error) { return false, nil })
	}()
	if err := clk.WaitForSleepers(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-errc; !fault.IsInterrupt(err) {
		t.Fatalf("err %v", err)
	}
}

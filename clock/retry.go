package clock

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is a retry schedule: the pause before retry n (n >= 1) is
// Base·2^(n-1), at most Max, shortened by a random part of at most Jitter
// (0..1) of itself so that clients failing together do not retry together.
// The zero Backoff retries at once.
type Backoff struct {
	Base, Max time.Duration
	Jitter    float64
}

// Pause is the wait before retry n.
func (b Backoff) Pause(n int) time.Duration {
	if b.Base <= 0 || n < 1 {
		return 0
	}
	d := b.Base
	for i := 1; i < n && (b.Max <= 0 || d < b.Max); i++ {
		d *= 2
	}
	if b.Max > 0 && d > b.Max {
		d = b.Max
	}
	if j := min(max(b.Jitter, 0), 1); j > 0 {
		d -= time.Duration(rand.Float64() * j * float64(d))
	}
	return d
}

// Retry is the host's one retry policy: at most Attempts runs of an
// operation, the pauses of Backoff taken on Clock, each failure classified
// by Retryable, the whole bounded by the caller's context.
type Retry struct {
	// Attempts is the number of runs in all (values < 1 mean 1).
	Attempts int
	Backoff  Backoff
	// Clock takes the pauses (nil: the real clock).
	Clock Clock
	// Retryable reports whether a failure is worth another run (nil: every
	// failure is).
	Retryable func(error) bool
}

// Do runs op until it succeeds, fails in a way Retryable refuses, the
// attempts are spent or ctx ends. It returns op's last error, or ctx's
// error when ctx ended during a pause.
func (r Retry) Do(ctx context.Context, op func(ctx context.Context) error) error {
	for n := 1; ; n++ {
		err := op(ctx)
		if err == nil || n >= r.Attempts || ctx.Err() != nil || r.Retryable != nil && !r.Retryable(err) {
			return err
		}
		if werr := r.Wait(ctx, n, 0); werr != nil {
			return werr
		}
	}
}

// Wait takes the pause before retry n on r's clock; a positive hint (a
// server's Retry-After) replaces the schedule's pause. It returns ctx's
// error when ctx ends first.
func (r Retry) Wait(ctx context.Context, n int, hint time.Duration) error {
	d := r.Backoff.Pause(n)
	if hint > 0 {
		d = hint
	}
	if d <= 0 {
		return ctx.Err()
	}
	return Or(r.Clock).Sleep(ctx, d)
}

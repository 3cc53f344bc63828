package clock

import (
	"context"
	"sync/atomic"
	"time"
)

// AfterFunc runs f in its own goroutine once d has passed on c. stop
// prevents the call if it has not started and reports whether it did.
func AfterFunc(c Clock, d time.Duration, f func()) (stop func() bool) {
	ctx, cancel := context.WithCancel(context.Background())
	const pending, fired, stopped = 0, 1, 2
	var state atomic.Int32
	go func() {
		defer cancel()
		if c.Sleep(ctx, d) == nil && state.CompareAndSwap(pending, fired) {
			f()
		}
	}()
	return func() bool {
		ok := state.CompareAndSwap(pending, stopped)
		cancel()
		return ok
	}
}

// WithTimeout is context.WithTimeoutCause on c: the context ends with cause
// once d of c's time has passed (a deadline that a Fake or Scaled clock
// moves, which a context deadline on the wall clock would not).
func WithTimeout(parent context.Context, c Clock, d time.Duration, cause error) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	go func() {
		if c.Sleep(ctx, d) == nil {
			cancel(cause)
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}

// Package clock provides the simulator's notion of time. A scaled clock runs
// simulated time faster than real time, so that the device's real timing rules
// (settle 3 s, root readiness 5 s, watchdogs) keep their behaviour in tests
// while taking a fraction of the wall time.
package clock

import (
	"context"

	"time"
)

// Clock is the time source of a simulated device. Every duration passed to it
// is simulated time; Scale says how many simulated seconds pass per real second.
type Clock interface {
	Now() time.Time
	// Sleep waits for d of simulated time or until ctx is done.
	Sleep(ctx context.Context, d time.Duration) error
	// After delivers the simulated time once d of simulated time has passed.
	After(d time.Duration) <-chan time.Time
	// AfterFunc runs f in its own goroutine after d of simulated time.
	AfterFunc(d time.Duration, f func()) Timer
	// Real converts a simulated duration into the real duration it takes.
	Real(d time.Duration) time.Duration
	Scale() float64
}

// Timer can stop a pending AfterFunc.
type Timer interface {
	Stop() bool
}

// Scaled is a Clock whose simulated time advances scale times faster than
// real time, starting from the real time at construction.
type Scaled struct {
	scale     float64
	realStart time.Time
	simStart  time.Time
}

// NewScaled returns a clock running at scale (values <= 0 mean 1).
func NewScaled(scale float64) *Scaled {
	if scale <= 0 {
		scale = 1
	}
	now := time.Now()
	return &Scaled{scale: scale, realStart: now, simStart: now}
}

// Scale reports the speed-up factor.
func (c *Scaled) Scale() float64 { return c.scale }

// Now returns the current simulated time.
func (c *Scaled) Now() time.Time {
	elapsed := time.Since(c.realStart)
	return c.simStart.Add(time.Duration(float64(elapsed) * c.scale))
}

// Real converts a simulated duration to real time, never below zero.
func (c *Scaled) Real(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(float64(d) / c.scale)
}

// Sleep blocks for d of simulated time or until ctx ends.
func (c *Scaled) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(c.Real(d))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// After delivers the simulated time after d of simulated time.
func (c *Scaled) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	time.AfterFunc(c.Real(d), func() { ch <- c.Now() })
	return ch
}

// AfterFunc runs f after d of simulated time.
func (c *Scaled) AfterFunc(d time.Duration, f func()) Timer {
	return time.AfterFunc(c.Real(d), f)
}

package clock

import (
	"context"
	"time"
)

// Scaled is the simulator's device time: a clock that runs scale times
// faster than the real one, so that a device's timing rules (settle 3 s,
// root readiness 5 s, watchdogs) keep their behaviour in tests while taking
// a fraction of the wall time. Every duration passed to it is device time.
type Scaled struct {
	scale     float64
	realStart time.Time
}

// NewScaled returns a clock running at scale (values <= 0 mean 1), starting
// at the real time.
func NewScaled(scale float64) *Scaled {
	if scale <= 0 {
		scale = 1
	}
	return &Scaled{scale: scale, realStart: System.Now()}
}

// Now is the device time.
func (c *Scaled) Now() time.Time {
	elapsed := System.Now().Sub(c.realStart)
	return c.realStart.Add(time.Duration(float64(elapsed) * c.scale))
}

// Real converts a device duration to the real duration it takes, never
// below zero.
func (c *Scaled) Real(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(float64(d) / c.scale)
}

// Sleep waits d of device time or until ctx is done.
func (c *Scaled) Sleep(ctx context.Context, d time.Duration) error {
	return System.Sleep(ctx, c.Real(d))
}

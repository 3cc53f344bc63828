// Package clock is the one source of time of the host and the simulator.
// Every wait, deadline, timestamp and retry goes through a Clock: System in
// production, Fake in tests that must not sleep, Scaled for the simulator's
// device time. Retry is the one retry policy on it. The package imports
// nothing of the module, so the simulator may share it.
package clock

import (
	"context"
	"sync"
	"time"
)

// Clock tells the time and waits.
type Clock interface {
	Now() time.Time
	// Sleep waits for d or until ctx is done; it returns ctx.Err() in the
	// second case. A d <= 0 returns at once (ctx.Err() if ctx is done).
	Sleep(ctx context.Context, d time.Duration) error
}

// System is the real clock.
var System Clock = system{}

type system struct{}

func (system) Now() time.Time { return time.Now() }

func (system) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Or returns c, or System when c is nil (the zero value of an options
// struct means the real clock).
func Or(c Clock) Clock {
	if c == nil {
		return System
	}
	return c
}

// Deadline is Now()+d on c.
func Deadline(c Clock, d time.Duration) time.Time { return c.Now().Add(d) }

// Fake is a manual clock for tests: time moves only when Advance is called,
// and Sleep returns once the fake time has reached its wake-up time.
// WaitForSleepers lets a test synchronise with the code under test instead
// of sleeping.
type Fake struct {
	mu       sync.Mutex
	now      time.Time
	sleepers []*sleeper
	changed  chan struct{} // closed and replaced whenever sleepers change
}

type sleeper struct {
	until time.Time
	done  chan struct{}
}

// NewFake returns a fake clock set to start.
func NewFake(start time.Time) *Fake {
	return &Fake{now: start, changed: make(chan struct{})}
}

// Now is the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Sleep blocks until Advance has moved the fake time by d, or ctx is done.
func (f *Fake) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	f.mu.Lock()
	s := &sleeper{until: f.now.Add(d), done: make(chan struct{})}
	f.sleepers = append(f.sleepers, s)
	f.notifyLocked()
	f.mu.Unlock()
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		f.mu.Lock()
		f.removeLocked(s)
		f.mu.Unlock()
		return ctx.Err()
	}
}

// Advance moves the fake time forward by d and wakes every sleeper whose
// wake-up time has come.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	kept := f.sleepers[:0]
	for _, s := range f.sleepers {
		if !s.until.After(f.now) {
			close(s.done)
			continue
		}
		kept = append(kept, s)
	}
	f.sleepers = kept
	f.notifyLocked()
}

// WaitForSleepers blocks until at least n goroutines sleep on the clock, or
// ctx is done.
func (f *Fake) WaitForSleepers(ctx context.Context, n int) error {
	for {
		f.mu.Lock()
		count, changed := len(f.sleepers), f.changed
		f.mu.Unlock()
		if count >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (f *Fake) removeLocked(s *sleeper) {
	for i, x := range f.sleepers {
		if x == s {
			f.sleepers = append(f.sleepers[:i], f.sleepers[i+1:]...)
			break
		}
	}
	f.notifyLocked()
}

func (f *Fake) notifyLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

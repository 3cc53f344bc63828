package suite

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
)

// errNoneFree is a round of the wait in which every phone was still busy.
var errNoneFree = errors.New("every phone of the suite is busy")

// errSomeBusy is a round of the batch wait in which a phone was still busy.
var errSomeBusy = errors.New("a phone of the suite is still busy")

// batchGrace is how long a suite that waited, and got a phone, keeps
// trying for the others: a suite lets its phones go one after another, so
// the rest of its batch follows within moments.
const batchGrace = time.Second

// lockPhones takes the phones' locks without waiting; a busy phone is
// left out (its device_busy error in errs) while others are free. Only
// when every phone is busy does the suite wait, up to DeviceWait, for the
// first to be released, then takes whichever are free (and, for a
// moment, those released with it: awaitBatch). A suite never waits while
// holding a phone, so two suites asking for the same phones share them
// out instead of waiting for each other.
func (r *runner) lockPhones(ctx context.Context, phones []*phone) []error {
	errs := make([]error, len(phones))
	try := func() bool {
		got := false
		for i, p := range phones {
			if p.lock != nil {
				got = true
				continue
			}
			l, err := r.o.Locker.Acquire(ctx, p.serial, 0)
			errs[i] = err
			if err == nil {
				p.lock, got = l, true
			}
		}
		return got
	}
	if try() || r.o.DeviceWait <= 0 {
		return errs
	}
	clk := clock.Or(r.o.Locker.Clock)
	wctx, stop := clock.WithTimeout(ctx, clk, r.o.DeviceWait, errNoneFree)
	defer stop()
	err := clock.Retry{Attempts: math.MaxInt, Clock: clk, Backoff: clock.Backoff{Base: 50 * time.Millisecond, Max: 500 * time.Millisecond, Jitter: 0.3},
		Retryable: func(err error) bool { return errors.Is(err, errNoneFree) }}.Do(wctx, func(context.Context) error {
		if try() {
			return nil
		}
		return errNoneFree
	})
	if err == nil {
		r.awaitBatch(ctx, clk, phones, try)
	}
	if err != nil && ctx.Err() != nil {
		for i := range errs {
			errs[i] = fault.Wrap(fault.Interrupted, fault.CodeInterrupted, "interrupted while waiting for the phones", ctx.Err())
		}
	}
	return errs
}

// awaitBatch takes, after the wait ended with some phone free, the phones
// released with it: they are tried for up to batchGrace before the suite
// leaves them out. Without it a suite that waited for another one got the
// phone the other released first and left out the one released a moment
// later.
func (r *runner) awaitBatch(ctx context.Context, clk clock.Clock, phones []*phone, try func() bool) {
	gctx, stop := clock.WithTimeout(ctx, clk, batchGrace, errSomeBusy)
	defer stop()
	_ = clock.Retry{Attempts: math.MaxInt, Clock: clk, Backoff: clock.Backoff{Base: 20 * time.Millisecond, Max: 100 * time.Millisecond},
		Retryable: func(err error) bool { return errors.Is(err, errSomeBusy) }}.Do(gctx, func(context.Context) error {
		try()
		for _, p := range phones {
			if p.lock == nil {
				return errSomeBusy
			}
		}
		return nil
	})
}

// busyAfterWait says in a lock error that the suite waited.
func busyAfterWait(err error, wait time.Duration) error {
	e := fault.From(err)
	if e.Code == fault.CodeDeviceBusy && wait > 0 {
		e.Message += " (the suite waited " + wait.String() + " for a free phone)"
	}
	return e
}

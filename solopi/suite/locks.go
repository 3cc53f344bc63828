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

// lockPhones takes the phones' locks without waiting; a busy phone is
// left out (its device_busy error in errs) while others are free. Only
// when every phone is busy does the suite wait, up to DeviceWait, for the
// first to be released, then takes whichever are free. A suite never
// waits while holding a phone, so two suites asking for the same phones
// share them out instead of waiting for each other.
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
	if err != nil && ctx.Err() != nil {
		for i := range errs {
			errs[i] = fault.Wrap(fault.Interrupted, fault.CodeInterrupted, "interrupted while waiting for the phones", ctx.Err())
		}
	}
	return errs
}

// busyAfterWait says in a lock error that the suite waited.
func busyAfterWait(err error, wait time.Duration) error {
	e := fault.From(err)
	if e.Code == fault.CodeDeviceBusy && wait > 0 {
		e.Message += " (the suite waited " + wait.String() + " for a free phone)"
	}
	return e
}

package device

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
)

// PollOptions configure PollUntil.
type PollOptions struct {
	// Timeout is the whole budget; PollUntil returns ErrPollTimeout once it
	// has passed without the check reporting done.
	Timeout time.Duration
	// Interval is the longest pause between two checks (the command's
	// --poll-interval).
	Interval time.Duration
	// Initial is the first pause (default 25 ms, never above Interval).
	// Pauses double from Initial up to Interval, so a state the device
	// publishes shortly after a mutation is seen within tens of
	// milliseconds while a long wait is not polled more often than the
	// user asked. Initial equal to Interval polls at a fixed interval.
	Initial time.Duration
	// Clock measures the budget and the pauses (nil: the real clock).
	Clock clock.Clock
}

// ErrPollTimeout is returned by PollUntil when the budget expires.
var ErrPollTimeout = errors.New("poll budget expired")

// PollUntil is the host's one wait loop: it runs check at once and then
// after pauses (see PollOptions) until check reports done, returns an
// error, ctx ends (the interrupt error) or the budget expires
// (ErrPollTimeout). check receives ctx unchanged, so an in-flight query is
// cancelled by an interrupt but not by the budget.
func PollUntil(ctx context.Context, o PollOptions, check func(ctx context.Context) (bool, error)) error {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Initial <= 0 {
		o.Initial = 25 * time.Millisecond
	}
	o.Initial = min(o.Initial, o.Interval)
	clk := clock.Or(o.Clock)
	deadline := clock.Deadline(clk, o.Timeout)
	wait := o.Initial
	for {
		if ctx.Err() != nil {
			return Interrupted(ctx)
		}
		done, err := check(ctx)
		if err != nil || done {
			return err
		}
		left := deadline.Sub(clk.Now())
		if left <= 0 {
			return ErrPollTimeout
		}
		if err := Pause(ctx, clk, min(wait, left)); err != nil {
			return err
		}
		wait = min(wait*2, o.Interval)
	}
}

// Cleanup returns a context for work that must still happen after ctx was
// cancelled (cancel what we started, restore a setting, collect evidence):
// it keeps ctx's values, ignores its cancellation, and is bounded by d.
func Cleanup(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), d)
}

// NewRequestID returns a random uuid4 string, the host's requestId for
// receipts (case import/delete, history and plugin mutations).
func NewRequestID() string {
	b := RandomBytes(16)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// NewReplayRequestID returns replay-<32 lowercase hex>, the reference
// host's replay requestId form.
func NewReplayRequestID() string {
	return "replay-" + hex.EncodeToString(RandomBytes(16))
}

// randomBytes returns n bytes from crypto/rand, which every identifier and
// owner token is drawn from. Since Go 1.24 rand.Read never returns an error
// (the runtime stops the program rather than hand out guessable bytes).
func RandomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// querySucceeded runs a query whose answer carries a boolean success: a
// missing or non-boolean one breaks the contract (noSuccess), false is the
// device's refusal, with its own errorCode and refused as the message when
// it gives none. The object is returned with either error.
func (d *Device) QuerySucceeded(ctx context.Context, action string, p Params, noSuccess, refused string) (WireObject, error) {
	o, err := d.Query(ctx, action, p)
	if err != nil {
		return nil, err
	}
	ok, isBool := o.Flag("success")
	if !isBool {
		return o, ContractError(noSuccess, o)
	}
	if !ok {
		return o, DeviceRefusal(o, refused)
	}
	return o, nil
}

// contractError is a device answer that breaks the documented contract
// (exit 4): the host cannot attribute or trust it.
func ContractError(msg string, resp any) *fault.Error {
	e := fault.New(fault.Transport, fault.CodeProtocolContractViolation, msg)
	if resp != nil {
		// response is solopi-ai's name for the answer its validator
		// refused; lastResponse ours.
		e.With("lastResponse", resp).With("response", resp)
	}
	return e
}

// deviceRefusal turns a device answer with success:false into a business
// error (exit 2) that keeps the device's errorCode when it has one.
func DeviceRefusal(m map[string]any, fallbackMsg string) *fault.Error {
	code, _ := m["errorCode"].(string)
	msg, _ := m["error"].(string)
	if code == "" {
		code = fault.CodeDeviceRejected
	}
	if msg == "" {
		msg = fallbackMsg
	}
	e := fault.New(fault.Failed, code, msg)
	for k, v := range m {
		if k != "success" && k != "errorCode" && k != "error" {
			e.With(k, v)
		}
	}
	return e
}

// pollTimeout is the 124 error of an expired wait.
func PollTimeout(msg string) *fault.Error {
	return fault.New(fault.Timeout, fault.CodeTimeout, msg)
}

// recode replaces an error's code.
func Recode(e *fault.Error, code string) *fault.Error {
	e.Code = code
	return e
}

// rekind replaces an error's kind.
func Rekind(e *fault.Error, k fault.Kind) *fault.Error {
	e.Kind = k
	return e
}

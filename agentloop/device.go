package agentloop

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/solopi-dev/solopi/agentloop/coord"
)

// Device modes.
const (
	ModeSoloPi = "solopi"
	ModeADB    = "adb"
)

// Command is one input-equivalent action, already mapped to device pixels.
// The device never sees model coordinates or the contract.
type Command struct {
	Action   string             `json:"action"`
	Point    *coord.MappedPoint `json:"point,omitempty"`
	Start    *coord.MappedPoint `json:"start,omitempty"`
	End      *coord.MappedPoint `json:"end,omitempty"`
	Text     string             `json:"text,omitempty"`
	Duration time.Duration      `json:"-"`
}

// DispatchResult is what a device reports about one dispatched command.
// Dispatched true means the command reached the device; it says nothing
// about its visible or semantic effect.
type DispatchResult struct {
	Dispatched bool           `json:"command_dispatched"`
	Detail     map[string]any `json:"detail,omitempty"`
}

// Device is the runtime's only view of a phone: screenshots and
// input-equivalent actions. It offers no app launch, no package lookup and
// no system-panel command, so the pure-vision contract cannot be bypassed.
type Device interface {
	// Mode names the device kind (solopi or adb).
	Mode() string
	// Observe captures the current screen.
	Observe(ctx context.Context) (*Screen, error)
	// Supports reports whether the device can perform an action; when it
	// cannot, note explains it to the model (a protocol note, zero-touch).
	Supports(action string) (ok bool, note string)
	// Dispatch performs cmd, planned and freshness-checked against on.
	Dispatch(ctx context.Context, cmd Command, on *Screen) (DispatchResult, error)
	// Close restores what the device changed for the task (the input
	// method) and releases it.
	Close(ctx context.Context) error
}

// NotMappableError is an action the device cannot express on the current
// screen (no node under the point, no text field to type into). Nothing
// was sent; the note goes back to the model.
type NotMappableError struct {
	Code string
	Note string
}

func (e *NotMappableError) Error() string { return e.Code + ": " + e.Note }

// DeviceError is a failed device operation after or during dispatch.
type DeviceError struct {
	Code       string
	Message    string
	Dispatched bool
	Err        error
}

func (e *DeviceError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return e.Code + ": " + e.Message
}

func (e *DeviceError) Unwrap() error { return e.Err }

// ErrStaleOnDevice is a device's own stale-observation rejection (the
// SoloPi Agent session's stale_observation): the screen changed after the
// host checked the pixels. Nothing was executed; the runtime replans on a
// new observation as after a failed freshness check.
var ErrStaleOnDevice = errors.New("the device rejected the action: stale observation")

// LongPressDuration is how long every device holds a Long Press.
const LongPressDuration = 800 * time.Millisecond

// Package counterphone is an in-memory phone running the simulator's
// counter app, drawn with the fake model's renderer, for tests that run
// the pure-vision runtime without a device: the fake model reads its
// pixels and taps its buttons.
package counterphone

import (
	"context"
	"image"
	"strconv"
	"sync"

	"github.com/solopi-dev/solopi/agentloop"
	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/clock"
)

// The counter app's buttons, as fakemodel.CounterScreen draws them.
var (
	plusRect  = image.Rect(560, 1120, 960, 1290)
	resetRect = image.Rect(120, 1120, 520, 1290)
)

// screens are the screens every phone of the process has shown, by the
// counter's value: a value renders the same pixels on any phone.
var screens = struct {
	sync.Mutex
	m map[int]*agentloop.Screen
}{m: map[int]*agentloop.Screen{}}

// phone is the device. Its zero value shows the counter at 0.
type phone struct {
	mu     sync.Mutex
	value  int
	Taps   int
	Closed bool
}

// Value is the counter's current value.
func (p *phone) Value() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.value
}

// Mode implements agentloop.Device.
func (p *phone) Mode() string { return "test" }

// Supports implements agentloop.Device.
func (p *phone) Supports(a string) (bool, string) {
	switch a {
	case action.Tap, action.DoubleTap, action.LongPress, action.Swipe, action.Type,
		action.Back, action.Home, action.Wait:
		return true, ""
	}
	return false, a + " is not a device action"
}

// Observe implements agentloop.Device.
func (p *phone) Observe(ctx context.Context) (*agentloop.Screen, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	screens.Lock()
	defer screens.Unlock()
	s, ok := screens.m[p.value]
	if !ok {
		var err error
		if s, err = agentloop.ScreenFromImage(fakemodel.CounterScreen(strconv.Itoa(p.value)), clock.System.Now()); err != nil {
			return nil, err
		}
		screens.m[p.value] = s
	}
	// A new Screen per observation, sharing the encoded pixels.
	return s.Recaptured(clock.System.Now()), nil
}

// Dispatch implements agentloop.Device: a tap on +1 counts up, on Reset
// goes back to 0.
func (p *phone) Dispatch(_ context.Context, cmd agentloop.Command, _ *agentloop.Screen) (agentloop.DispatchResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cmd.Action == action.Tap && cmd.Point != nil {
		p.Taps++
		pt := image.Pt(cmd.Point.Device[0], cmd.Point.Device[1])
		switch {
		case pt.In(plusRect):
			p.value++
		case pt.In(resetRect):
			p.value = 0
		}
	}
	return agentloop.DispatchResult{Dispatched: true, Detail: map[string]any{"counter": p.value}}, nil
}

// Close implements agentloop.Device.
func (p *phone) Close(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.Closed = true
	return nil
}

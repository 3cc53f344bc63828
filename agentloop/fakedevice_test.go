package agentloop

import (
	"context"
	"image"
	"strconv"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
)

// counterDevice is an in-memory phone running the simulator's counter app
// (rendered in the simulator's visual style). It records every dispatched
// command so tests can assert zero-touch behaviour.
type counterDevice struct {
	mu       sync.Mutex
	value    int
	dialog   bool
	observed int
	// beforeObserve runs before observation n (1-based) is rendered; tests
	// use it to change the screen between planning and dispatch.
	beforeObserve func(d *counterDevice, n int)
	dispatched    []Command
	closed        bool
	noDoubleTap   bool
	// blink, when not empty, draws a small red box there (a local
	// animation such as a spinner over the target).
	blink image.Rectangle
	// failDispatch, when set, fails every dispatch before it reaches the
	// phone.
	failDispatch error
}

var (
	plusRect    = image.Rect(560, 1120, 960, 1290)
	resetRect   = image.Rect(120, 1120, 520, 1290)
	overlayRect = image.Rect(140, 600, 940, 1400)
)

func (d *counterDevice) Mode() string { return "test" }

func (d *counterDevice) Supports(a string) (bool, string) {
	if a == action.DoubleTap && d.noDoubleTap {
		return false, "no double tap here"
	}
	switch a {
	case action.Tap, action.DoubleTap, action.LongPress, action.Swipe, action.Type, action.Back, action.Home, action.Wait:
		return true, ""
	}
	return false, a + " is not a device action"
}

func (d *counterDevice) render() *image.RGBA {
	img := fakemodel.CounterScreen(strconv.Itoa(d.value))
	if d.dialog {
		c := &fakemodel.Canvas{Img: img}
		c.Box("overlay", overlayRect, "OK")
	}
	if !d.blink.Empty() {
		c := &fakemodel.Canvas{Img: img}
		c.Box("overlay", d.blink, "")
	}
	return img
}

// counterScreens are the screens every counterDevice of the package has
// shown, by their state: the same state renders the same pixels on any
// device, and encoding them was a quarter of the package's CPU.
var counterScreens = struct {
	sync.Mutex
	m map[string]*Screen
}{m: map[string]*Screen{}}

func (d *counterDevice) Observe(ctx context.Context) (*Screen, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.observed++
	n := d.observed
	hook := d.beforeObserve
	d.mu.Unlock()
	if hook != nil {
		hook(d, n)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	key := strconv.Itoa(d.value) + strconv.FormatBool(d.dialog) + d.blink.String()
	counterScreens.Lock()
	defer counterScreens.Unlock()
	if s, ok := counterScreens.m[key]; ok {
		// A new Screen per observation (screens are per-capture values),
		// sharing the already encoded pixels.
		return s.Recaptured(time.Now()), nil
	}
	s, err := ScreenFromImage(d.render(), time.Now())
	if err != nil {
		return nil, err
	}
	counterScreens.m[key] = s
	return s.Recaptured(time.Now()), nil
}

func (d *counterDevice) Dispatch(ctx context.Context, cmd Command, _ *Screen) (DispatchResult, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failDispatch != nil {
		return DispatchResult{}, d.failDispatch
	}
	d.dispatched = append(d.dispatched, cmd)
	if cmd.Action == action.Tap && cmd.Point != nil {
		p := image.Pt(cmd.Point.Device[0], cmd.Point.Device[1])
		switch {
		case d.dialog:
			if p.In(overlayRect) {
				d.dialog = false
			}
		case p.In(plusRect):
			d.value++
		case p.In(resetRect):
			d.value = 0
		}
	}
	return DispatchResult{Dispatched: true, Detail: map[string]any{"test": true}}, nil
}

func (d *counterDevice) Close(context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	return nil
}

func (d *counterDevice) state() (int, bool, []Command) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.value, d.dialog, append([]Command(nil), d.dispatched...)
}

package sessions

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
	"github.com/solopi-dev/solopi/solopi/device"
)

// The device of these tests is the simulator: SoloPi's session resolvers
// with their real state machines, timings (on a fast clock) and files.
// What a test needs from a slow, odd or contested device comes from the
// simulator's fault knobs or from another client acting at a given moment.

// simCaptures is where the simulated SoloPi keeps screen recordings.
const simCaptures = "/storage/emulated/0/solopi/ScreenCaptures"

// simPhone is one simulated phone and the host's Device on it.
type simPhone struct {
	t   *testing.T
	dev *sim.Device
	d   *device.Device
}

// newSimPhone starts a simulated phone with SoloPi's service up; opts
// adjust the simulator first.
func newSimPhone(t *testing.T, opts ...func(*sim.Options)) *simPhone {
	t.Helper()
	o := sim.Options{Serial: "sim-sessions", TimeScale: 100}
	for _, fn := range opts {
		fn(&o)
	}
	dev := sim.New(o)
	t.Cleanup(func() { dev.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := dev.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return &simPhone{t: t, dev: dev, d: device.NewDevice(dev, device.DeviceOptions{RequestTimeout: 5 * time.Second})}
}

// device is a new host Device on the phone, as each command invocation
// opens its own (no connection is reused from an earlier one).
func (p *simPhone) device() *device.Device {
	return device.NewDevice(p.dev, device.DeviceOptions{RequestTimeout: 5 * time.Second})
}

// file is a device file's content (nil when missing).
func (p *simPhone) file(path string) []byte {
	b, err := p.dev.Phone.FS().ReadFile(core.NormPath(path))
	if err != nil {
		return nil
	}
	return b
}

// mutationCount counts the mutations whose URI contains every part.
func (p *simPhone) mutationCount(parts ...string) int { return len(p.dev.MutationsWith(parts...)) }

// state is the state a session status query shows now.
func (p *simPhone) state(action string, params ...string) string {
	p.t.Helper()
	o, err := p.d.Query(context.Background(), action, device.P(params...))
	if err != nil {
		p.t.Fatal(err)
	}
	return o.Str("state")
}

// ran reports whether a command starting with prefix ran on the device.
func (p *simPhone) ran(prefix string) bool {
	for _, c := range p.dev.Commands() {
		if strings.HasPrefix(c, prefix) {
			return true
		}
	}
	return false
}

// otherClient sends a mutation to SoloPi as another host would.
func (p *simPhone) otherClient(action string, params ...string) {
	p.t.Helper()
	o := device.NewDevice(p.dev, device.DeviceOptions{RequestTimeout: 5 * time.Second})
	if err := o.Mutate(context.Background(), action, device.P(params...)); err != nil {
		p.t.Fatalf("another client's %s: %v", action, err)
	}
}

// slowStarts makes every session's start wait for a permission dialog
// that takes an hour: the session stays starting.
func (p *simPhone) slowStarts() { p.dev.App.SetPermissionDialogDelay(time.Hour) }

// cancelOn cancels the returned context when the device receives a
// mutation containing marker: a Ctrl-C while the host waits for it.
func (p *simPhone) cancelOn(marker string) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	p.t.Cleanup(cancel)
	p.t.Cleanup(p.dev.OnMutation(func(m string) {
		if strings.Contains(m, marker) {
			cancel()
		}
	}))
	return ctx
}

// onState calls fn once, with the decoded answer, when an answer of the
// given action first shows state (fn runs before the host reads it).
func (p *simPhone) onState(action, state string, fn func(o device.WireObject)) {
	var once sync.Once
	p.t.Cleanup(p.dev.OnAnswer(func(a sim.Answer) {
		if a.Action != action {
			return
		}
		o, err := device.DecodeObject(a.Body)
		if err != nil || device.WireObject(o).Str("state") != state {
			return
		}
		once.Do(func() { fn(device.WireObject(o)) })
	}))
}

// answerFault edits the device's answers (sim.AnswerFault).
func (p *simPhone) answerFault(f sim.AnswerFault) {
	p.t.Helper()
	if err := p.dev.AddAnswerFault(f); err != nil {
		p.t.Fatal(err)
	}
}

// otherClientFirst delivers another client's start just before the host's
// own start mutation (containing marker) reaches SoloPi.
func (p *simPhone) otherClientFirst(marker, uri string) {
	var once sync.Once
	p.t.Cleanup(p.dev.OnMutation(func(m string) {
		if strings.Contains(m, marker) && !strings.Contains(m, "another-client") {
			once.Do(func() {
				if err := p.dev.App.HandleActivity(context.Background(), protocol.DefaultPackage+"/"+protocol.AdbSchemeActivity, uri); err != nil {
					p.t.Errorf("another client's start: %v", err)
				}
			})
		}
	}))
}

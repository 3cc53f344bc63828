package sim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/android"
)

// MutationFault loses or delays the mutations (scheme intents delivered to
// SoloPi's activities) of one action, as a busy main thread or an intent
// dropped by the system would: a lost mutation never reaches SoloPi and
// leaves no trace, like the device's invisible rejections.
type MutationFault struct {
	// Action is the scheme action ("replay", "harness", "record", …).
	Action string `json:"action"`
	// Query lists URI parameters the mutation must carry with these values
	// ({"type": "cancel"}); the others are free.
	Query map[string]string `json:"query,omitempty"`
	// Drop loses the mutation.
	Drop bool `json:"drop,omitempty"`
	// DelayMs delivers it this much device time late (am start returns at
	// once).
	DelayMs int64 `json:"delayMs,omitempty"`
	// Times is how many mutations the fault takes before it expires (0:
	// until cleared).
	Times int `json:"times,omitempty"`
}

// intentFaults holds a device's mutation faults.
type intentFaults struct {
	mu     sync.Mutex
	faults []*MutationFault
}

// AddMutationFault loses or delays matching mutations from now on.
func (d *Device) AddMutationFault(f MutationFault) error {
	switch {
	case f.Action == "":
		return errors.New("mutation fault: action is required")
	case f.Drop == (f.DelayMs > 0):
		return errors.New("mutation fault: give exactly one of drop: true or delayMs > 0")
	case f.Times < 0:
		return errors.New("mutation fault: times must not be negative")
	}
	d.intents.mu.Lock()
	defer d.intents.mu.Unlock()
	d.intents.faults = append(d.intents.faults, &f)
	return nil
}

// ClearMutationFaults delivers every mutation again.
func (d *Device) ClearMutationFaults() {
	d.intents.mu.Lock()
	defer d.intents.mu.Unlock()
	d.intents.faults = nil
}

// take returns the fault that applies to an intent, if any (spending one
// of its uses).
func (fs *intentFaults) take(uri string) *MutationFault {
	u := protocol.ParseMutationURI(uri)
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for i, g := range fs.faults {
		if len(u.Segments) != 1 || u.Segments[0] != g.Action {
			continue
		}
		ok := true
		for k, v := range g.Query {
			got, has := u.Params[k]
			ok = ok && has && got == v
		}
		if !ok {
			continue
		}
		if g.Times > 0 {
			g.Times--
			if g.Times == 0 {
				fs.faults = append(fs.faults[:i:i], fs.faults[i+1:]...)
			}
		}
		copyG := *g
		return &copyG
	}
	return nil
}

// deliverIntent hands a scheme intent to SoloPi, through the mutation
// faults.
func (d *Device) deliverIntent(ctx context.Context, in android.Intent) error {
	d.mutationLog.add(in.Data)
	f := d.intents.take(in.Data)
	switch {
	case f == nil:
		return d.App.HandleActivity(ctx, in.Component, in.Data)
	case f.Drop:
		d.Phone.Log('W', "ActivityManager", "intent lost: "+in.Data)
		return nil
	}
	go func() {
		if d.clk.Sleep(context.Background(), time.Duration(f.DelayMs)*time.Millisecond) == nil {
			if err := d.App.HandleActivity(context.Background(), in.Component, in.Data); err != nil {
				d.Phone.Log('E', "ActivityManager", fmt.Sprintf("late intent: %v", err))
			}
		}
	}()
	return nil
}

// RefuseDials makes the next n connections to the control port fail as if
// nothing listened (the service restarting, a flaky forward).
func (d *Device) RefuseDials(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.refuseDials = max(0, n)
}

// refusedDialLocked spends one refused dial.
func (d *Device) refusedDialLocked() bool {
	if d.refuseDials == 0 {
		return false
	}
	d.refuseDials--
	return true
}

package device

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/sim"
)

// droppedStreams refuses the first n tcp: streams, as adb does while the
// device's port is not up yet.
type droppedStreams struct {
	Transport
	n, dials atomic.Int32
}

func (d *droppedStreams) DialTCP(ctx context.Context, port int) (net.Conn, error) {
	if d.dials.Add(1) <= d.n.Load() {
		return nil, errors.New("adb: stream refused")
	}
	return d.Transport.DialTCP(ctx, port)
}

// A query whose stream fails is sent again after 50 ms and 100 ms of the
// channel's clock; a third failure is the answer.
func TestQueryRetriesADroppedStream(t *testing.T) {
	t.Parallel()
	dev := sim.New(sim.Options{Serial: "sim-retry", TimeScale: 50})
	t.Cleanup(func() { dev.Close() })
	if err := dev.WaitReady(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		drops int32
		ok    bool
	}{{2, true}, {3, false}} {
		tr := &droppedStreams{Transport: dev}
		tr.n.Store(tc.drops)
		clk := clock.NewFake(time.Unix(0, 0))
		d := NewDevice(tr, DeviceOptions{Clock: clk, RequestTimeout: time.Minute})
		done := make(chan error, 1)
		go func() { _, err := d.Query(context.Background(), "harness", P("type", "capabilities")); done <- err }()
		for _, pause := range []time.Duration{50 * time.Millisecond, 100 * time.Millisecond} {
			if err := clk.WaitForSleepers(context.Background(), 1); err != nil {
				t.Fatal(err)
			}
			clk.Advance(pause)
		}
		err := <-done
		switch {
		case tc.ok && err != nil:
			t.Errorf("%d dropped streams: %v", tc.drops, err)
		case !tc.ok && fault.CodeOf(err) != fault.CodeControlServiceUnreachable:
			t.Errorf("%d dropped streams: want %s, got %v", tc.drops, fault.CodeControlServiceUnreachable, err)
		}
		if got := tr.dials.Load(); got != 3 {
			t.Errorf("%d dropped streams: %d dials, want 3", tc.drops, got)
		}
		d.Close()
	}
}

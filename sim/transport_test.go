package sim

import (
	"context"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/transporttest"
)

var _ device.Transport = (*Device)(nil)

// newTestDevice starts a fast simulated device and waits until SoloPi's
// control service is up.
func newTestDevice(t *testing.T) *Device {
	t.Helper()
	d := New(Options{Serial: "sim-test", TimeScale: 50})
	t.Cleanup(func() { d.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestInProcessTransportConformance(t *testing.T) {
	t.Parallel()
	transporttest.Run(t, func(t *testing.T) transporttest.Fixture {
		d := newTestDevice(t)
		if err := d.Phone.FS().MkdirAll("/sdcard/conformance", 0o755); err != nil {
			t.Fatal(err)
		}
		return transporttest.Fixture{Transport: d, HTTPPort: 23342, Scratch: "/sdcard/conformance"}
	})
}

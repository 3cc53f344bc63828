//go:build interop

package sim

import (
	"context"
	"testing"
	"time"

	"solopi/internal/realadb"
	"solopi/solopi/adb"
	"solopi/solopi/transporttest"
)

// Our adb client through Debian's real adb server to the simulator's fake
// adbd passes the same conformance suite as the other two fronts.
func TestInteropAdbClientThroughRealAdbConformance(t *testing.T) {
	transporttest.Run(t, func(t *testing.T) transporttest.Fixture {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		f, err := StartFarm(ctx, FarmOptions{TimeScale: 50})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if err := f.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
		d := f.Devices()[0]
		if err := d.Phone.FS().MkdirAll("/sdcard/conformance", 0o755); err != nil {
			t.Fatal(err)
		}
		srv := realadb.Start(t)
		serial := srv.Connect(t, f.Adbd(d.Serial()).Addr())
		c, err := adb.NewClient(adb.WithPort(srv.Port), adb.WithoutServerStart())
		if err != nil {
			t.Fatal(err)
		}
		dev, err := c.Device(ctx, serial)
		if err != nil {
			t.Fatal(err)
		}
		return transporttest.Fixture{Transport: dev, HTTPPort: 23342, Scratch: "/sdcard/conformance"}
	})
}

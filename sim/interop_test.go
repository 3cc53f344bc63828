//go:build interop

package sim

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/internal/realadb"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/adb"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/transporttest"
)

// Our adb client through Debian's real adb server to the simulator's fake
// adbd passes the same conformance suite as the other two fronts.
func TestInteropAdbClientThroughRealAdbConformance(t *testing.T) {
	t.Parallel()
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

// BenchmarkInteropQuery compares one SoloPi query through our client (an
// HTTP GET over a `tcp:` stream of the adb server) with the upstream way of
// making the same query per command: spawn `adb forward tcp:0 tcp:23342`,
// GET through the forward, spawn `adb forward --remove`.
//
//	go test -run '^$' -tags interop -bench InteropQuery ./sim/
func BenchmarkInteropQuery(b *testing.B) {
	ctx := context.Background()
	f, err := StartFarm(ctx, FarmOptions{TimeScale: 50})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := f.WaitReady(ctx); err != nil {
		b.Fatal(err)
	}
	srv := realadb.Start(b)
	serial := srv.Connect(b, f.Adbd(f.Devices()[0].Serial()).Addr())
	c, err := adb.NewClient(adb.WithPort(srv.Port), adb.WithoutServerStart())
	if err != nil {
		b.Fatal(err)
	}
	dev, err := c.Device(ctx, serial)
	if err != nil {
		b.Fatal(err)
	}
	ch := device.NewDevice(dev, device.DeviceOptions{})
	defer ch.Close()
	query := device.P("type", "capabilities")
	b.Run("client", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := ch.Query(ctx, "harness", query); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("adb-forward-per-call", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			out, err := srv.Run(ctx, "-s", serial, "forward", "tcp:0", "tcp:23342")
			if err != nil {
				b.Fatalf("forward: %v %s", err, out)
			}
			port := strings.TrimSpace(out)
			resp, err := http.Get("http://127.0.0.1:" + port + protocol.QueryPath("harness", query))
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if out, err := srv.Run(ctx, "-s", serial, "forward", "--remove", "tcp:"+port); err != nil {
				b.Fatalf("forward --remove: %v %s", err, out)
			}
		}
	})
}

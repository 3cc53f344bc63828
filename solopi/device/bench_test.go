package device

import (
	"context"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/sim"
)

// benchSimDevice opens a session on an in-process simulator at a high time
// scale, so that the figures measure the host's own cost.
func benchSimDevice(b *testing.B, scale float64) *Device {
	b.Helper()
	dev := sim.New(sim.Options{Serial: "sim-bench", TimeScale: scale})
	b.Cleanup(func() { dev.Close() })
	s, err := OpenSession(context.Background(), dev, SessionOptions{StartupTimeout: 10 * time.Second})
	if err != nil {
		b.Fatalf("open session on the simulator: %v", err)
	}
	b.Cleanup(s.Close)
	return s.Device
}

// BenchmarkQuery is one harness capabilities query through the device
// channel against the in-process simulator: "raw" up to a checked JSON
// object (QueryRaw), "decoded" into a WireObject (Query).
//
//	go test -run '^$' -bench Query ./solopi/device/
func BenchmarkQuery(b *testing.B) {
	d := benchSimDevice(b, 50)
	ctx := context.Background()
	q := P("type", "capabilities")
	for _, bc := range []struct {
		name  string
		query func() error
	}{
		{"raw", func() error { _, err := d.QueryRaw(ctx, "harness", q); return err }},
		{"decoded", func() error { _, err := d.Query(ctx, "harness", q); return err }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if err := bc.query(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

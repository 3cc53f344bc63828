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
// channel against the in-process simulator, up to a checked JSON object
// (QueryRaw); BenchmarkQueryDecoded adds the decoding into a WireObject.
//
//	go test -run '^$' -bench Query ./solopi/...
func BenchmarkQuery(b *testing.B) {
	d := benchSimDevice(b, 50)
	ctx := context.Background()
	q := P("type", "capabilities")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := d.QueryRaw(ctx, "harness", q); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkQueryDecoded(b *testing.B) {
	d := benchSimDevice(b, 50)
	ctx := context.Background()
	q := P("type", "capabilities")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := d.Query(ctx, "harness", q); err != nil {
			b.Fatal(err)
		}
	}
}

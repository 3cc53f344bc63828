package inspector

import (
	"context"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
)

// BenchmarkSuggest is the panel of a clicked node: the selector search
// over the screen's nodes and the three case steps parsed back.
func BenchmarkSuggest(b *testing.B) {
	nodes := counterNodes()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := suggest(nodes, 2, "hello"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCapture is one look at the simulated phone: the page tree
// (SoloPi's 500 ms settle, at the simulator's time scale 100) and the
// screenshot.
func BenchmarkCapture(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dev := sim.New(sim.Options{Serial: "sim-inspector-bench", TimeScale: 100})
	defer dev.Close()
	if err := dev.WaitReady(ctx); err != nil {
		b.Fatal(err)
	}
	if err := dev.Phone.LaunchApp(counterPkg); err != nil {
		b.Fatal(err)
	}
	s, err := device.OpenSession(ctx, dev, device.SessionOptions{PreserveForeground: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	for b.Loop() {
		snap, err := capture(ctx, s)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(snap.png)), "png-bytes")
	}
}

package devicehost

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/internal/pgtest"
	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/managed/farmbench"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
)

// BenchmarkManagedFarmSim runs real shards: W worker loops (each its own
// River client and store, as W worker processes would have) share one
// store and W simulated devices (time scale 25) and run 96 counter-success
// shards with verify-run in process on the leased device. It reports
// shards per second and the claims' latency (farmbench).
//
//	SOLOPI_TEST_POSTGRES=postgres://… go test -run '^$' -bench ManagedFarmSim -benchtime 1x ./managed/devicehost/
func BenchmarkManagedFarmSim(b *testing.B) {
	plan, err := canonjson.Decode(fixturePlan(b, "counter-success"))
	if err != nil {
		b.Fatal(err)
	}
	for _, be := range []struct {
		name string
		db   func(b *testing.B) string
	}{
		{"sqlite", func(b *testing.B) string { return filepath.Join(b.TempDir(), "managed.sqlite") }},
		{"postgres", func(b *testing.B) string { return pgtest.Schema(b) }},
	} {
		for _, workers := range []int{4, 8} {
			b.Run(fmt.Sprintf("%s/workers=%d", be.name, workers), func(b *testing.B) {
				for range b.N {
					b.StopTimer()
					f, err := sim.StartFarm(b.Context(), sim.FarmOptions{Devices: workers, TimeScale: 25, NoAdbd: true})
					if err != nil {
						b.Fatal(err)
					}
					if err := f.WaitReady(b.Context()); err != nil {
						b.Fatal(err)
					}
					devices := Host{Devices: device.Selector{AdbPath: "adb", AdbServerPort: f.Server().Port()},
						Session: device.SessionOptions{Device: device.DeviceOptions{Package: protocol.DefaultPackage, Port: protocol.DefaultDevicePort,
							RequestTimeout: 5 * time.Second}, StartupTimeout: 15 * time.Second}}
					var serials []string
					for _, d := range f.Devices() {
						serials = append(serials, d.Serial())
					}
					var subs []managed.Submission
					for i := range 2 {
						sub := managed.NewSubmission()
						sub.Plan, sub.Matrix = plan, []any{map[string]any{"id": "counter", "replicas": 48}}
						sub.IdempotencyKey, sub.OwnerToken = fmt.Sprintf("bench-%d", i), "bench-owner-token-0123456789"
						subs = append(subs, sub)
					}
					farmbench.Run(b, farmbench.Options{Database: be.db(b), Workers: workers, Devices: devices, Serials: serials,
						Executor: devices, Submissions: subs}).Report(b)
					f.Close()
				}
			})
		}
	}
}

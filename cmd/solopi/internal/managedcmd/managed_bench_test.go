package managedcmd

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/verifycmd"
	"github.com/solopi-dev/solopi/internal/pgtest"
	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/managed/farmbench"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim"
)

// BenchmarkManagedFarmSim runs real shards: W worker loops (each its own
// River client and store, as W worker processes would have) share one
// store and W simulated devices (time scale 25) and run 96 counter-success
// shards with verify-run in process on the leased device. It reports
// shards per second and the claims' latency (farmbench).
//
//	SOLOPI_TEST_POSTGRES=postgres://… go test -run '^$' -bench ManagedFarmSim -benchtime 1x ./cmd/solopi/
func BenchmarkManagedFarmSim(b *testing.B) {
	planFile := fixturePlan(b, "counter-success")
	raw, err := os.ReadFile(planFile)
	if err != nil {
		b.Fatal(err)
	}
	plan, err := canonjson.Decode(raw)
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
					devices := hostDevices{g: &cmdutil.Globals{AdbPath: "adb", Package: protocol.DefaultPackage, DevicePort: protocol.DefaultDevicePort,
						AdbServerPort: f.Server().Port(), RequestTimeout: 5 * time.Second, StartupTimeout: 15 * time.Second}}
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
						Executor: devices.Executor(verifycmd.RunBudgets{}), Submissions: subs}).Report(b)
					f.Close()
				}
			})
		}
	}
}

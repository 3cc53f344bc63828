package worker_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/internal/pgtest"
	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/managed/farmbench"
	"github.com/solopi-dev/solopi/managed/storetest"
	"github.com/solopi-dev/solopi/managed/worker"
)

// instant is an executor whose verdict is immediate: the benchmark measures
// the farm machinery, not the device.
type instant struct{}

func (instant) ExecuteShard(context.Context, worker.ShardRun) (worker.ShardVerdict, error) {
	return worker.ShardVerdict{Status: "passed", Report: []byte(`{"status":"passed","outcomeFingerprint":"` + strings.Repeat("e", 64) + `"}`)}, nil
}

type benchBackend struct {
	name string
	db   func(b *testing.B) string
}

var benchBackends = []benchBackend{
	{"sqlite", func(b *testing.B) string { return filepath.Join(b.TempDir(), "m.sqlite") }},
	{"postgres", func(b *testing.B) string { return pgtest.Schema(b) }},
}

// BenchmarkFarm runs 200 shards (4 tasks of 50) through W worker loops,
// each with its own River client and database pool as separate processes
// would have, on W devices. It reports shards per second and the latency
// of claims (all of them, and those that leased a device).
func BenchmarkFarm(b *testing.B) {
	for _, be := range benchBackends {
		for _, workers := range []int{4, 8} {
			b.Run(fmt.Sprintf("%s/workers=%d", be.name, workers), func(b *testing.B) {
				for range b.N {
					benchFarm(b, be.db(b), workers)
				}
			})
		}
	}
}

func benchFarm(b *testing.B, database string, workers int) {
	var online serials
	for i := range workers {
		online = append(online, fmt.Sprintf("sim-%04d", i+1))
	}
	const tasks, shardsPerTask = 4, 50
	var subs []managed.Submission
	for i := range tasks {
		sub := managed.NewSubmission()
		sub.Plan, sub.Matrix = storetest.Plan(strings.Repeat("a", 64)), storetest.Matrix(shardsPerTask, nil)
		sub.IdempotencyKey, sub.OwnerToken = fmt.Sprintf("bench-%d", i), storetest.Owner
		subs = append(subs, sub)
	}
	farmbench.Run(b, farmbench.Options{Database: database, Workers: workers, Devices: online, Serials: online,
		Executor: instant{}, Submissions: subs}).Report(b)
}

// BenchmarkHeartbeat measures the heartbeats per second a store sustains:
// 8 leased assignments renewed in parallel.
func BenchmarkHeartbeat(b *testing.B) {
	for _, be := range benchBackends {
		b.Run(be.name, func(b *testing.B) {
			ctx := context.Background()
			s, err := managed.Open(ctx, be.db(b), managed.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			const n = 8
			devices := register(b, s, n)
			task := submit(b, s, "heartbeat", n, 1)
			jobs, _ := s.ShardJobs(ctx, task.TaskID)
			var ids []managed.Identity
			for _, j := range jobs {
				res, err := s.Claim(ctx, managed.ClaimRequest{JobID: j.JobID, TaskID: task.TaskID, ShardID: j.ShardID, WorkerID: "w", Serials: devices})
				if err != nil || res.Assignment == nil {
					b.Fatalf("claim %+v %v", res, err)
				}
				ids = append(ids, res.Assignment.Identity())
			}
			var next sync.Mutex
			i := 0
			b.SetParallelism(4) // 8 goroutines on 2 CPUs: one per assignment
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				next.Lock()
				id := ids[i%n]
				i++
				next.Unlock()
				for pb.Next() {
					if _, err := s.Heartbeat(ctx, id); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "heartbeats/s")
		})
	}
}

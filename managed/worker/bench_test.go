package worker_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/internal/pgtest"
	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/managed/storetest"
	"github.com/solopi-dev/solopi/managed/worker"
)

// timedStore records how long each claim takes.
type timedStore struct {
	managed.Store
	mu      sync.Mutex
	claims  []time.Duration // every claim
	granted []time.Duration // claims that leased a device
}

func (s *timedStore) Claim(ctx context.Context, req managed.ClaimRequest) (managed.ClaimResult, error) {
	start := time.Now()
	res, err := s.Store.Claim(ctx, req)
	d := time.Since(start)
	s.mu.Lock()
	s.claims = append(s.claims, d)
	if res.Assignment != nil {
		s.granted = append(s.granted, d)
	}
	s.mu.Unlock()
	return res, err
}

func percentile(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[min(len(s)-1, int(float64(len(s))*p))].Microseconds()) / 1000
}

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
	ctx := context.Background()
	b.StopTimer()
	admin, err := managed.Open(ctx, database, managed.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	var online serials
	for i := range workers {
		serial := fmt.Sprintf("sim-%04d", i+1)
		online = append(online, serial)
		if _, err := admin.RegisterDevice(ctx, managed.DeviceSpec{DeviceID: serial, Serial: serial, APILevel: 34}); err != nil {
			b.Fatal(err)
		}
	}
	const tasks, shardsPerTask = 4, 50
	for i := range tasks {
		sub := managed.NewSubmission()
		sub.Plan, sub.Matrix = storetest.Plan(strings.Repeat("a", 64)), storetest.Matrix(shardsPerTask, nil)
		sub.IdempotencyKey, sub.OwnerToken = fmt.Sprintf("bench-%d", i), storetest.Owner
		if _, err := admin.Submit(ctx, sub); err != nil {
			b.Fatal(err)
		}
	}
	stores := make([]*timedStore, workers)
	for i := range stores {
		s, err := managed.Open(ctx, database, managed.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		stores[i] = &timedStore{Store: s}
	}
	var mu sync.Mutex
	var done int
	var last time.Time
	var wg sync.WaitGroup
	b.StartTimer()
	start := time.Now()
	for i, s := range stores {
		wg.Go(func() {
			_, err := worker.Run(ctx, worker.LoopConfig{
				Config: worker.Config{Store: s, Executor: instant{}, Devices: online, WorkerID: fmt.Sprintf("w%d", i),
					ArtifactsRoot: b.TempDir(), IdleWait: 200 * time.Millisecond,
					Observe: func(worker.ShardReport) { mu.Lock(); done++; last = time.Now(); mu.Unlock() }},
				Concurrency: 1, IdleInterval: 200 * time.Millisecond, MaxIdlePolls: 5,
			})
			if err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if done != tasks*shardsPerTask {
		b.Fatalf("%d shards done, want %d", done, tasks*shardsPerTask)
	}
	var all, granted []time.Duration
	for _, s := range stores {
		all, granted = append(all, s.claims...), append(granted, s.granted...)
	}
	b.ReportMetric(float64(done)/last.Sub(start).Seconds(), "shards/s")
	b.ReportMetric(percentile(granted, 0.50), "claim-p50-ms")
	b.ReportMetric(percentile(granted, 0.99), "claim-p99-ms")
	b.ReportMetric(percentile(all, 0.99), "any-claim-p99-ms")
	b.ReportMetric(float64(len(all))/float64(done), "claims/shard")
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

// Package farmbench runs a farm of managed worker loops in one process for
// benchmarks: each loop has its own store (its own River client and
// database pool, as separate worker processes would), all share one
// database, and each claim is timed. The store and River are measured with
// an instant executor (managed/worker), real shards with verify-run on the
// simulator (cmd/solopi).
package farmbench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/managed/worker"
)

// Options describe a farm run.
type Options struct {
	Database string
	// Workers loops run at once, one shard each.
	Workers int
	// Devices are the serials every loop reaches; they are registered.
	Devices  worker.DeviceLister
	Serials  []string
	Executor worker.ShardExecutor
	// Submissions are submitted before the loops start.
	Submissions []managed.Submission
	// IdleInterval is the loops' poll period (default 200 ms); a loop stops
	// after five idle polls in a row.
	IdleInterval time.Duration
}

// result is what a farm run measured.
type result struct {
	Shards int
	// Elapsed runs from the loops' start to the last shard's end.
	Elapsed time.Duration
	// Claims are every claim's duration, Granted those that leased a
	// device.
	Claims, Granted []time.Duration
}

// timedStore records how long each claim takes.
type timedStore struct {
	managed.Store
	mu      sync.Mutex
	claims  []time.Duration
	granted []time.Duration
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

// Run registers the devices, submits the tasks and runs the loops until
// every shard ended; the benchmark timer runs only while the loops do.
func Run(b *testing.B, o Options) result {
	b.Helper()
	b.StopTimer()
	ctx := context.Background()
	admin, err := managed.Open(ctx, o.Database, managed.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	for _, serial := range o.Serials {
		if _, err := admin.RegisterDevice(ctx, managed.DeviceSpec{DeviceID: serial, Serial: serial, APILevel: 34}); err != nil {
			b.Fatal(err)
		}
	}
	want := 0
	for _, sub := range o.Submissions {
		task, err := admin.Submit(ctx, sub)
		if err != nil {
			b.Fatal(err)
		}
		jobs, err := admin.ShardJobs(ctx, task.TaskID)
		if err != nil {
			b.Fatal(err)
		}
		want += len(jobs)
	}
	if o.IdleInterval <= 0 {
		o.IdleInterval = 200 * time.Millisecond
	}
	stores := make([]*timedStore, o.Workers)
	for i := range stores {
		s, err := managed.Open(ctx, o.Database, managed.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		stores[i] = &timedStore{Store: s}
	}
	var mu sync.Mutex
	var res result
	var last time.Time
	var wg sync.WaitGroup
	b.StartTimer()
	start := time.Now()
	for i, s := range stores {
		wg.Go(func() {
			_, err := worker.Run(ctx, worker.LoopConfig{
				Config: worker.Config{Store: s, Executor: o.Executor, Devices: o.Devices, WorkerID: fmt.Sprintf("w%d", i),
					ArtifactsRoot: b.TempDir(), IdleWait: o.IdleInterval,
					Observe: func(worker.ShardReport) { mu.Lock(); res.Shards++; last = time.Now(); mu.Unlock() }},
				Concurrency: 1, IdleInterval: o.IdleInterval, MaxIdlePolls: 5,
			})
			if err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if res.Shards != want {
		b.Fatalf("%d shards ended, want %d", res.Shards, want)
	}
	res.Elapsed = last.Sub(start)
	for _, s := range stores {
		res.Claims, res.Granted = append(res.Claims, s.claims...), append(res.Granted, s.granted...)
	}
	return res
}

// Report reports shards per second and the claims' latency: p50 and p99
// of those that leased a device, p99 of all, and claims per shard.
func (r result) Report(b *testing.B) {
	b.ReportMetric(float64(r.Shards)/r.Elapsed.Seconds(), "shards/s")
	b.ReportMetric(percentile(r.Granted, 0.50), "claim-p50-ms")
	b.ReportMetric(percentile(r.Granted, 0.99), "claim-p99-ms")
	b.ReportMetric(percentile(r.Claims, 0.99), "any-claim-p99-ms")
	b.ReportMetric(float64(len(r.Claims))/float64(r.Shards), "claims/shard")
}

// percentile is the p-quantile of ds in milliseconds (0 for none).
func percentile(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[min(len(s)-1, int(float64(len(s))*p))].Microseconds()) / 1000
}

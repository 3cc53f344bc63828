package worker_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/managed"
	"github.com/solopi-dev/solopi/managed/storetest"
	"github.com/solopi-dev/solopi/managed/worker"
)

// step is one scripted execution.
type step func(ctx context.Context, run worker.ShardRun) (worker.ShardVerdict, error)

// scripted is a ShardExecutor that plays steps in order (the last one
// repeats) and records every run.
type scripted struct {
	mu    sync.Mutex
	steps []step
	runs  []worker.ShardRun
}

func script(steps ...step) *scripted { return &scripted{steps: steps} }

func (s *scripted) ExecuteShard(ctx context.Context, run worker.ShardRun) (worker.ShardVerdict, error) {
	s.mu.Lock()
	i := min(len(s.runs), len(s.steps)-1)
	s.runs = append(s.runs, run)
	st := s.steps[i]
	s.mu.Unlock()
	return st(ctx, run)
}

func (s *scripted) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.runs)
}

// verdict writes a verification report into the run's artifacts and
// returns it, as verify-run would.
func verdict(status string, scenarios ...map[string]any) step {
	return func(_ context.Context, run worker.ShardRun) (worker.ShardVerdict, error) {
		if err := os.MkdirAll(run.ArtifactsDir, 0o755); err != nil {
			return worker.ShardVerdict{}, err
		}
		if scenarios == nil {
			scenarios = []map[string]any{}
		}
		report, _ := json.Marshal(map[string]any{
			"schemaVersion": "solopi.ai.verification-report/v1", "status": status,
			"outcomeFingerprint": strings.Repeat("f", 64), "scenarios": scenarios,
		})
		path := filepath.Join(run.ArtifactsDir, "report.json")
		if err := os.WriteFile(path, report, 0o644); err != nil {
			return worker.ShardVerdict{}, err
		}
		return worker.ShardVerdict{Status: status, ReportPath: path, Report: report}, nil
	}
}

func failing(err error) step {
	return func(context.Context, worker.ShardRun) (worker.ShardVerdict, error) {
		return worker.ShardVerdict{}, err
	}
}

// blocking waits for ctx and reports that it saw the cancellation.
func blocking(started chan<- worker.ShardRun, stopped chan<- error) step {
	return func(ctx context.Context, run worker.ShardRun) (worker.ShardVerdict, error) {
		started <- run
		<-ctx.Done()
		stopped <- context.Cause(ctx)
		return worker.ShardVerdict{}, ctx.Err()
	}
}

// serials is a DeviceLister with a fixed answer.
type serials []string

func (s serials) OnlineSerials(context.Context) ([]string, error) { return s, nil }

// prober answers probes from a table; a missing serial errors.
type prober map[string]worker.ProbeReport

func (p prober) ProbeDevice(_ context.Context, serial string) (worker.ProbeReport, error) {
	r, ok := p[serial]
	if !ok {
		return r, os.ErrDeadlineExceeded
	}
	return r, nil
}

func openSQLite(t testing.TB, clk clock.Clock) (managed.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "managed.sqlite")
	s, err := managed.Open(context.Background(), path, managed.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func register(t testing.TB, s managed.Store, n int) []string {
	t.Helper()
	var out []string
	for i := range n {
		serial := "sim-" + string(rune('a'+i))
		if _, err := s.RegisterDevice(context.Background(), managed.DeviceSpec{DeviceID: "device-" + serial, Serial: serial,
			APILevel: 34, Capabilities: []string{"agent", "verification"}}); err != nil {
			t.Fatal(err)
		}
		out = append(out, serial)
	}
	return out
}

func submit(t testing.TB, s managed.Store, key string, replicas, retries int) managed.Task {
	t.Helper()
	sub := managed.NewSubmission()
	sub.Plan = storetest.Plan(strings.Repeat("a", 64))
	sub.Matrix = storetest.Matrix(replicas, nil)
	sub.IdempotencyKey = key
	sub.OwnerToken = storetest.Owner
	sub.MaxRetries = retries
	task, err := s.Submit(context.Background(), sub)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

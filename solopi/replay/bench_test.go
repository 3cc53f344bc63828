package replay

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/perfstats"
	"github.com/solopi-dev/solopi/sim"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/sessions"
)

// benchSimDevice opens a session on an in-process simulator at a high time
// scale, so that the figures measure the host's own cost.
func benchSimDevice(b *testing.B, scale float64) *device.Device {
	b.Helper()
	dev := sim.New(sim.Options{Serial: "sim-bench", TimeScale: scale})
	b.Cleanup(func() { dev.Close() })
	s, err := device.OpenSession(context.Background(), dev, device.SessionOptions{StartupTimeout: 10 * time.Second})
	if err != nil {
		b.Fatalf("open session on the simulator: %v", err)
	}
	b.Cleanup(s.Close)
	return s.Device
}

// BenchmarkReplay runs one two-step case end to end (preflight, start,
// acknowledgement, polling to the terminal state) on the simulator at time
// scale 200.
//
//	go test -run '^$' -bench Replay ./solopi/...
func BenchmarkReplay(b *testing.B) {
	benchReplay(b, "")
}

// BenchmarkReplayEvidence is BenchmarkReplay with --artifacts, the same
// directory every time (each run replaces the previous evidence set): the
// difference is the cost of collecting, redacting and writing evidence.
func BenchmarkReplayEvidence(b *testing.B) {
	benchReplay(b, filepath.Join(b.TempDir(), "evidence"))
}

// BenchmarkReplayEvidencePerf is BenchmarkReplayEvidence with --perf
// CPU,Memory,FPS and a budget it meets: the difference is the cost of the
// performance session (start, stop, pull, analysis, charts, budgets).
func BenchmarkReplayEvidencePerf(b *testing.B) {
	budget, err := perfstats.ParseBudgets("cpu.max=80,memory.max=300,fps.p10=45")
	if err != nil {
		b.Fatal(err)
	}
	benchReplay(b, filepath.Join(b.TempDir(), "evidence"), func(o *RunOptions) {
		o.Perf, o.PerfBudget, o.PerfSessions = []string{"CPU", "Memory", "FPS"}, budget, sessions.PerfRecorder{}
	})
}

// cpuTime is the process's user and system CPU time so far (the host and
// the in-process simulator together).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchReplay(b *testing.B, artifactsDir string, opts ...func(*RunOptions)) {
	d := benchSimDevice(b, 200)
	ctx := context.Background()
	c, err := casefile.Parse([]byte(`{"caseName":"bench","targetAppPackage":"com.example.counter","operationLog":{"steps":[{"operationMethod":{"actionEnum":"SLEEP","operationParam":{"text":"100"}}}]}}`))
	if err != nil {
		b.Fatal(err)
	}
	n, _, err := casefile.Normalize(c, casefile.NormalizeOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ImportCase(ctx, d, n, ImportOptions{Timeout: 10 * time.Second, PollInterval: 50 * time.Millisecond}); err != nil {
		b.Fatal(err)
	}
	o := RunOptions{CaseName: "bench", AckTimeout: 10 * time.Second, RunTimeout: 60 * time.Second, PollInterval: time.Second, ArtifactsDir: artifactsDir}
	for _, fn := range opts {
		fn(&o)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	defer func() {
		b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}()
	for i := 0; i < b.N; i++ {
		rep := RunReplay(ctx, d, o)
		if rep.ErrorCode != "" {
			b.Fatalf("run: %s %v", rep.ErrorCode, rep.Payload)
		}
		if artifactsDir != "" && (rep.Artifacts == nil || !rep.Artifacts.Complete) {
			b.Fatalf("evidence: %+v", rep.Artifacts)
		}
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/sim"
)

// BenchmarkRunBatch50 runs a 50-case run-batch with the built binary against
// the simulator at a high time scale and reports the CLI's own overhead per
// sub-run (wall time minus the simulated device time, converted to real
// time) and the binary's peak resident memory.
//
//	go test -run '^$' -bench RunBatch50 -benchtime 1x ./cmd/solopi/
func BenchmarkRunBatch50(b *testing.B) {
	const cases, scale = 50, 200
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		farm, env := startFarmB(b, scale)
		names := make([]string, cases)
		for j := range names {
			names[j] = fmt.Sprintf("bench-%02d", j+1)
			path := filepath.Join(b.TempDir(), names[j]+".json")
			text := strings.Replace(string(demoCase), `"caseName": "counter-smoke"`, `"caseName": "`+names[j]+`"`, 1)
			if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
				b.Fatal(err)
			}
			if r := runBinary(b, env, "case-import", "--file", path, "--replace"); r.code != 0 {
				b.Fatalf("import %s: %s", names[j], r.stdout)
			}
		}
		args := []string{"run-batch", "--continue-on-failure"}
		for _, n := range names {
			args = append(args, "--case", n)
		}
		cmd := exec.Command(binPath, args...)
		cmd.Env = append(os.Environ(), env...)
		var stdout strings.Builder
		cmd.Stdout = &stdout
		b.StartTimer()
		start := time.Now()
		err := cmd.Start()
		var peak int64
		if err == nil {
			peak = watchPeakRSS(cmd)
			err = cmd.Wait()
		}
		wall := time.Since(start)
		b.StopTimer()
		out := []byte(stdout.String())
		if err != nil {
			b.Fatalf("run-batch: %v %s", err, out)
		}
		var agg struct {
			Success bool `json:"success"`
			Results []struct {
				Run struct {
					DurationMs int64 `json:"durationMs"`
				} `json:"run"`
			} `json:"results"`
		}
		if err := json.Unmarshal(out, &agg); err != nil || !agg.Success || len(agg.Results) != cases {
			b.Fatalf("aggregate: %v %s", err, out)
		}
		var device time.Duration
		for _, r := range agg.Results {
			device += time.Duration(float64(r.Run.DurationMs)/scale) * time.Millisecond
		}
		overhead := (wall - device) / cases
		b.ReportMetric(float64(overhead.Microseconds())/1000, "overhead-ms/subrun")
		b.ReportMetric(float64(device.Microseconds())/1000/cases, "device-ms/subrun")
		b.ReportMetric(float64(wall.Milliseconds()), "wall-ms")
		if peak > 0 {
			b.ReportMetric(float64(peak)/1024, "peak-rss-MiB")
		}
		farm.Close()
	}
}

// watchPeakRSS samples the running command's VmHWM (its resident
// high-water mark) until it exits and returns the last value in KiB, 0
// where /proc is missing. The rusage of a child is no use here: on exec,
// Linux folds the forking parent's (the test binary's) peak into it.
func watchPeakRSS(cmd *exec.Cmd) int64 {
	path := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	var peak int64
	for {
		b, err := os.ReadFile(path)
		if err != nil {
			return peak
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				if kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64); err == nil && kb > peak {
					peak = kb
				}
			}
		}
		if strings.Contains(string(b), "State:\tZ") {
			return peak
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func startFarmB(b *testing.B, scale float64) (*sim.Farm, []string) {
	b.Helper()
	f, err := sim.StartFarm(b.Context(), sim.FarmOptions{TimeScale: scale, NoAdbd: true})
	if err != nil {
		b.Fatal(err)
	}
	if err := f.WaitReady(b.Context()); err != nil {
		b.Fatal(err)
	}
	return f, []string{fmt.Sprintf("ANDROID_ADB_SERVER_PORT=%d", f.Server().Port()), "ANDROID_SERIAL="}
}

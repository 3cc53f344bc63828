package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkTerminalDetection runs `solopi run` with the built binary against
// the simulator at time scale 1 (simulated time is wall time) and reports
// how long after the device published the terminal state (its finishedAt)
// the command had printed the result and exited: the median and worst of
// b.N runs.
//
//	go test -run '^$' -bench TerminalDetection -benchtime 15x ./cmd/solopi/
func BenchmarkTerminalDetection(b *testing.B) {
	_, env := startFarmB(b, 1)
	path := filepath.Join(b.TempDir(), "counter-smoke.json")
	if err := os.WriteFile(path, demoCase, 0o600); err != nil {
		b.Fatal(err)
	}
	if r := runBinary(b, env, "case-import", "--file", path, "--replace"); r.code != 0 {
		b.Fatalf("import: %s", r.stdout)
	}
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		cmd := exec.Command(binPath, "run", "--case", "counter-smoke")
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		done := time.Now()
		if err != nil {
			b.Fatalf("run: %v %s", err, out)
		}
		var res struct {
			State      string `json:"state"`
			FinishedAt int64  `json:"finishedAt"`
		}
		if err := json.Unmarshal(out, &res); err != nil || res.State != "passed" || res.FinishedAt == 0 {
			b.Fatalf("result: %v %s", err, out)
		}
		lat = append(lat, done.Sub(time.UnixMilli(res.FinishedAt)))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}

package report

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/solopi-dev/solopi/internal/counterphone"
)

// BenchmarkRender renders each kind of report from its evidence (files
// read, parsed and the HTML produced; nothing written).
func BenchmarkRender(b *testing.B) {
	dirs := map[string]string{}
	for _, k := range kinds {
		dirs[string(k.kind)] = filepath.Join("testdata", k.dir)
	}
	dirs[string(kindAgent)] = agentRun(b, "increase the counter to 3", counterphone.RunOptions{})
	for _, name := range []string{"run", "batch", "verify-run", "agent-run", "perf"} {
		b.Run(name, func(b *testing.B) {
			var size int
			for b.Loop() {
				out, _, err := render(dirs[name], Options{})
				if err != nil {
					b.Fatal(err)
				}
				size = len(out)
			}
			b.ReportMetric(float64(size), "bytes/report")
		})
	}
}

// BenchmarkBatch50 is the report of a 50-run batch (run-repeat --times
// 50): Render builds the batch page alone; Write also writes each run's
// report and publishes all 51 files.
func BenchmarkBatch50(b *testing.B) {
	run := copyTestdata(b, "batch-stopped")
	dir := filepath.Join(b.TempDir(), "batch-50")
	for i := 1; i <= 50; i++ {
		if err := os.CopyFS(filepath.Join(dir, fmt.Sprintf("%03d-counter-smoke", i)), os.DirFS(filepath.Join(run, "001-counter-smoke"))); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("render", func(b *testing.B) {
		var size int
		for b.Loop() {
			out, k, err := render(dir, Options{})
			if err != nil || k != kindBatch {
				b.Fatal(k, err)
			}
			size = len(out)
		}
		b.ReportMetric(float64(size), "bytes/report")
	})
	b.Run("write", func(b *testing.B) {
		for b.Loop() {
			if _, err := Write(dir, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

package report

import (
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
	dirs[string(KindAgent)] = agentRun(b, "increase the counter to 3", counterphone.RunOptions{})
	for _, name := range []string{"run", "batch", "verify-run", "agent-run", "perf"} {
		b.Run(name, func(b *testing.B) {
			var size int
			for b.Loop() {
				out, _, err := Render(dirs[name], Options{})
				if err != nil {
					b.Fatal(err)
				}
				size = len(out)
			}
			b.ReportMetric(float64(size), "bytes/report")
		})
	}
}

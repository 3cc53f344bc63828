package execution

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkRunMatrix is verify-run's host work per run of the matrix on a
// scripted phone that answers at once (plan copy, events, evidence files,
// hashing, judging): the host overhead on top of device time.
func BenchmarkRunMatrix(b *testing.B) {
	p := compileFixture(b, "counter-outcome-matrix")
	rememberCases(p)
	d, _ := ParseDecisions(readFixture(b, "counter-agent-decisions"), p)
	dir := b.TempDir()
	i := 0
	for b.Loop() {
		i++
		phone := &counterPhone{}
		if _, err := (&Engine{Runner: phone, Agent: phone, Decisions: d}).Run(context.Background(), p, filepath.Join(dir, "run", strconv.Itoa(i))); err != nil {
			b.Fatal(err)
		}
	}
}

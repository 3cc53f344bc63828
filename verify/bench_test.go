package verify

import (
	"context"
	"path/filepath"
	"testing"
)

// Benchmarks of the host-side work on the outcome matrix (5 scenarios, 12
// segments, 9 compiled cases).

func BenchmarkNormalize(b *testing.B) {
	data := readFixture(b, "counter-outcome-matrix")
	for b.Loop() {
		doc, err := ParseRequirement(data)
		if err != nil {
			b.Fatal(err)
		}
		n, err := Normalize(doc)
		if err != nil {
			b.Fatal(err)
		}
		_ = n.SourceFingerprint()
	}
}

func BenchmarkCompile(b *testing.B) {
	data := readFixture(b, "counter-outcome-matrix")
	for b.Loop() {
		doc, err := ParseRequirement(data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Compile(doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	data, err := MarshalPlan(compileFixture(b, "counter-outcome-matrix"))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, _, err := LoadPlan(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJudge(b *testing.B) {
	p := compileFixture(b, "counter-outcome-matrix")
	rememberCases(p)
	phone := &counterPhone{}
	d, _ := ParseDecisions(readFixture(b, "counter-agent-decisions"), p)
	out, err := (&Engine{Runner: phone, Agent: phone, Decisions: d}).Run(context.Background(), p, filepath.Join(b.TempDir(), "run"))
	if err != nil {
		b.Fatal(err)
	}
	_ = out
	rec := &RunRecord{ReportID: "r"}
	// Re-judge what the run recorded.
	for _, sc := range p.Scenarios {
		for _, seg := range sc.Segments {
			rec.Record(sc.ID, &SegmentOutcome{SegmentID: seg.ID, State: StatePassed, Evidence: judgeEvidence})
		}
	}
	for b.Loop() {
		_ = Judge(p, rec)
	}
}

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
		if _, err := (&Engine{Runner: phone, Agent: phone, Decisions: d}).Run(context.Background(), p, filepath.Join(dir, "run", string(rune('a'+i%26)), filepath.Base(b.Name())+itoa(int64(i)))); err != nil {
			b.Fatal(err)
		}
	}
}

package verify

import (
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
	rec := &RunRecord{ReportID: "r"}
	for _, sc := range p.Scenarios {
		for _, seg := range sc.Segments {
			rec.Record(sc.ID, &SegmentOutcome{SegmentID: seg.ID, State: StatePassed, Evidence: judgeEvidence})
		}
	}
	for b.Loop() {
		_ = Judge(p, rec)
	}
}

package artifacts

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
)

// evidenceSet writes what a verification run writes: a plan, per segment a
// handful of small JSON files two directories deep, an event log, a report.
func evidenceSet(b *testing.B, d *Dir) {
	body := []byte(`{"schema":"bench","value":"` + fmt.Sprint(make([]byte, 256)) + `"}` + "\n")
	if _, err := d.WriteFile("plan.json", "plan", body); err != nil {
		b.Fatal(err)
	}
	for s := range 8 {
		seg := "segments/seg-" + strconv.Itoa(s)
		if _, err := d.Mkdir(seg); err != nil {
			b.Fatal(err)
		}
		for _, name := range []string{"compiled-case.json", "import-receipt.json", "run-response.json", "replay/result.json"} {
			if _, err := d.WriteFile(seg+"/"+name, "bench", body); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := d.Append("events.jsonl", "events", []byte(`{"type":"segment"}`+"\n")); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := d.WriteFile("report.json", "report", body); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkEvidenceSet is one verification run's evidence (34 files) in a
// new directory, written without a manifest (as verify/execution does).
func BenchmarkEvidenceSet(b *testing.B) {
	root := b.TempDir()
	i := 0
	for b.Loop() {
		i++
		d, err := Open(filepath.Join(root, strconv.Itoa(i)), EvidenceNew)
		if err != nil {
			b.Fatal(err)
		}
		evidenceSet(b, d)
	}
}

// BenchmarkEvidenceSetManifest is the same set sealed by its manifest (as
// replay does): every file durable when WriteManifest returns.
func BenchmarkEvidenceSetManifest(b *testing.B) {
	root := b.TempDir()
	i := 0
	for b.Loop() {
		i++
		d, err := Open(filepath.Join(root, strconv.Itoa(i)), EvidenceNew)
		if err != nil {
			b.Fatal(err)
		}
		evidenceSet(b, d)
		if _, err := d.WriteManifest(Manifest{Kind: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
}

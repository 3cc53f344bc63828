package report

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/solopi-dev/solopi/fault"
)

// fuzzTargets are the evidence files a report parses, each in the
// directory that makes it part of a known kind.
var fuzzTargets = []struct{ base, file string }{
	{"run-failed", "result.json"},
	{"run-failed", "manifest.json"},
	{"run-failed", "case.json"},
	{"run-failed", "logcat.txt"},
	{"batch-stopped", "batch.json"},
	{"verify-run", "report.json"},
	{"verify-run", "plan.json"},
	{"verify-run", "events.jsonl"},
	{"verify-run", "timeline.json"},
	{"perf", "analysis.json"},
}

// FuzzRender: whatever an evidence file holds, rendering returns a report
// or a typed error, never a panic.
func FuzzRender(f *testing.F) {
	for i, t := range fuzzTargets {
		b, err := os.ReadFile(filepath.Join("testdata", t.base, t.file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), b)
	}
	f.Add(uint8(0), []byte(`{"state":"failed","results":[{"exceptionStep":"x","screenshotFiles":{"a":7}}]}`))
	f.Add(uint8(5), []byte(`{"scenarios":[{"scenarioId":"../..","segments":[{"segmentId":"../../etc"}]}],"evidence":[{"id":"e","path":"/etc/passwd"}]}`))
	// One copy of each evidence directory per fuzzing process, the fuzzed
	// file written into it and its original put back after each input: a
	// copy per input cost more than the render and kept the target to a
	// few inputs a second.
	dirs := map[string]string{}
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		tgt := fuzzTargets[int(which)%len(fuzzTargets)]
		dir, ok := dirs[tgt.base]
		if !ok {
			dir = copyTestdataTo(t, tgt.base, filepath.Join(root, tgt.base))
			dirs[tgt.base] = dir
		}
		path := filepath.Join(dir, tgt.file)
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := os.WriteFile(path, orig, 0o644); err != nil {
				t.Fatal(err)
			}
		}()
		_, _, err = render(dir, Options{})
		var fe *fault.Error
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("untyped error %T: %v", err, err)
		}
	})
}

// FuzzTrajectory: any trajectory renders or fails with a typed error.
func FuzzTrajectory(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "verify-run", "segments", "segment-explore-increment-test-01-c93e7a1f06d2", "trajectory.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"schema_version":"1.3","run_id":"x","events":[{"step":1,"type":"action","payload":{"action":{"action":"Swipe"},"fields":{"start":{"device_coordinate":[0,0]},"end":{"device_coordinate":[0,0]}}}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "t.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := render(dir, Options{Trajectory: "t.json"})
		var fe *fault.Error
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("untyped error %T: %v", err, err)
		}
	})
}

// FuzzAgentVideo: whatever video.json beside a trajectory holds (its start,
// part length, files), the agent report renders or fails typed.
func FuzzAgentVideo(f *testing.F) {
	traj, err := os.ReadFile(filepath.Join("testdata", "verify-run", "segments", "segment-explore-increment-test-01-c93e7a1f06d2", "trajectory.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"mode":"always","kept":true,"parts":2,"durationMs":1,"files":[{"path":"video-1.mp4"},{"path":"video-2.mp4"}],"startedAt":"2026-01-01T00:00:00Z","partSeconds":0}`))
	f.Add([]byte(`{"files":[{"path":"../../etc/passwd"},{"path":"video.mp4"}],"startedAt":"9999-12-31T23:59:59.999999999Z","partSeconds":-1e308}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		for name, b := range map[string][]byte{"t.json": traj, "video.json": data, "video.mp4": {0}, "video-1.mp4": {0}} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, _, err := render(dir, Options{Trajectory: "t.json"})
		var fe *fault.Error
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("untyped error %T: %v", err, err)
		}
	})
}

package sessions

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// PerfRecorder is how run --perf drives a recording; these tests go through
// it as replay does: start, stop by exactly our id, pull into an evidence
// directory, with the device's saved directory damaged in the ways a real
// phone (or another tool on it) can damage it.

// recorded starts and stops a whole-device recording through the recorder
// and returns its id and the stopped snapshot.
func recorded(t *testing.T, f *simPhone) (string, map[string]any) {
	t.Helper()
	ctx := context.Background()
	id, err := PerfRecorder{}.Start(ctx, f.device(), "", []string{"CPU", "FPS"}, ssFast.Interval)
	if err != nil || id == "" {
		t.Fatalf("start: %q %v", id, err)
	}
	stopped, err := PerfRecorder{}.Stop(ctx, f.device(), id, ssFast.Timeout, ssFast.Interval)
	if err != nil {
		t.Fatalf("stop: %v", err)
	}
	return id, stopped
}

// evidenceDir is a fresh evidence directory.
func evidenceDir(t *testing.T) *artifacts.Dir {
	t.Helper()
	dir, err := artifacts.Open(filepath.Join(t.TempDir(), "ev"), artifacts.EvidenceNew)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// savedFiles are the names in the device directory the stop saved, in the
// order the host pulls them.
func savedFiles(t *testing.T, f *simPhone, stopped map[string]any) (string, []string) {
	t.Helper()
	dir := core.NormPath(stopped["outputPath"].(string))
	infos, err := f.dev.Phone.FS().ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, fi := range infos {
		names = append(names, fi.Name())
	}
	slices.Sort(names)
	if len(names) < 2 {
		t.Fatalf("the device saved %v", names)
	}
	return dir, names
}

func (p *simPhone) writeFile(name string, data []byte) {
	p.t.Helper()
	if err := p.dev.Phone.FS().WriteFile(name, 0o660, time.Now(), bytes.NewReader(data)); err != nil {
		p.t.Fatal(err)
	}
}

func TestPerfRecorderRecordsStopsAndPulls(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	id, stopped := recorded(t, f)
	if f.mutationCount("action=start", "targetApp=-", "items=CPU%2CFPS", "sessionId="+id) != 1 ||
		f.mutationCount("action=stop", "sessionId="+id) != 1 {
		t.Fatalf("mutations = %v", f.dev.Mutations())
	}
	// The device's own snapshot: perf-stop's host fields are not part of it.
	if stopped["state"] != "stopped" || stopped["sessionId"] != id || stopped["stopRequests"] != nil {
		t.Fatalf("stopped = %v", stopped)
	}
	// The status of exactly our id is the stopped snapshot; another id is
	// a mismatch (exit 2), never another session's snapshot as ours.
	res, err := ssOut(PerfStatus(context.Background(), f.device(), id))
	if m := ssExpect(t, "perf-status", res, err, passed); m["state"] != "stopped" || m["sessionId"] != id {
		t.Fatalf("status = %v", m)
	}
	_, err = PerfStatus(context.Background(), f.device(), "someone-else")
	ssWantCode(t, ssExpect(t, "perf-status", nil, err, fault.Failed), fault.CodeSessionMismatch)

	remote, names := savedFiles(t, f, stopped)
	dir := evidenceDir(t)
	files, err := PerfRecorder{}.Pull(context.Background(), f.device(), stopped, id, dir, "perf")
	if err != nil || len(files) != len(names) {
		t.Fatalf("pull = %v, %v; the device saved %v", files, err, names)
	}
	for i, fe := range files {
		want := f.file(remote + "/" + names[i])
		sum := sha256.Sum256(want)
		got, rerr := os.ReadFile(filepath.Join(dir.Root(), "perf", names[i]))
		if fe.Path != "perf/"+names[i] || fe.Size != int64(len(want)) || fe.SHA256 != hex.EncodeToString(sum[:]) ||
			fe.Source != stopped["outputPath"].(string)+"/"+names[i] || rerr != nil || !bytes.Equal(got, want) {
			t.Fatalf("file %d = %+v (local %v), want %s", i, fe, rerr, names[i])
		}
	}
}

func TestPerfRecorderRefusals(t *testing.T) {
	t.Parallel()
	f := newSimPhone(t)
	ctx := context.Background()
	// An item the device does not list starts nothing.
	id, err := PerfRecorder{}.Start(ctx, f.device(), "com.example.counter", []string{"CPU", "GPU"}, ssFast.Interval)
	if id != "" || fault.CodeOf(err) != fault.CodeUnsupportedItems || len(f.dev.Mutations()) != 0 {
		t.Fatalf("unsupported item: %q %v %v", id, err, f.dev.Mutations())
	}
	// A malformed id is refused locally, an id the device does not know
	// is a mismatch: neither sends a stop.
	if st, err := (PerfRecorder{}).Stop(ctx, f.device(), "../x", time.Second, ssFast.Interval); st != nil || fault.CodeOf(err) != fault.CodeInvalidSessionID {
		t.Fatalf("stop of a malformed id: %v %v", st, err)
	}
	if st, err := (PerfRecorder{}).Stop(ctx, f.device(), "not-ours", time.Second, ssFast.Interval); st != nil || fault.CodeOf(err) != fault.CodeSessionMismatch {
		t.Fatalf("stop of an unknown id: %v %v", st, err)
	}
	if f.mutationCount("action=stop") != 0 {
		t.Fatalf("a refused stop was sent: %v", f.dev.Mutations())
	}
}

// TestPerfRecorderPullFaults: whatever is wrong with the saved directory,
// the pull fails with a stable code, keeps what it pulled before the fault
// and publishes nothing it did not check.
func TestPerfRecorderPullFaults(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// damage edits the device (or the evidence, or the snapshot)
		// after the stop and returns the context of the pull.
		damage    func(t *testing.T, f *simPhone, remote string, names []string, stopped map[string]any, dir *artifacts.Dir) context.Context
		kind      fault.Kind
		code      string
		keptFiles int // files the failed pull returns
	}{
		{"every CSV empty", func(t *testing.T, f *simPhone, remote string, names []string, _ map[string]any, _ *artifacts.Dir) context.Context {
			for _, n := range names {
				f.writeFile(remote+"/"+n, nil)
			}
			return context.Background()
		}, fault.Transport, fault.CodeArtifactMissing, -1},
		{"directory gone", func(t *testing.T, f *simPhone, remote string, _ []string, _ map[string]any, _ *artifacts.Dir) context.Context {
			if err := f.dev.Phone.FS().RemoveAll(remote); err != nil {
				t.Fatal(err)
			}
			return context.Background()
		}, fault.Transport, fault.CodeArtifactMissing, 0},
		{"a subdirectory", func(t *testing.T, f *simPhone, remote string, _ []string, _ map[string]any, _ *artifacts.Dir) context.Context {
			if err := f.dev.Phone.FS().Mkdir(remote+"/nested", 0o770); err != nil {
				t.Fatal(err)
			}
			return context.Background()
		}, fault.Transport, fault.CodeUnsafeDevicePath, 0},
		{"a hidden file", func(t *testing.T, f *simPhone, remote string, _ []string, _ map[string]any, _ *artifacts.Dir) context.Context {
			f.writeFile(remote+"/.nomedia", nil)
			return context.Background()
		}, fault.Transport, fault.CodeUnsafeDevicePath, 0},
		{"too many files", func(t *testing.T, f *simPhone, remote string, _ []string, _ map[string]any, _ *artifacts.Dir) context.Context {
			for i := range 512 {
				f.writeFile(remote+"/extra-"+strconv.Itoa(i)+".csv", []byte("t,v\n"))
			}
			return context.Background()
		}, fault.Transport, fault.CodeUnsafeDevicePath, 0},
		{"another session's directory", func(t *testing.T, _ *simPhone, _ string, _ []string, stopped map[string]any, _ *artifacts.Dir) context.Context {
			stopped["outputPath"] = path.Join(path.Dir(stopped["outputPath"].(string)), "performance-someone-else")
			return context.Background()
		}, fault.Transport, fault.CodeUnsafeDevicePath, 0},
		{"a file grows while pulling", func(t *testing.T, f *simPhone, remote string, names []string, _ map[string]any, _ *artifacts.Dir) context.Context {
			// The first file's transfer check runs after its pull: the
			// second file changes after it was listed.
			t.Cleanup(f.dev.OnCommand(func(c string) {
				if strings.HasPrefix(c, "sha256sum") && strings.Contains(c, names[0]) {
					f.writeFile(remote+"/"+names[1], append(f.file(remote+"/"+names[1]), "9,9\n"...))
				}
			}))
			return context.Background()
		}, fault.Transport, fault.CodeArtifactMismatch, 1},
		{"evidence path taken", func(t *testing.T, _ *simPhone, _ string, _ []string, _ map[string]any, dir *artifacts.Dir) context.Context {
			if _, err := dir.WriteFile("perf", "test", []byte("not a directory")); err != nil {
				t.Fatal(err)
			}
			return context.Background()
		}, fault.Invalid, fault.CodeOutputWriteFailed, 0},
		{"interrupted while listing", func(t *testing.T, f *simPhone, _ string, _ []string, _ map[string]any, _ *artifacts.Dir) context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			t.Cleanup(f.dev.OnCommand(func(c string) {
				if strings.HasPrefix(c, "ls ") {
					cancel()
				}
			}))
			return ctx
		}, fault.Interrupted, fault.CodeInterrupted, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newSimPhone(t)
			id, stopped := recorded(t, f)
			remote, names := savedFiles(t, f, stopped)
			dir := evidenceDir(t)
			ctx := tc.damage(t, f, remote, names, stopped, dir)
			files, err := PerfRecorder{}.Pull(ctx, f.device(), stopped, id, dir, "perf")
			e := fault.From(err)
			if err == nil || e.Kind != tc.kind || e.Code != tc.code {
				t.Fatalf("pull = %v, %v; want %v %s", files, err, tc.kind, tc.code)
			}
			want := tc.keptFiles
			if want < 0 {
				want = len(names) // all pulled, none usable
			}
			if len(files) != want {
				t.Fatalf("kept %d files, want %d: %v", len(files), want, files)
			}
			for _, fe := range files {
				if _, err := os.Stat(filepath.Join(dir.Root(), filepath.FromSlash(fe.Path))); err != nil {
					t.Fatalf("a kept file is not in the evidence: %v", err)
				}
			}
		})
	}
}

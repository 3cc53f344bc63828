package testwait

import (
	"flag"
	"io"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// The package's own tests run through Main, as the packages using it do.
func TestMain(m *testing.M) { Main(m) }

func TestParallelRaisesTheDefaultOnly(t *testing.T) {
	t.Parallel()
	flags := func(args ...string) (*flag.FlagSet, *int) {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		p := fs.Int("test.parallel", runtime.GOMAXPROCS(0), "")
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return fs, p
	}
	fs, p := flags()
	raiseParallel(fs, 64)
	if *p != 64 {
		t.Fatalf("-parallel is %d after raising it to 64", *p)
	}
	fs, p = flags()
	raiseParallel(fs, 1) // never below GOMAXPROCS
	if *p != runtime.GOMAXPROCS(0) {
		t.Fatalf("-parallel is %d, GOMAXPROCS is %d", *p, runtime.GOMAXPROCS(0))
	}
	fs, p = flags("-test.parallel=3")
	raiseParallel(fs, 64)
	if *p != 3 {
		t.Fatalf("an explicit -parallel=3 became %d", *p)
	}
	// The command line's own: whatever it holds, Parallel leaves it valid.
	Parallel()
	if n, err := strconv.Atoi(flag.Lookup("test.parallel").Value.String()); err != nil || n < 1 {
		t.Fatalf("-parallel is %v", flag.Lookup("test.parallel").Value)
	}
}

// The scratch directory moves to memory only where that is a tmpfs with
// room, and is removed afterwards; a TMPDIR the caller set stays.
func TestScratch(t *testing.T) {
	// Not parallel: it changes TMPDIR. The package's own TestMain runs
	// through Main, so TMPDIR may already be the scratch directory.
	before, had := os.LookupEnv("TMPDIR")
	os.Unsetenv("TMPDIR")
	defer func() {
		if had {
			os.Setenv("TMPDIR", before)
		}
	}()
	remove := Scratch()
	dir := os.Getenv("TMPDIR")
	if memoryFS("/dev/shm", memoryScratchRoom) != (dir != "") {
		t.Fatalf("TMPDIR %q with /dev/shm usable %v", dir, memoryFS("/dev/shm", memoryScratchRoom))
	}
	remove()
	if dir != "" {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("the scratch directory %s is still there: %v", dir, err)
		}
	}
	if os.Getenv("TMPDIR") != "" {
		t.Fatal("TMPDIR is still set")
	}
	os.Setenv("TMPDIR", "/somewhere")
	Scratch()()
	if got := os.Getenv("TMPDIR"); got != "/somewhere" {
		t.Fatalf("a caller's TMPDIR became %q", got)
	}
	os.Unsetenv("TMPDIR")
	if memoryFS("/proc", 0) {
		t.Fatal("/proc counted as a memory file system")
	}
	// A root where no directory can be made (a file on the memory file
	// system) leaves the default.
	if memoryFS("/dev/shm", memoryScratchRoom) {
		f, err := os.CreateTemp("/dev/shm", "solopi-scratch-test-")
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		defer os.Remove(f.Name())
		old := scratchRoot
		scratchRoot = f.Name()
		defer func() { scratchRoot = old }()
		Scratch()()
		if got := os.Getenv("TMPDIR"); got != "" {
			t.Fatalf("TMPDIR %q under a file", got)
		}
	}
}

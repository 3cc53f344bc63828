package testwait

import (
	"flag"
	"io"
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

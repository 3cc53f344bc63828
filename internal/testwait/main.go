package testwait

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// Main is the TestMain of a package whose tests mostly wait (on a
// simulated device's clock, on the processes they start, on River's
// schedulers) rather than compute: it runs eight of them at once unless
// -test.parallel says otherwise. -parallel's default, GOMAXPROCS, would
// leave a 2-core machine idle while two of them sleep (verify/onphone:
// 14.7 s at 2, 6.0 s at 8, the same CPU time). Their scratch files go to
// memory where the machine has it (Scratch).
func Main(m *testing.M) {
	Parallel()
	remove := Scratch()
	code := m.Run()
	remove()
	os.Exit(code)
}

// parallel is how many tests Main runs at once by default.
const parallel = 8

// Parallel raises -parallel as Main does, for a TestMain that does more
// before m.Run.
func Parallel() {
	flag.Parse() // the testing flags; m.Run parses them again, harmlessly
	raiseParallel(flag.CommandLine, parallel)
}

// raiseParallel sets fs's test.parallel to max(n, GOMAXPROCS) unless it
// was given.
func raiseParallel(fs *flag.FlagSet, n int) {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = fs.Set("test.parallel", strconv.Itoa(max(n, runtime.GOMAXPROCS(0))))
	}
}

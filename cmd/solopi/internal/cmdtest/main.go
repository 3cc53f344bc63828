package cmdtest

import (
	"flag"
	"os"
	"strconv"
	"testing"
)

// parallel is how many tests of a command package run at once unless
// -test.parallel says otherwise: they mostly wait on simulated device time
// and on the processes they start, not on the two cores.
const parallel = 4

// Main runs a command package's tests with Parallel tests at once (an
// explicit -parallel wins).
func Main(m *testing.M) {
	RaiseParallel()
	os.Exit(m.Run())
}

// RaiseParallel sets -test.parallel to Parallel unless it was given: for a
// TestMain that does more than Main.
func RaiseParallel() {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(parallel))
	}
}

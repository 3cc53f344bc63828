package testwait

import (
	"flag"
	"runtime"
	"strconv"
)

// Parallel raises -parallel to at least n unless the command line set it.
// Call it from TestMain, before m.Run, in packages whose tests mostly wait —
// on a simulated device's clock, on River's schedulers — rather than
// compute: -parallel's default, GOMAXPROCS, would leave a 2-core machine
// idle while two of them sleep.
func Parallel(n int) {
	flag.Parse() // the testing flags; m.Run parses them again, harmlessly
	raiseParallel(flag.CommandLine, n)
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

package testwait

import (
	"flag"
	"testing"
)

func TestParallelRaisesTheDefaultOnly(t *testing.T) {
	t.Parallel()
	f := flag.Lookup("test.parallel")
	old := f.Value.String()
	t.Cleanup(func() { _ = flag.Set("test.parallel", old) })
	Parallel(64)
	if f.Value.String() != "64" {
		t.Fatalf("-parallel is %s after Parallel(64)", f.Value)
	}
	// Now the value is set: an explicit value wins.
	Parallel(2)
	if f.Value.String() != "64" {
		t.Fatalf("-parallel is %s after a second Parallel", f.Value)
	}
}

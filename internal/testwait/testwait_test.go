package testwait

import (
	"testing"
	"time"
)

func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	t.Parallel()
	n := 0
	Until(t, time.Second, "three checks", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Fatalf("checked %d times, want 3", n)
	}
}

// failing records Fatalf instead of ending the test.
type failing struct {
	testing.TB
	msg string
}

func (f *failing) Helper() {}
func (f *failing) Fatalf(format string, args ...any) {
	f.msg = format
	panic(f)
}

func TestUntilFailsAfterTheTimeout(t *testing.T) {
	t.Parallel()
	f := &failing{TB: t}
	defer func() {
		if r := recover(); r != f || f.msg == "" {
			t.Fatalf("Until did not fail the test: %v", r)
		}
	}()
	Until(f, 20*time.Millisecond, "never", func() bool { return false })
}

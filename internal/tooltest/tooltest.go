// Package tooltest finds the programs a test drives (bash, zsh, fish).
// Without one a test skips, except under CI=true, where .ci/run installs
// them and a missing one is a failure.
package tooltest

import (
	"os"
	"os/exec"
	"testing"
)

// Look returns the path of the program name.
func Look(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed (.ci/run installs it): %v", name, err)
		}
		t.Skipf("%s is not installed: %v", name, err)
	}
	return p
}

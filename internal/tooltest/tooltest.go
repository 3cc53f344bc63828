// Package tooltest is the one rule for a test whose tool or facility is
// missing (bash, zsh, fish, adb, chromium, PostgreSQL, a pseudo-terminal,
// sysfs, chattr): outside CI the test skips; under CI=true, where .ci/run
// installs and starts all of them, a missing one is a failure, so a skip can
// never hide work CI was meant to check.
package tooltest

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// Missing ends the test because what it needs is not there: t.Fatal under
// CI=true, t.Skip otherwise. The message says what is missing and how to
// get it.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI=true: .ci/run provides it, so it cannot be skipped)", msg)
		return
	}
	t.Skipf("%s (skipped outside CI)", msg)
}

// Look returns the path of the program name.
func Look(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, "%s is not installed: %v", name, err)
	}
	return p
}

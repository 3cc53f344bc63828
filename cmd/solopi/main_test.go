package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdtest"
	"github.com/solopi-dev/solopi/internal/testwait"
)

// binPath is the solopi binary the end-to-end tests run: this test binary
// itself under the name solopi (a symlink), which runs main instead of the
// tests when asTheBinary is in its environment. The tests see the real
// binary's stdout, exit codes and signals; a separate `go build` of the
// same code cost every fresh checkout a second link of it.
var binPath string

// asTheBinary, set in the environment of every process the tests start,
// makes this test binary be solopi.
const asTheBinary = "SOLOPI_TEST_RUN_AS_SOLOPI"

func TestMain(m *testing.M) {
	if os.Getenv(asTheBinary) == "1" {
		main()
		return
	}
	// Most of these tests wait on the processes they start (a worker's
	// lease to expire, River's leader election, a device budget to run
	// out) rather than compute: twice the command packages' default.
	testwait.Parallel()
	removeScratch := testwait.Scratch()
	dir, err := os.MkdirTemp("", "solopi-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	self, err := os.Executable()
	if err == nil {
		binPath = filepath.Join(dir, "solopi")
		err = os.Symlink(self, binPath)
	}
	if err == nil {
		err = os.Setenv(asTheBinary, "1")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "the solopi binary:", err)
		os.Exit(1)
	}
	// case-import records and run reads the user cache (solopi/cases):
	// the tests, in process and through the binary, keep theirs here. The
	// Go build cache stays where it was (tests that run go build).
	if os.Getenv("GOCACHE") == "" {
		if real, err := os.UserCacheDir(); err == nil {
			os.Setenv("GOCACHE", filepath.Join(real, "go-build"))
		}
	}
	if err := os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	removeScratch()
	os.Exit(code)
}

// cliRun is one finished invocation of the built binary.
type cliRun struct {
	stdout, stderr []byte
	code           int
}

// runBinary runs the built solopi with args and extra environment entries.
func runBinary(t testing.TB, extraEnv []string, args ...string) cliRun {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Env = append(os.Environ(), extraEnv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return cliRun{stdout: out.Bytes(), stderr: errb.Bytes(), code: exitCode(t, args, err)}
}

// exitCode is the exit code of a finished run of the binary.
func exitCode(t testing.TB, args []string, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatalf("run solopi %v: %v", args, err)
	return -1
}

// inProc runs the whole app in process, without a device.
func inProc(t testing.TB, args ...string) cliRun {
	t.Helper()
	c := cmdtest.New(t, commands, nil)
	c.NoDevice = true
	r := c.Run(args...)
	return cliRun{stdout: r.Stdout, stderr: r.Stderr, code: r.Code}
}

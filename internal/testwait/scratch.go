package testwait

import (
	"os"
	"path/filepath"
)

// memoryScratchRoom is the free space a memory file system must have to
// hold the tests' scratch files (their evidence directories, built
// binaries' outputs, SQLite stores): far more than a package writes.
const memoryScratchRoom = 4 << 30

// Scratch points this test binary's scratch directory (TMPDIR: t.TempDir,
// os.MkdirTemp and the processes the tests start) at a fresh directory on
// /dev/shm when that is a memory file system with room to spare, and
// returns what removes it. Creating a file on the project machines' ext4
// root costs up to 1 ms of kernel time against 6 µs on tmpfs, and these
// tests create tens of thousands of evidence files: cmd/solopi's system
// time went from 14.5 s to 9.7 s. A TMPDIR the caller set is kept, and
// anywhere else the default stays.
func Scratch() (remove func()) {
	remove = func() {}
	if os.Getenv("TMPDIR") != "" || !memoryFS(scratchRoot, memoryScratchRoom) {
		return remove
	}
	dir, err := os.MkdirTemp(scratchRoot, "solopi-test-")
	if err == nil {
		// As /tmp is: tests run binaries as another user (nobody) from
		// their own directories in it.
		err = os.Chmod(dir, 0o1777)
	}
	if err != nil {
		os.RemoveAll(dir)
		return remove
	}
	os.Setenv("TMPDIR", dir) // a valid name: it cannot fail
	return func() {
		os.Unsetenv("TMPDIR")
		os.RemoveAll(filepath.Clean(dir))
	}
}

// scratchRoot is where Scratch looks for memory (a variable for its test).
var scratchRoot = "/dev/shm"

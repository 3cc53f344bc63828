package testwait

import "syscall"

// From linux/magic.h and statfs(2): tmpfs's f_type, and the mount flag
// that forbids executing files (the tests run binaries they build there).
const (
	tmpfsMagic = 0x01021994
	stNoExec   = 0x8
)

// memoryFS reports whether dir is a tmpfs that allows executables and has
// at least room bytes free.
func memoryFS(dir string, room uint64) bool {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil || st.Type != tmpfsMagic || st.Flags&stNoExec != 0 {
		return false
	}
	return st.Bavail*uint64(st.Bsize) >= room
}

package core

// Device paths and times of the app's files.

import (
	"path"
	"strings"
	"time"
)

// NormPath maps /sdcard to /storage/emulated/0 and cleans the path, like
// getCanonicalPath for the simulator's symlink-free file system.
func NormPath(p string) string {
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // relative to the app's cwd "/"
	}
	p = path.Clean(p)
	if p == "/sdcard" || strings.HasPrefix(p, "/sdcard/") {
		p = "/storage/emulated/0" + strings.TrimPrefix(p, "/sdcard")
	}
	return p
}

func Millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// RecordsRootLocked is <solopiDir>/records (canonical).
func (a *App) RecordsRootLocked() string { return a.SolopiDirLocked() + "/records" }

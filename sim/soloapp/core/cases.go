package core

import (
	"path"
	"strings"
)

// normPath maps /sdcard to /storage/emulated/0 and cleans the path, like
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

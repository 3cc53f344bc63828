package devicefake

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
	"time"
)

// FS is a device's in-memory file system, safe for concurrent use. Paths
// under /sdcard/ are the same files as under /storage/emulated/0/.
type FS struct {
	mu    sync.Mutex
	files map[string][]byte
}

// NewFS returns an empty file system.
func NewFS() *FS { return &FS{files: map[string][]byte{}} }

// Canon maps the /sdcard shell form onto the canonical storage path.
func Canon(p string) string {
	if rest, ok := strings.CutPrefix(p, "/sdcard/"); ok {
		return "/storage/emulated/0/" + rest
	}
	return p
}

// Get returns a copy of a file.
func (f *FS) Get(p string) ([]byte, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.files[Canon(p)]
	return append([]byte(nil), b...), ok
}

// Has reports whether a file exists.
func (f *FS) Has(p string) bool { _, ok := f.Get(p); return ok }

// Put writes a file.
func (f *FS) Put(p string, b []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files[Canon(p)] = append([]byte(nil), b...)
}

// Append appends to a file.
func (f *FS) Append(p string, b []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files[Canon(p)] = append(f.files[Canon(p)], b...)
}

// Delete removes a file.
func (f *FS) Delete(p string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.files, Canon(p))
}

// Take reads a file and removes it.
func (f *FS) Take(p string) ([]byte, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.files[Canon(p)]
	delete(f.files, Canon(p))
	return b, ok
}

// Paths lists every file, sorted.
func (f *FS) Paths() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.files))
	for p := range f.files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// List names the files directly in dir, sorted.
func (f *FS) List(dir string) []string {
	dir = Canon(dir)
	var names []string
	for _, p := range f.Paths() {
		if path.Dir(p) == dir {
			names = append(names, path.Base(p))
		}
	}
	return names
}

// FileInfo describes a file of size bytes, or a directory, modified at
// mtime.
func FileInfo(name string, size int64, dir bool, mtime time.Time) fs.FileInfo {
	return fileInfo{name: name, size: size, dir: dir, mtime: mtime}
}

type fileInfo struct {
	name  string
	size  int64
	dir   bool
	mtime time.Time
}

func (i fileInfo) Name() string { return i.name }
func (i fileInfo) Size() int64  { return i.size }
func (i fileInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i fileInfo) ModTime() time.Time { return i.mtime }
func (i fileInfo) IsDir() bool        { return i.dir }
func (i fileInfo) Sys() any           { return nil }

// fsTime is when every file of an FS was modified.
var fsTime = time.Unix(1700000000, 0)

// Stat describes a file, or a directory that holds files.
func (f *FS) Stat(remote string) (fs.FileInfo, error) {
	p := Canon(remote)
	if b, ok := f.Get(p); ok {
		return FileInfo(path.Base(p), int64(len(b)), false, fsTime), nil
	}
	for _, k := range f.Paths() {
		if strings.HasPrefix(k, p+"/") {
			return FileInfo(path.Base(p), 0, true, fsTime), nil
		}
	}
	return nil, fmt.Errorf("fake: stat %s: %w", remote, fs.ErrNotExist)
}

// Shell answers the file commands the host runs (args are the command's
// words): sha256sum, test -f/-e/! -e, stat -c %s, rm -f --, mkdir -p and
// ls. ok=false for anything else.
func (f *FS) Shell(args []string) (r Reply, ok bool) {
	if len(args) == 0 {
		return Reply{}, false
	}
	exit := func(b bool) Reply {
		if b {
			return Reply{}
		}
		return Reply{Code: 1}
	}
	switch {
	case args[0] == "sha256sum" && len(args) == 2:
		b, ok := f.Get(args[1])
		if !ok {
			return Reply{Stderr: "sha256sum: " + args[1] + ": No such file or directory\n", Code: 1}, true
		}
		sum := sha256.Sum256(b)
		return Reply{Stdout: hex.EncodeToString(sum[:]) + "  " + args[1] + "\n"}, true
	case args[0] == "test" && len(args) == 3 && (args[1] == "-f" || args[1] == "-e"):
		return exit(f.Has(args[2])), true
	case args[0] == "test" && len(args) == 4 && args[1] == "!" && args[2] == "-e":
		return exit(!f.Has(args[3])), true
	case args[0] == "stat" && len(args) == 4 && args[1] == "-c" && args[2] == "%s":
		b, ok := f.Get(args[3])
		if !ok {
			return Reply{Stderr: "stat: No such file", Code: 1}, true
		}
		return Reply{Stdout: fmt.Sprintf("%d\n", len(b))}, true
	case args[0] == "rm" && len(args) == 4 && args[1] == "-f" && args[2] == "--":
		f.Delete(args[3])
		return Reply{}, true
	case args[0] == "mkdir" && len(args) >= 2 && args[1] == "-p":
		return Reply{}, true
	case args[0] == "ls" && len(args) >= 2:
		names := f.List(args[len(args)-1])
		return Reply{Stdout: ".\n..\n" + strings.Join(names, "\n") + "\n"}, true
	}
	return Reply{}, false
}

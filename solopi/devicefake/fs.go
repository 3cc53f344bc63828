package devicefake

import (
	"bytes"
	"errors"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/solopi-dev/solopi/sim/android"
	"github.com/solopi-dev/solopi/sim/android/vfs"
)

// FS is the fake device's file system: the simulated phone's, with the
// helpers tests use to plant and inspect files. Paths under /sdcard/ are
// the same files as under /storage/emulated/0/.
type FS struct {
	phone *android.Phone
}

// Canon maps the /sdcard shell form onto the canonical storage path.
func Canon(p string) string {
	if rest, ok := strings.CutPrefix(p, "/sdcard/"); ok {
		return "/storage/emulated/0/" + rest
	}
	return p
}

// Get returns a copy of a file.
func (f *FS) Get(p string) ([]byte, bool) {
	b, err := f.phone.FS().ReadFile(Canon(p))
	return b, err == nil
}

// Has reports whether a file exists.
func (f *FS) Has(p string) bool {
	st, err := f.phone.Stat(Canon(p))
	return err == nil && !st.IsDir()
}

// Put writes a file, creating its directories.
func (f *FS) Put(p string, b []byte) {
	p = Canon(p)
	if err := f.phone.FS().MkdirAll(path.Dir(p), 0o755); err != nil {
		panic("devicefake: " + err.Error())
	}
	if err := f.phone.WriteFile(p, 0o644, f.phone.Clock().Now(), bytes.NewReader(b)); err != nil {
		panic("devicefake: " + err.Error())
	}
}

// Append appends to a file.
func (f *FS) Append(p string, b []byte) {
	old, _ := f.Get(p)
	f.Put(p, append(old, b...))
}

// Delete removes a file.
func (f *FS) Delete(p string) { _ = f.phone.FS().Remove(Canon(p)) }

// Take reads a file and removes it.
func (f *FS) Take(p string) ([]byte, bool) {
	b, ok := f.Get(p)
	if ok {
		f.Delete(p)
	}
	return b, ok
}

// Paths lists every file under the shared and temporary storage (where the
// host and the fake SoloPi write), sorted.
func (f *FS) Paths() []string {
	var out []string
	var walk func(dir string)
	walk = func(dir string) {
		entries, err := f.phone.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			p := path.Join(dir, e.Name())
			if e.IsDir() {
				walk(p)
			} else {
				out = append(out, p)
			}
		}
	}
	for _, root := range []string{vfs.ExternalStorage, "/data/local/tmp"} {
		walk(root)
	}
	sort.Strings(out)
	return out
}

// List names the files directly in dir, sorted.
func (f *FS) List(dir string) []string {
	entries, err := f.phone.ReadDir(Canon(dir))
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}

// Stat describes a file or directory.
func (f *FS) Stat(remote string) (fs.FileInfo, error) {
	st, err := f.phone.Stat(Canon(remote))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return st, err
}

// FileInfo describes a file of size bytes, or a directory, modified at
// mtime (for fakes of other layers that answer Stat themselves).
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

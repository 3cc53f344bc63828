// Package vfs is the simulated phone's in-memory file system: external
// storage with its /sdcard aliases, /data/local/tmp, and the read-only rest
// of the tree, with the permissions adb's shell user sees.
//
// It is separate from the phone because it knows nothing of apps, windows
// or input: the phone, the shell's file commands and the adb sync service
// all reach the same FS through this small API.
package vfs

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/solopi-dev/solopi/clock"
)

// Canonical storage paths. The shell form /sdcard is an alias of
// ExternalStorage, as on a real device.
const (
	ExternalStorage = "/storage/emulated/0"
	shellStorage    = "/sdcard"
	LocalTmp        = "/data/local/tmp"
)

// storageAliases map alternative spellings of the primary external storage
// to the canonical one.
var storageAliases = []string{shellStorage, "/storage/self/primary", "/mnt/sdcard"}

// FS is the phone's in-memory file system. Only external storage and
// /data/local/tmp are writable, as for adb's shell user. Paths are
// canonicalized, so /sdcard/x and /storage/emulated/0/x are the same file.
// File contents are immutable byte slices replaced on write, so an open
// reader keeps a consistent snapshot while somebody rewrites the file.
type FS struct {
	clk  clock.Clock
	mu   sync.RWMutex
	root *fsNode
}

type fsNode struct {
	name  string
	mode  fs.FileMode // includes fs.ModeDir for directories
	mtime time.Time
	data  []byte
	kids  map[string]*fsNode
}

func (n *fsNode) isDir() bool { return n.mode.IsDir() }

// New returns a file system with the directories of a freshly booted
// phone, its times taken from clk.
func New(clk clock.Clock) *FS {
	f := &FS{clk: clk}
	now := clk.Now()
	f.root = &fsNode{name: "/", mode: fs.ModeDir | 0o755, mtime: now, kids: map[string]*fsNode{}}
	for _, d := range []string{"/data/local/tmp", "/system/bin", "/proc", "/storage/self",
		ExternalStorage + "/Android/data", ExternalStorage + "/Android/media", ExternalStorage + "/DCIM",
		ExternalStorage + "/Download", ExternalStorage + "/Pictures", ExternalStorage + "/Movies",
		ExternalStorage + "/Music", ExternalStorage + "/Documents"} {
		f.mkdirAllLocked(d, 0o771, now)
	}
	dev := f.mkdirAllLocked("/dev", 0o755, now)
	dev.kids["null"] = &fsNode{name: "null", mode: fs.ModeDevice | fs.ModeCharDevice | 0o666, mtime: now}
	f.root.kids["sdcard"] = &fsNode{name: "sdcard", mode: fs.ModeSymlink | 0o777, mtime: now}
	return f
}

// Canonical cleans a path and resolves the storage aliases. Relative paths
// are taken from "/" (adbd's working directory).
func Canonical(p string) string {
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	p = path.Clean(p)
	for _, a := range storageAliases {
		if p == a || strings.HasPrefix(p, a+"/") {
			return ExternalStorage + p[len(a):]
		}
	}
	return p
}

// Writable reports whether the shell user may write at the canonical path
// canon: only under external storage and /data/local/tmp.
func Writable(canon string) bool {
	for _, root := range []string{ExternalStorage, LocalTmp} {
		if canon == root || strings.HasPrefix(canon, root+"/") {
			return true
		}
	}
	return false
}

func pathErr(op, p string, err error) error { return &fs.PathError{Op: op, Path: p, Err: err} }

func (f *FS) lookupLocked(canon string) (*fsNode, error) {
	n := f.root
	if canon == "/" {
		return n, nil
	}
	for _, part := range strings.Split(canon[1:], "/") {
		if !n.isDir() {
			return nil, syscall.ENOTDIR
		}
		next := n.kids[part]
		if next == nil {
			return nil, syscall.ENOENT
		}
		n = next
	}
	return n, nil
}

// parentLocked returns the existing parent directory of canon.
func (f *FS) parentLocked(canon string) (*fsNode, string, error) {
	dir, base := path.Split(canon)
	if base == "" {
		return nil, "", syscall.EEXIST // the root
	}
	parent, err := f.lookupLocked(path.Clean(dir))
	if err != nil {
		return nil, "", err
	}
	if !parent.isDir() {
		return nil, "", syscall.ENOTDIR
	}
	return parent, base, nil
}

// fileInfo implements fs.FileInfo for a node snapshot.
type fileInfo struct {
	name  string
	size  int64
	mode  fs.FileMode
	mtime time.Time
}

func (i fileInfo) Name() string       { return i.name }
func (i fileInfo) Size() int64        { return i.size }
func (i fileInfo) Mode() fs.FileMode  { return i.mode }
func (i fileInfo) ModTime() time.Time { return i.mtime }
func (i fileInfo) IsDir() bool        { return i.mode.IsDir() }
func (i fileInfo) Sys() any           { return nil }

func (n *fsNode) info() fileInfo {
	size := int64(len(n.data))
	if n.isDir() {
		size = 4096
	}
	return fileInfo{name: n.name, size: size, mode: n.mode, mtime: n.mtime}
}

// Stat describes a file or directory.
func (f *FS) Stat(name string) (fs.FileInfo, error) {
	c := Canonical(name)
	f.mu.RLock()
	defer f.mu.RUnlock()
	n, err := f.lookupLocked(c)
	if err != nil {
		return nil, pathErr("stat", name, err)
	}
	fi := n.info()
	if c == "/" {
		fi.name = "/"
	}
	return fi, nil
}

// ReadDir lists a directory sorted by name.
func (f *FS) ReadDir(name string) ([]fs.FileInfo, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	n, err := f.lookupLocked(Canonical(name))
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	if !n.isDir() {
		return nil, pathErr("readdir", name, syscall.ENOTDIR)
	}
	var out []fs.FileInfo
	for _, k := range slices.Sorted(maps.Keys(n.kids)) {
		out = append(out, n.kids[k].info())
	}
	return out, nil
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// Open returns a reader over a snapshot of a regular file.
func (f *FS) Open(name string) (io.ReadSeekCloser, error) {
	data, err := f.snapshot("open", name)
	if err != nil {
		return nil, err
	}
	return readCloser{bytes.NewReader(data)}, nil
}

// ReadFile returns a copy of a regular file's content.
func (f *FS) ReadFile(name string) ([]byte, error) {
	data, err := f.snapshot("open", name)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(data), nil
}

func (f *FS) snapshot(op, name string) ([]byte, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	n, err := f.lookupLocked(Canonical(name))
	if err != nil {
		return nil, pathErr(op, name, err)
	}
	if n.isDir() {
		return nil, pathErr(op, name, syscall.EISDIR)
	}
	return n.data, nil
}

// WriteFile creates or replaces a regular file with everything read from r.
// The parent directory must exist. The file only appears (or changes) once r
// is fully read, so a failed transfer leaves the old state.
func (f *FS) WriteFile(name string, mode fs.FileMode, mtime time.Time, r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("write %s: read source: %w", name, err)
	}
	return f.commit(name, mode, mtime, data, false, false)
}

// commit stores data as the file's content (appending when app is set).
func (f *FS) commit(name string, mode fs.FileMode, mtime time.Time, data []byte, app, excl bool) error {
	c := Canonical(name)
	f.mu.Lock()
	defer f.mu.Unlock()
	if !Writable(c) {
		return pathErr("open", name, syscall.EACCES)
	}
	parent, base, err := f.parentLocked(c)
	if err != nil {
		return pathErr("open", name, err)
	}
	if mtime.IsZero() {
		mtime = f.clk.Now()
	}
	n := parent.kids[base]
	switch {
	case n != nil && excl:
		return pathErr("open", name, syscall.EEXIST)
	case n != nil && n.isDir():
		return pathErr("open", name, syscall.EISDIR)
	case n == nil:
		if mode&fs.ModePerm == 0 || strings.HasPrefix(c, ExternalStorage+"/") {
			// The sdcard FUSE layer shows every file as rw-rw----.
			mode = 0o660
		}
		parent.kids[base] = &fsNode{name: base, mode: mode & fs.ModePerm, mtime: mtime, data: data}
		parent.mtime = mtime
	case app:
		// Copy-on-write keeps readers' snapshots intact.
		n.data = append(bytes.Clone(n.data), data...)
		n.mtime = mtime
	default:
		n.data = data
		n.mtime = mtime
	}
	return nil
}

// Mkdir creates one directory.
func (f *FS) Mkdir(name string, perm fs.FileMode) error {
	c := Canonical(name)
	f.mu.Lock()
	defer f.mu.Unlock()
	parent, base, err := f.parentLocked(c)
	if err != nil {
		return pathErr("mkdir", name, err)
	}
	if parent.kids[base] != nil {
		return pathErr("mkdir", name, syscall.EEXIST)
	}
	if !Writable(c) {
		return pathErr("mkdir", name, syscall.EACCES)
	}
	now := f.clk.Now()
	parent.kids[base] = &fsNode{name: base, mode: fs.ModeDir | perm&fs.ModePerm, mtime: now, kids: map[string]*fsNode{}}
	parent.mtime = now
	return nil
}

// MkdirAll creates a directory and its missing parents.
func (f *FS) MkdirAll(name string, perm fs.FileMode) error {
	c := Canonical(name)
	f.mu.Lock()
	defer f.mu.Unlock()
	// Walk the existing prefix first so that mkdir -p of an existing
	// read-only directory succeeds, as it does on the device.
	n := f.root
	parts := strings.Split(strings.TrimPrefix(c, "/"), "/")
	if c == "/" {
		parts = nil
	}
	for i, part := range parts {
		next := n.kids[part]
		if next == nil {
			if !Writable(c) {
				return pathErr("mkdir", name, syscall.EACCES)
			}
			f.mkdirAllLocked("/"+strings.Join(parts[:i], "/")+"/"+strings.Join(parts[i:], "/"), perm, f.clk.Now())
			return nil
		}
		if !next.isDir() {
			return pathErr("mkdir", name, syscall.ENOTDIR)
		}
		n = next
	}
	return nil
}

func (f *FS) mkdirAllLocked(c string, perm fs.FileMode, now time.Time) *fsNode {
	n := f.root
	for _, part := range strings.Split(strings.TrimPrefix(path.Clean(c), "/"), "/") {
		if part == "" {
			continue
		}
		next := n.kids[part]
		if next == nil {
			next = &fsNode{name: part, mode: fs.ModeDir | perm&fs.ModePerm, mtime: now, kids: map[string]*fsNode{}}
			n.kids[part] = next
			n.mtime = now
		}
		n = next
	}
	return n
}

// Remove deletes a file or an empty directory.
func (f *FS) Remove(name string) error { return f.remove(name, false) }

// RemoveAll deletes a path and everything below it; a missing path is not
// an error.
func (f *FS) RemoveAll(name string) error { return f.remove(name, true) }

func (f *FS) remove(name string, all bool) error {
	c := Canonical(name)
	f.mu.Lock()
	defer f.mu.Unlock()
	parent, base, err := f.parentLocked(c)
	if err != nil {
		if all && err == syscall.ENOENT {
			return nil
		}
		return pathErr("remove", name, err)
	}
	n := parent.kids[base]
	switch {
	case n == nil && all:
		return nil
	case n == nil:
		return pathErr("remove", name, syscall.ENOENT)
	case !Writable(c) || c == ExternalStorage || c == LocalTmp:
		return pathErr("remove", name, syscall.EACCES)
	case n.isDir() && len(n.kids) > 0 && !all:
		return pathErr("remove", name, syscall.ENOTEMPTY)
	}
	delete(parent.kids, base)
	parent.mtime = f.clk.Now()
	return nil
}

// Rename moves a file or directory, replacing a file or empty directory at
// the destination (POSIX rename).
func (f *FS) Rename(oldName, newName string) error {
	oc, nc := Canonical(oldName), Canonical(newName)
	f.mu.Lock()
	defer f.mu.Unlock()
	if !Writable(oc) || !Writable(nc) || oc == ExternalStorage || oc == LocalTmp {
		return pathErr("rename", oldName, syscall.EACCES)
	}
	op, ob, err := f.parentLocked(oc)
	if err != nil {
		return pathErr("rename", oldName, err)
	}
	src := op.kids[ob]
	if src == nil {
		return pathErr("rename", oldName, syscall.ENOENT)
	}
	if oc == nc {
		return nil
	}
	if strings.HasPrefix(nc, oc+"/") {
		return pathErr("rename", newName, syscall.EINVAL)
	}
	np, nb, err := f.parentLocked(nc)
	if err != nil {
		return pathErr("rename", newName, err)
	}
	if dst := np.kids[nb]; dst != nil {
		switch {
		case dst.isDir() && !src.isDir():
			return pathErr("rename", newName, syscall.EISDIR)
		case !dst.isDir() && src.isDir():
			return pathErr("rename", newName, syscall.ENOTDIR)
		case dst.isDir() && len(dst.kids) > 0:
			return pathErr("rename", newName, syscall.ENOTEMPTY)
		}
	}
	delete(op.kids, ob)
	src.name = nb
	np.kids[nb] = src
	now := f.clk.Now()
	op.mtime, np.mtime = now, now
	return nil
}

// Chtimes sets a path's modification time.
func (f *FS) Chtimes(name string, mtime time.Time) error {
	c := Canonical(name)
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.lookupLocked(c)
	if err != nil {
		return pathErr("chtimes", name, err)
	}
	if !Writable(c) {
		return pathErr("chtimes", name, syscall.EACCES)
	}
	n.mtime = mtime
	return nil
}

// Chmod sets a path's permission bits.
func (f *FS) Chmod(name string, perm fs.FileMode) error {
	c := Canonical(name)
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.lookupLocked(c)
	if err != nil {
		return pathErr("chmod", name, err)
	}
	if !Writable(c) {
		return pathErr("chmod", name, syscall.EPERM)
	}
	n.mode = n.mode&^fs.ModePerm | perm&fs.ModePerm
	return nil
}

// OpenFile is the shell's view of open(2) with O_* flags. Writers buffer
// and commit on Close.
func (f *FS) OpenFile(name string, flag int, perm fs.FileMode) (io.ReadWriteCloser, error) {
	if Canonical(name) == "/dev/null" {
		return devNull{}, nil
	}
	acc := flag & (syscall.O_RDONLY | syscall.O_WRONLY | syscall.O_RDWR)
	if acc == syscall.O_RDONLY {
		data, err := f.snapshot("open", name)
		if err != nil {
			return nil, err
		}
		return &shellFile{r: bytes.NewReader(data)}, nil
	}
	c := Canonical(name)
	f.mu.RLock()
	n, err := f.lookupLocked(c)
	f.mu.RUnlock()
	exists := err == nil
	switch {
	case exists && n.isDir():
		return nil, pathErr("open", name, syscall.EISDIR)
	case !exists && flag&syscall.O_CREAT == 0:
		return nil, pathErr("open", name, syscall.ENOENT)
	case exists && flag&syscall.O_CREAT != 0 && flag&syscall.O_EXCL != 0:
		return nil, pathErr("open", name, syscall.EEXIST)
	case !Writable(c):
		return nil, pathErr("open", name, syscall.EACCES)
	}
	// Create (or truncate) right away so that the file exists while the
	// command runs, as with a real open(O_CREAT|O_TRUNC).
	app := flag&syscall.O_APPEND != 0
	if !exists || flag&syscall.O_TRUNC != 0 {
		if err := f.commit(name, perm, time.Time{}, nil, false, false); err != nil {
			return nil, err
		}
	}
	return &shellFile{fs: f, name: name, app: app, w: &bytes.Buffer{}}, nil
}

type devNull struct{}

func (devNull) Read([]byte) (int, error)    { return 0, io.EOF }
func (devNull) Write(b []byte) (int, error) { return len(b), nil }
func (devNull) Close() error                { return nil }

type shellFile struct {
	r    *bytes.Reader
	fs   *FS
	name string
	app  bool
	w    *bytes.Buffer
}

func (s *shellFile) Read(b []byte) (int, error) {
	if s.r == nil {
		return 0, pathErr("read", s.name, syscall.EBADF)
	}
	return s.r.Read(b)
}

func (s *shellFile) Write(b []byte) (int, error) {
	if s.w == nil {
		return 0, pathErr("write", s.name, syscall.EBADF)
	}
	return s.w.Write(b)
}

func (s *shellFile) Close() error {
	if s.w == nil {
		return nil
	}
	data := s.w.Bytes()
	s.w = nil
	// The file was created or truncated at open; everything written is
	// appended to what is there now.
	return s.fs.commit(s.name, 0, time.Time{}, data, true, false)
}

// AppendFile appends data to a regular file, creating it (parent must exist)
// when missing.
func (f *FS) AppendFile(name string, data []byte) error {
	return f.commit(name, 0o660, time.Time{}, bytes.Clone(data), true, false)
}

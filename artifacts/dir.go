// Package artifacts writes evidence directories: every path stays under the
// chosen root, a location that cannot be written is refused before any work,
// an existing non-empty directory is reused only when it holds an earlier
// evidence set of ours (or the caller asked to overwrite), every file is
// written atomically (temporary file, rename: a reader never sees a partial
// file) and recorded with its size and SHA-256 for the manifest. Files are
// made durable together, at the set's end (Sync, WriteManifest, PublishDir),
// not one fsync per file: a run writes dozens of small files and each fsync
// is a journal commit, while a set cut short by a crash is incomplete
// whichever of its files survived.
package artifacts

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/solopi-dev/solopi/fault"
)

// FileEntry describes one file of an evidence directory.
type FileEntry struct {
	// Path is relative to the directory root, with forward slashes.
	Path   string `json:"path"`
	Size   int64  `json:"sizeBytes"`
	SHA256 string `json:"sha256"`
	// Source says where the bytes came from (a device path, "screencap",
	// "logcat", "status"); it never holds a secret.
	Source string `json:"source,omitempty"`
}

// Dir is one evidence directory. It is safe for concurrent use.
type Dir struct {
	root  string
	mode  evidenceMode
	mu    sync.Mutex
	files map[string]FileEntry
	logs  map[string]*logState // append-only files (Append)
	// previous is the manifest of the evidence set this one replaces
	// (EvidenceReplace), replaced what WriteManifest did about it.
	previous *Manifest
	replaced *Replaced
	// dirs are the directories below the root (relative, slash-separated)
	// already seen to be real directories, not symbolic links: resolve
	// does not inspect them again. The root is ours, so only this user
	// could swap one for a link meanwhile.
	dirs map[string]bool
	// unsynced are the files (relative) committed or appended since the
	// last Sync.
	unsynced map[string]bool
}

// evidenceMode says what an evidence directory may already hold.
type evidenceMode int

const (
	// EvidenceExclusive needs an absent or empty directory.
	EvidenceExclusive evidenceMode = iota
	// EvidenceOverwrite (--overwrite) accepts any directory and removes
	// the entries the caller names before writing.
	EvidenceOverwrite
	// evidenceReplace accepts an absent or empty directory, or one that
	// holds an earlier evidence set of ours (our manifest.json): the new
	// set replaces it, and the files the earlier manifest listed that the
	// new one does not are removed when the new manifest is written.
	// Files no manifest of ours names are never touched.
	evidenceReplace
	// EvidenceNew needs an absent path: the run creates the directory
	// itself (mkdir, so one that appears meanwhile is refused too) and
	// never mixes its evidence with another's. An existing entry is
	// output_exists.
	EvidenceNew
)

// EvidenceModeOf maps an --overwrite flag to its mode: without it an
// earlier evidence set of ours is replaced (the same directory works for
// every run of a CI job) and anything else is refused.
func EvidenceModeOf(overwrite bool) evidenceMode {
	if overwrite {
		return EvidenceOverwrite
	}
	return evidenceReplace
}

// Replaced reports what an EvidenceReplace directory replaced.
type Replaced struct {
	// RunID and CreatedAt identify the earlier evidence set.
	RunID     string `json:"runId,omitempty"`
	CreatedAt string `json:"createdAt,omitempty"`
	// Removed are the earlier set's files the new set did not rewrite.
	Removed []string `json:"removed"`
	// Errors are removals that failed (the files are left in place).
	Errors []string `json:"errors,omitempty"`
}

// Check verifies, without creating anything, that path can become an
// evidence directory in mode (see EvidenceMode). A symlink is refused in
// every mode, because writing through it would put evidence somewhere the
// user did not name. Call it before contacting the device so that a
// refused directory costs nothing.
func Check(path string, mode evidenceMode) error {
	_, err := check(path, mode)
	return err
}

// check is Check; it also returns the earlier manifest an EvidenceReplace
// directory holds.
func check(path string, mode evidenceMode) (*Manifest, error) {
	if strings.TrimSpace(path) == "" {
		return nil, fault.Usage(fault.CodeUnsafeArtifactPath, "the artifacts directory path is empty")
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, checkWritable(path)
	}
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, fault.CodeUnsafeArtifactPath, "cannot inspect the artifacts directory", err).With("path", path)
	}
	if mode == EvidenceNew {
		return nil, newExists(path)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fault.Usage(fault.CodeUnsafeArtifactPath, "the artifacts directory is a symbolic link").With("path", path)
	}
	if !fi.IsDir() {
		return nil, fault.Usage(fault.CodeUnsafeArtifactPath, "the artifacts path exists and is not a directory").With("path", path)
	}
	if err := checkWritable(path); err != nil {
		return nil, err
	}
	if mode == EvidenceOverwrite {
		return nil, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, fault.CodeUnsafeArtifactPath, "cannot read the artifacts directory", err).With("path", path)
	}
	if len(entries) == 0 {
		return nil, nil
	}
	if mode == evidenceReplace {
		if m, ok := readManifest(filepath.Join(path, ManifestName)); ok {
			return m, nil
		}
	}
	return nil, fault.New(fault.Invalid, fault.CodeArtifactsDirNotEmpty, "the artifacts directory holds files that no solopi evidence manifest names; pass --overwrite or choose a new directory").
		With("path", path)
}

// checkWritable proves that files can be created at path (a directory) or,
// when it does not exist yet, in the nearest existing directory above it,
// by creating and removing an empty file there. Permission bits alone do
// not say it (ACLs, read-only mounts, a root-owned directory), and the
// alternative is finding out after the device work, with nothing kept.
func checkWritable(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fault.Wrap(fault.Invalid, fault.CodeUnsafeArtifactPath, "the path cannot be made absolute", err).With("path", path)
	}
	dir := abs
	for {
		fi, err := os.Lstat(dir)
		if err == nil {
			if !fi.IsDir() {
				return fault.Usage(fault.CodeOutputNotWritable, "a parent of the path is not a directory").With("path", abs).With("parent", dir)
			}
			break
		}
		parent := filepath.Dir(dir)
		if !errors.Is(err, fs.ErrNotExist) || parent == dir {
			return fault.Wrap(fault.Invalid, fault.CodeOutputNotWritable, "the path cannot be inspected", err).With("path", abs)
		}
		dir = parent
	}
	f, err := os.CreateTemp(dir, ".solopi-write-check-*")
	if err != nil {
		return fault.Wrap(fault.Invalid, fault.CodeOutputNotWritable, "files cannot be created here", err).With("path", abs).With("directory", dir).
			WithUserAction("Choose a directory this user can write to, or fix its permissions.")
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// readManifest reads an earlier manifest of ours: a regular file (not a
// symlink) with our schema.
func readManifest(p string) (*Manifest, bool) {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 16<<20 {
		return nil, false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, false
	}
	var m Manifest
	if json.Unmarshal(b, &m) != nil || m.Schema != manifestSchema {
		return nil, false
	}
	return &m, true
}

// Open checks path (see Check) and creates it. In EvidenceOverwrite mode
// the entries named in replace are removed first so that a previous run's
// evidence can never be mistaken for this run's; other files are left
// alone.
func Open(path string, mode evidenceMode, replace ...string) (*Dir, error) {
	previous, err := check(path, mode)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, fault.CodeUnsafeArtifactPath, "cannot resolve the artifacts directory", err).With("path", path)
	}
	if err := makeRoot(abs, mode); err != nil {
		return nil, err
	}
	d := &Dir{root: abs, mode: mode, files: map[string]FileEntry{}, previous: previous}
	if mode == EvidenceOverwrite {
		for _, name := range replace {
			p, err := d.resolve(name)
			if err != nil {
				return nil, err
			}
			if err := os.RemoveAll(p); err != nil {
				return nil, fault.Wrap(fault.Invalid, fault.CodeArtifactWriteFailed, "cannot remove a previous artifact", err).With("path", p)
			}
		}
		// What resolve saw of the removed entries is gone.
		d.dirs = nil
	}
	return d, nil
}

// makeRoot creates the evidence directory: exclusively in EvidenceNew mode.
func makeRoot(abs string, mode evidenceMode) error {
	if mode != EvidenceNew {
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return fault.Wrap(fault.Invalid, fault.CodeArtifactWriteFailed, "cannot create the artifacts directory", err).With("path", abs)
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return fault.Wrap(fault.Invalid, fault.CodeArtifactWriteFailed, "cannot create the artifacts directory's parent", err).With("path", abs)
	}
	if err := os.Mkdir(abs, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return newExists(abs)
		}
		return fault.Wrap(fault.Invalid, fault.CodeArtifactWriteFailed, "cannot create the artifacts directory", err).With("path", abs)
	}
	return nil
}

func newExists(path string) *fault.Error {
	return fault.Usage(fault.CodeOutputExists, "the artifacts directory already exists; give a new path").With("path", path)
}

// Replaced reports what the directory replaced; nil unless an earlier
// evidence set was replaced (EvidenceReplace) and the manifest written.
func (d *Dir) Replaced() *Replaced {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.replaced
}

// Root is the absolute directory path.
func (d *Dir) Root() string { return d.root }

// Abs returns the absolute path of rel inside the directory.
func (d *Dir) Abs(rel string) (string, error) { return d.resolve(rel) }

// Mkdir creates the directory rel (and its parents) inside the directory,
// for a writer that fills it itself (a nested evidence directory), and
// returns its absolute path.
func (d *Dir) Mkdir(rel string) (string, error) {
	p, err := d.resolve(rel)
	if err != nil {
		return "", err
	}
	if d.knownDir(filepath.ToSlash(filepath.Clean(filepath.FromSlash(rel)))) {
		return p, nil
	}
	if err := os.MkdirAll(p, 0o755); err != nil {
		return "", fault.Wrap(fault.Invalid, fault.CodeArtifactWriteFailed, "cannot create an artifact directory", err).With("path", rel)
	}
	// A component must not have been a symlink planted in between.
	return d.resolve(rel)
}

// resolve joins rel under the root. rel must be a local path (no "..", not
// absolute) and no existing component below the root may be a symlink.
func (d *Dir) resolve(rel string) (string, error) {
	clean := filepath.FromSlash(rel)
	if rel == "" || !filepath.IsLocal(clean) {
		return "", fault.Usage(fault.CodeUnsafeArtifactPath, "artifact path escapes the artifacts directory").With("path", rel)
	}
	parts := strings.Split(filepath.Clean(clean), string(filepath.Separator))
	p := d.root
	for i, part := range parts {
		p = filepath.Join(p, part)
		key := strings.Join(parts[:i+1], "/")
		if d.knownDir(key) {
			continue
		}
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return "", fault.Wrap(fault.Invalid, fault.CodeUnsafeArtifactPath, "cannot inspect an artifact path", err).With("path", rel)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return "", fault.Usage(fault.CodeUnsafeArtifactPath, "artifact path goes through a symbolic link").With("path", rel)
		}
		if fi.IsDir() {
			d.rememberDir(key)
		}
	}
	return filepath.Join(d.root, clean), nil
}

// knownDir tells whether resolve already saw key (relative, slash-separated)
// as a real directory.
func (d *Dir) knownDir(key string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dirs[key]
}

func (d *Dir) rememberDir(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dirs == nil {
		d.dirs = map[string]bool{}
	}
	d.dirs[key] = true
}

// mkParents creates the parents of rel (resolved to final) and checks them
// again: a parent must not have been a symlink planted in between. Parents
// resolve already saw as directories cost nothing.
func (d *Dir) mkParents(rel, final string) error {
	parent := filepath.ToSlash(filepath.Dir(filepath.Clean(filepath.FromSlash(rel))))
	if parent == "." || d.knownDir(parent) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return fault.Wrap(fault.Invalid, fault.CodeArtifactWriteFailed, "cannot create an artifact directory", err).With("path", rel)
	}
	_, err := d.resolve(rel)
	return err
}

// WriteFile writes data to rel atomically and records it.
func (d *Dir) WriteFile(rel, source string, data []byte) (FileEntry, error) {
	w, err := d.Create(rel, source)
	if err != nil {
		return FileEntry{}, err
	}
	if _, err := w.Write(data); err != nil {
		w.Abort()
		return FileEntry{}, fault.Wrap(fault.Invalid, fault.CodeArtifactWriteFailed, "cannot write an artifact", err).With("path", rel)
	}
	return w.Commit()
}

// WriteJSON writes v indented by two spaces with a trailing newline.
func (d *Dir) WriteJSON(rel, source string, v any) (FileEntry, error) {
	b, err := MarshalIndent(v)
	if err != nil {
		return FileEntry{}, fault.Wrap(fault.Invalid, fault.CodeArtifactWriteFailed, "cannot encode an artifact", err).With("path", rel)
	}
	return d.WriteFile(rel, source, b)
}

// MarshalIndent is JSON indented by two spaces, HTML characters and
// non-ASCII text as they are, with a trailing newline.
func MarshalIndent(v any) ([]byte, error) {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode json: %w", err)
	}
	return []byte(sb.String()), nil
}

// writer streams one artifact into a temporary file next to its final
// name; Commit publishes it, Abort discards it.
type writer struct {
	d      *Dir
	rel    string
	final  string
	source string
	f      *os.File
	h      hash.Hash
	n      int64
	done   bool
}

// Create starts writing rel; the parent directories are created.
func (d *Dir) Create(rel, source string) (*writer, error) {
	final, err := d.resolve(rel)
	if err != nil {
		return nil, err
	}
	if err := d.mkParents(rel, final); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(final), "."+filepath.Base(final)+".tmp-*")
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, fault.CodeArtifactWriteFailed, "cannot create an artifact file", err).With("path", rel)
	}
	return &writer{d: d, rel: filepath.ToSlash(filepath.Clean(filepath.FromSlash(rel))), final: final, source: source, f: f, h: sha256.New()}, nil
}

// Write implements io.Writer.
func (w *writer) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.h.Write(p[:n])
	w.n += int64(n)
	return n, err
}

// Size is the number of bytes written so far.
func (w *writer) Size() int64 { return w.n }

// SHA256 is the digest of the bytes written so far.
func (w *writer) SHA256() string { return hex.EncodeToString(w.h.Sum(nil)) }

// Commit closes and renames the file into place and records it; the file
// is made durable by the next Sync (see the package comment).
func (w *writer) Commit() (FileEntry, error) {
	if w.done {
		return FileEntry{}, fault.New(fault.Invalid, fault.CodeArtifactWriteFailed, "artifact already committed").With("path", w.rel)
	}
	w.done = true
	tmp := w.f.Name()
	if err := w.f.Chmod(0o644); err != nil {
		w.f.Close()
		os.Remove(tmp)
		return FileEntry{}, fault.Wrap(fault.Invalid, fault.CodeArtifactWriteFailed, "cannot set artifact permissions", err).With("path", w.rel)
	}
	if err := w.f.Close(); err != nil {
		os.Remove(tmp)
		return FileEntry{}, fault.Wrap(fault.Invalid, fault.CodeArtifactWriteFailed, "cannot close an artifact", err).With("path", w.rel)
	}
	if err := os.Rename(tmp, w.final); err != nil {
		os.Remove(tmp)
		return FileEntry{}, fault.Wrap(fault.Invalid, fault.CodeArtifactWriteFailed, "cannot publish an artifact", err).With("path", w.rel)
	}
	e := FileEntry{Path: w.rel, Size: w.n, SHA256: w.SHA256(), Source: w.source}
	w.d.mu.Lock()
	w.d.files[e.Path] = e
	delete(w.d.logs, e.Path)
	w.d.markUnsynced(e.Path)
	w.d.mu.Unlock()
	return e, nil
}

// Abort discards the temporary file. Safe after Commit (no-op).
func (w *writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.f.Close()
	os.Remove(w.f.Name())
}

// Files lists the recorded files sorted by path.
func (d *Dir) Files() []FileEntry {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]FileEntry, 0, len(d.files))
	for _, e := range d.files {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// SanitizeName turns a case name into a directory name the way upstream
// does: characters outside [A-Za-z0-9._-] become '-', runs of '-' collapse,
// leading and trailing '-' and '.' are trimmed, an empty result becomes
// "case", and the result is cut to 80 bytes.
func SanitizeName(s string) string {
	var b strings.Builder
	lastDash := false
	for _, r := range s {
		ok := r < 0x80 && (r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
		if !ok || r == '-' {
			if !lastDash {
				b.WriteByte('-')
			}
			lastDash = true
			continue
		}
		b.WriteRune(r)
		lastDash = false
	}
	out := strings.Trim(b.String(), "-.")
	if len(out) > 80 {
		out = strings.Trim(out[:80], "-.")
	}
	if out == "" {
		return "case"
	}
	return out
}

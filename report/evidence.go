package report

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
)

// Limits on what a report reads. Evidence directories come from CI jobs
// and colleagues; a report must not load a gigabyte because one file grew.
const (
	maxJSONBytes   = 32 << 20
	maxTextBytes   = 16 << 20
	maxDirEntries  = 10000
	maxLogcatLines = 120
)

// evidence is one evidence directory opened for reading. Every access goes
// through an os.Root (nothing outside the directory is reachable) and
// refuses symbolic links: a report embeds text from the files it reads, and
// a link planted in a downloaded artifact must not pull /etc into it.
type evidence struct {
	dir  string // absolute
	root *os.Root
}

func openEvidence(dir string) (*evidence, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, fault.CodeNotADirectory, "the evidence path cannot be made absolute", err).With("dir", dir)
	}
	fi, err := os.Lstat(abs)
	switch {
	case err != nil:
		return nil, fault.Wrap(fault.Invalid, fault.CodeNotADirectory, "the evidence directory cannot be read", err).With("dir", abs)
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, fault.Usage(fault.CodeNotADirectory, "the evidence directory is a symbolic link").With("dir", abs)
	case !fi.IsDir():
		return nil, fault.Usage(fault.CodeNotADirectory, "the evidence path is not a directory").With("dir", abs)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, fault.CodeNotADirectory, "the evidence directory cannot be opened", err).With("dir", abs)
	}
	return &evidence{dir: abs, root: root}, nil
}

func (e *evidence) close() { e.root.Close() }

// sub opens a subdirectory as its own evidence directory.
func (e *evidence) sub(rel string) (*evidence, error) {
	if !e.isDir(rel) {
		return nil, fault.Usage(fault.CodeNotADirectory, "not a directory of the evidence").With("path", rel)
	}
	return openEvidence(filepath.Join(e.dir, filepath.FromSlash(rel)))
}

// check refuses a path that is not local or goes through a symlink.
func (e *evidence) check(rel string) error {
	if rel == "" || !filepath.IsLocal(filepath.FromSlash(rel)) {
		return fmt.Errorf("%s: not a path inside the evidence directory", rel)
	}
	p := ""
	for _, part := range strings.Split(path.Clean(rel), "/") {
		p = path.Join(p, part)
		fi, err := e.root.Lstat(filepath.FromSlash(p))
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s: a symbolic link is not read", p)
		}
	}
	return nil
}

func (e *evidence) stat(rel string) (fs.FileInfo, bool) {
	if e.check(rel) != nil {
		return nil, false
	}
	fi, err := e.root.Lstat(filepath.FromSlash(rel))
	return fi, err == nil
}

// isFile reports a regular file (not a link) at rel.
func (e *evidence) isFile(rel string) bool {
	fi, ok := e.stat(rel)
	return ok && fi.Mode().IsRegular()
}

func (e *evidence) isDir(rel string) bool {
	fi, ok := e.stat(rel)
	return ok && fi.IsDir()
}

// read returns at most limit bytes of rel; a longer file is an error for
// JSON (a cut document is not the document) and is cut for text.
func (e *evidence) read(rel string, limit int64) ([]byte, bool, error) {
	if err := e.check(rel); err != nil {
		return nil, false, err
	}
	f, err := e.root.Open(filepath.FromSlash(rel))
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(b)) > limit {
		return b[:limit], true, nil
	}
	return b, false, nil
}

// readJSON decodes rel into v (numbers as json.Number when v is generic).
func (e *evidence) readJSON(rel string, v any) error {
	b, cut, err := e.read(rel, maxJSONBytes)
	if err != nil {
		return err
	}
	if cut {
		return fmt.Errorf("%s: larger than %d bytes", rel, maxJSONBytes)
	}
	if err := canonjson.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	return nil
}

// entries lists a directory of the evidence, sorted by name.
func (e *evidence) entries(rel string) []fs.DirEntry {
	if rel != "." && e.check(rel) != nil {
		return nil
	}
	f, err := e.root.Open(filepath.FromSlash(rel))
	if err != nil {
		return nil
	}
	defer f.Close()
	list, err := f.ReadDir(maxDirEntries)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name() < list[j].Name() })
	return list
}

// local turns a path recorded in evidence (absolute, as upstream writes
// it, or relative) into a slash path inside this directory naming a
// regular file. Evidence that moved since it was written (a downloaded CI
// artifact) is found by the longest tail of its path that exists here.
func (e *evidence) local(p string) (string, bool) {
	if p == "" {
		return "", false
	}
	p = filepath.ToSlash(p)
	if !path.IsAbs(p) {
		c := path.Clean(p)
		return c, e.isFile(c)
	}
	if rel, err := filepath.Rel(e.dir, filepath.FromSlash(p)); err == nil && filepath.IsLocal(rel) {
		rel = filepath.ToSlash(rel)
		if e.isFile(rel) {
			return rel, true
		}
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i := range parts {
		tail := strings.Join(parts[i:], "/")
		if tail != "" && filepath.IsLocal(filepath.FromSlash(tail)) && e.isFile(tail) {
			return tail, true
		}
	}
	return "", false
}

// href is the relative URL of a local path, each segment escaped so that
// names with spaces, '#', '?' or any script stay one path.
func href(rel string) string {
	parts := strings.Split(rel, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// join is a slash path under prefix ("" stays rel).
func join(prefix, rel string) string {
	if prefix == "" || prefix == "." {
		return rel
	}
	return prefix + "/" + rel
}

func isImage(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".png", ".jpg", ".jpeg", ".webp", ".gif", ".svg":
		return true
	}
	return false
}

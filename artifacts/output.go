package artifacts

// The one policy for every file or directory a command writes outside an
// evidence directory (--output of screenshot, logs, case-get, agent
// screenshots and timelines, screen recordings, performance directories,
// charts). The rules:
//
//   - The path is made absolute and inspected with Lstat: a symbolic link
//     is never followed, whatever the mode.
//   - The entry is published atomically: written under a temporary name in
//     the same directory, then linked (Exclusive: fails if the name
//     appeared meanwhile) or renamed (Replace) into place. A reader never
//     sees a partial file.
//   - One error code per failure: invalid_output_path (empty, a symlink,
//     the wrong kind of entry, no parent directory), output_exists (an
//     existing entry in Exclusive mode), output_not_writable (no file can
//     be created there: found by the check, before any device work),
//     output_write_failed (the local write or publish failed).
//
// Evidence directories (run --artifacts) are the third mode: see Check and
// Open in dir.go, which keep our manifest.json and never follow a symlink
// either.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/solopi-dev/solopi/fault"
)

// mode says what happens to an entry that already exists at the output.
type mode int

const (
	// Exclusive refuses an existing entry (output_exists), also one that
	// appears while the output is being written.
	Exclusive mode = iota
	// Replace replaces an existing entry of the same kind atomically.
	Replace
)

// ModeOf maps an --overwrite flag to its mode.
func ModeOf(overwrite bool) mode {
	if overwrite {
		return Replace
	}
	return Exclusive
}

// PrivateState is the policy of a file only its owner may read that each
// run replaces (a cache, a trajectory, a planner screenshot): replaced
// atomically, parents created owner-only, mode 0600.
var PrivateState = Output{Mode: Replace, MakeParents: true, ParentPerm: 0o700, Perm: 0o600}

// Output is the policy of one command's output.
type Output struct {
	Mode mode
	// MakeParents creates missing parent directories when the entry is
	// published; without it a missing parent is refused by the check.
	MakeParents bool
	// ParentPerm is the mode of the parents MakeParents creates (default
	// 0755; 0700 beside files only their owner may read).
	ParentPerm fs.FileMode
	// Perm is a published file's mode (default 0644; 0600 for secrets).
	Perm fs.FileMode
}

// mkParents creates abs's missing parents (MakeParents).
func (o Output) mkParents(abs string) error {
	if !o.MakeParents {
		return nil
	}
	perm := o.ParentPerm
	if perm == 0 {
		perm = 0o755
	}
	if err := os.MkdirAll(filepath.Dir(abs), perm); err != nil {
		return writeFailed(abs, "cannot create the output's parent directory", err)
	}
	return nil
}

func exists(abs string) *fault.Error {
	return fault.Usage(fault.CodeOutputExists, "the output already exists; pass --overwrite to replace it").With("output", abs)
}

func writeFailed(abs, what string, err error) *fault.Error {
	return fault.Wrap(fault.Invalid, fault.CodeOutputWriteFailed, what, err).With("output", abs)
}

// check resolves path and applies the rules for an entry of kind dir.
func (o Output) check(path string, dir bool) (string, error) {
	if strings.TrimSpace(path) == "" {
		return "", fault.Usage(fault.CodeInvalidOutputPath, "the output path is empty")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fault.Wrap(fault.Invalid, fault.CodeInvalidOutputPath, "the output path cannot be made absolute", err).With("output", path)
	}
	fi, err := os.Lstat(abs)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		return "", fault.Usage(fault.CodeInvalidOutputPath, "the output path is a symbolic link").With("output", abs)
	case err == nil && fi.IsDir() && !dir:
		return "", fault.Usage(fault.CodeInvalidOutputPath, "the output path is a directory").With("output", abs)
	case err == nil && !fi.IsDir() && dir:
		return "", fault.Usage(fault.CodeInvalidOutputPath, "the output path exists and is not a directory").With("output", abs)
	case err == nil && o.Mode == Exclusive:
		return "", exists(abs)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", fault.Wrap(fault.Invalid, fault.CodeInvalidOutputPath, "the output path cannot be checked", err).With("output", abs)
	}
	if !o.MakeParents {
		if pst, err := os.Stat(filepath.Dir(abs)); err != nil || !pst.IsDir() {
			return "", fault.Usage(fault.CodeInvalidOutputPath, "the output's parent directory does not exist").With("output", abs)
		}
	}
	// The entry is published by creating a file beside it.
	if err := checkWritable(filepath.Dir(abs)); err != nil {
		return "", err
	}
	return abs, nil
}

// CheckFile checks, before any device work, that path can receive a file
// and returns it absolute.
func (o Output) CheckFile(path string) (string, error) { return o.check(path, false) }

// CheckDir checks, before any device work, that path can receive a
// directory and returns it absolute.
func (o Output) CheckDir(path string) (string, error) { return o.check(path, true) }

// PublishFile writes a file at path through write, which receives a
// temporary file in the same directory (opened read-write), and puts it in
// place atomically. write may return a typed error (a failed pull, a
// content check); it is returned as it is.
func (o Output) PublishFile(path string, write func(f *os.File) error) (string, error) {
	abs, _, err := o.publishFile(path, write)
	return abs, err
}

// publishFile is PublishFile; it also tells whether an existing file was
// replaced.
func (o Output) publishFile(path string, write func(f *os.File) error) (string, bool, error) {
	abs, err := o.CheckFile(path)
	if err != nil {
		return "", false, err
	}
	if err := o.mkParents(abs); err != nil {
		return "", false, err
	}
	f, err := os.CreateTemp(filepath.Dir(abs), "."+filepath.Base(abs)+".*.part")
	if err != nil {
		return "", false, writeFailed(abs, "cannot create a temporary file next to the output", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after Link or a failure; gone already after Rename
	if err := write(f); err != nil {
		f.Close()
		return "", false, err
	}
	perm := o.Perm
	if perm == 0 {
		perm = 0o644
	}
	err = f.Chmod(perm)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", false, writeFailed(abs, "writing the output file failed", err)
	}
	replaced, err := o.publish(tmp, abs, false)
	return abs, replaced, err
}

// publish moves tmp to abs: a link (never replacing) in Exclusive mode, a
// rename in Replace mode after checking that abs did not become a symlink
// or an entry of the other kind. An existing directory is removed first in
// Replace mode (rename cannot replace a non-empty directory). It reports
// whether an existing entry was replaced.
func (o Output) publish(tmp, abs string, dir bool) (bool, error) {
	if o.Mode == Replace {
		fi, err := os.Lstat(abs)
		existed := err == nil
		if existed {
			if fi.Mode()&fs.ModeSymlink != 0 || fi.IsDir() != dir {
				return false, fault.Usage(fault.CodeInvalidOutputPath, "the output path became a symbolic link or changed kind").With("output", abs)
			}
			if dir {
				if err := os.RemoveAll(abs); err != nil {
					return false, writeFailed(abs, "cannot replace the existing output directory", err)
				}
			}
		}
		if err := os.Rename(tmp, abs); err != nil {
			return false, writeFailed(abs, "publishing the output failed", err)
		}
		return existed, nil
	}
	var err error
	if dir {
		// rename(2) of a directory onto an existing empty directory
		// succeeds: refuse an entry that appeared meanwhile first.
		if _, lerr := os.Lstat(abs); lerr == nil {
			return false, exists(abs)
		}
		err = os.Rename(tmp, abs)
	} else if err = os.Link(tmp, abs); err != nil && !errors.Is(err, fs.ErrExist) {
		// A file system without hard links: an O_EXCL copy is still
		// exclusive, only not atomic for a concurrent reader.
		err = copyExclusive(tmp, abs)
	}
	if err != nil {
		if errors.Is(err, fs.ErrExist) || dirNotEmpty(err) {
			return false, exists(abs)
		}
		return false, writeFailed(abs, "publishing the output failed", err)
	}
	return false, nil
}

// copyExclusive creates dst (never replacing it) with src's content and
// mode; a partial dst is removed.
func copyExclusive(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm())
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
	}
	return err
}

// dirNotEmpty reports a rename refused because the target is a non-empty
// directory (ENOTEMPTY is not fs.ErrExist).
func dirNotEmpty(err error) bool {
	var le *os.LinkError
	return errors.As(err, &le) && strings.Contains(strings.ToLower(le.Err.Error()), "not empty")
}

// PublishDir fills a temporary directory next to path through fill, which
// writes its files with the Dir it receives (confined, atomic, digested),
// and puts the directory in place atomically. fill may return a typed
// error; it is returned as it is.
func (o Output) PublishDir(path string, fill func(d *Dir) error) (string, error) {
	abs, err := o.CheckDir(path)
	if err != nil {
		return "", err
	}
	if err := o.mkParents(abs); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(abs), "."+filepath.Base(abs)+".*.part")
	if err != nil {
		return "", writeFailed(abs, "cannot create a temporary directory next to the output", err)
	}
	defer os.RemoveAll(tmp) // gone already after a successful rename
	d := &Dir{root: tmp, mode: EvidenceNew, files: map[string]FileEntry{}}
	if err := fill(d); err != nil {
		return "", err
	}
	// Durable before it is published: the directory never appears with
	// files a crash could still lose.
	if err := d.Sync(); err != nil {
		return "", err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", writeFailed(abs, "cannot set the output directory's mode", err)
	}
	if _, err := o.publish(tmp, abs, true); err != nil {
		return abs, err
	}
	if err := syncPath(filepath.Dir(abs)); err != nil {
		return "", writeFailed(abs, "cannot flush the output's parent directory", err)
	}
	return abs, nil
}

// FileResult describes a file a command wrote.
type FileResult struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"sizeBytes"`
	// Replaced tells that an existing file was replaced (Replace mode);
	// commands report it in their own words.
	Replaced bool `json:"-"`
}

// WriteFile publishes data at path (see PublishFile).
func (o Output) WriteFile(path string, data []byte) (FileResult, error) {
	abs, replaced, err := o.publishFile(path, func(f *os.File) error {
		if _, err := f.Write(data); err != nil {
			return writeFailed(path, "writing the output file failed", err)
		}
		return nil
	})
	if err != nil {
		return FileResult{}, err
	}
	sum := sha256.Sum256(data)
	return FileResult{Path: abs, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(data)), Replaced: replaced}, nil
}

// ReadBack returns what write put into f so far (for content checks of a
// pulled file before it is published).
func ReadBack(f *os.File) ([]byte, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}

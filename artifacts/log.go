package artifacts

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/solopi-dev/solopi/fault"
)

// logState is an append-only file's running digest, so that its record
// stays right after every append without reading the file again.
type logState struct {
	h hash.Hash
	n int64
}

// Append adds data at the end of rel (an append-only log such as
// events.jsonl), creating it, and records its new size and digest. A line
// written is never rewritten, so a reader sees whole earlier lines.
func (d *Dir) Append(rel, source string, data []byte) (FileEntry, error) {
	p, err := d.resolve(rel)
	if err != nil {
		return FileEntry{}, err
	}
	if err := d.mkParents(rel, p); err != nil {
		return FileEntry{}, err
	}
	key := filepath.ToSlash(filepath.Clean(filepath.FromSlash(rel)))
	d.mu.Lock()
	defer d.mu.Unlock()
	st := d.logs[key]
	if st == nil {
		if st, err = existingLog(p); err != nil {
			return FileEntry{}, fault.Wrap(fault.Invalid, fault.CodeArtifactWriteFailed, "cannot read an artifact log", err).With("path", rel)
		}
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return FileEntry{}, fault.Wrap(fault.Invalid, fault.CodeArtifactWriteFailed, "cannot open an artifact log", err).With("path", rel)
	}
	n, err := f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	st.h.Write(data[:n])
	st.n += int64(n)
	if d.logs == nil {
		d.logs = map[string]*logState{}
	}
	d.logs[key] = st
	e := FileEntry{Path: key, Size: st.n, SHA256: hex.EncodeToString(st.h.Sum(nil)), Source: source}
	d.files[key] = e
	d.markUnsynced(key)
	if err != nil {
		return FileEntry{}, fault.Wrap(fault.Invalid, fault.CodeArtifactWriteFailed, "cannot append to an artifact log", err).With("path", rel)
	}
	return e, nil
}

// existingLog digests what a log already holds (none when it is absent).
func existingLog(p string) (*logState, error) {
	st := &logState{h: sha256.New()}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st.n, err = io.Copy(st.h, f)
	return st, err
}

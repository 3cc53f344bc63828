package artifacts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// The manifest of an evidence directory: every file it holds, bound by
// its digest to the run that produced it.

// ManifestName is the manifest's file name inside an evidence directory.
const ManifestName = "manifest.json"

// manifestSchema identifies the manifest format.
const manifestSchema = "solopi.artifacts-manifest/v1"

// Manifest binds every file of an evidence directory to the identifiers of
// the run that produced it.
type Manifest struct {
	Schema    string            `json:"schema"`
	Kind      string            `json:"kind"`
	RunID     string            `json:"runId,omitempty"`
	RequestID string            `json:"requestId,omitempty"`
	CaseName  string            `json:"caseName,omitempty"`
	CreatedAt string            `json:"createdAt"`
	Complete  bool              `json:"complete"`
	Files     []FileEntry       `json:"files"`
	Skipped   []SkippedFile     `json:"skipped,omitempty"`
	Errors    []string          `json:"errors,omitempty"`
	Extra     map[string]string `json:"extra,omitempty"`
}

// SkippedFile is a file that was named by the device but not collected.
type SkippedFile struct {
	Source string `json:"source"`
	Reason string `json:"reason"`
}

// WriteManifest fills m.Files from the recorded files and writes
// manifest.json atomically. The manifest does not list itself.
func (d *Dir) WriteManifest(m Manifest) (FileEntry, error) {
	m.Schema = manifestSchema
	m.Files = nil
	for _, f := range d.Files() {
		if f.Path != ManifestName {
			m.Files = append(m.Files, f)
		}
	}
	if m.Files == nil {
		m.Files = []FileEntry{}
	}
	// The files first, then the manifest naming them: a manifest on disk
	// never names a file that a crash could still lose.
	if err := d.Sync(); err != nil {
		return FileEntry{}, err
	}
	e, err := d.WriteJSON(ManifestName, "manifest", m)
	if err == nil {
		err = d.Sync()
	}
	if err != nil || d.previous == nil {
		return e, err
	}
	// The new manifest is in place: the earlier set's files that the new
	// set did not rewrite no longer belong to any manifest of ours.
	r := &Replaced{RunID: d.previous.RunID, CreatedAt: d.previous.CreatedAt, Removed: []string{}}
	written := map[string]bool{}
	for _, f := range d.Files() {
		written[f.Path] = true
	}
	for _, old := range d.previous.Files {
		if written[old.Path] || old.Path == ManifestName {
			continue
		}
		p, rerr := d.resolve(old.Path)
		if rerr == nil {
			if fi, lerr := os.Lstat(p); lerr == nil && !fi.Mode().IsRegular() {
				rerr = fmt.Errorf("%s is not a regular file", old.Path)
			} else if lerr == nil {
				rerr = os.Remove(p)
			} else if !errors.Is(lerr, fs.ErrNotExist) {
				rerr = lerr
			}
		}
		if rerr != nil {
			r.Errors = append(r.Errors, old.Path+": "+rerr.Error())
			continue
		}
		r.Removed = append(r.Removed, old.Path)
	}
	d.mu.Lock()
	d.replaced = r
	d.mu.Unlock()
	return e, nil
}

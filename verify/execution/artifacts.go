package execution

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sync"

	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
	"github.com/solopi-dev/solopi/verify"
)

// artifactDir is a run's evidence directory:
//
//	plan.json  events.jsonl  report.json
//	segments/<segmentId>/compiled-case.json, import-receipt.json,
//	    run-response.json, replay/{result.json,screen.png,logcat.txt}
//	segments/<segmentId>/agent-transcript.json, agent-timeline.json
//
// Files are written through artifacts.Dir (confined to the directory,
// never through a symlink, atomic); every JSON file is written with sorted
// keys and owner tokens removed.
type artifactDir struct {
	dir *artifacts.Dir

	mu  sync.Mutex
	red *redact.Redactor // the owner tokens of the run's segments
}

// createArtifactDir makes the run's directory; it must not exist yet (a
// run never mixes its evidence with another's).
func createArtifactDir(root string) (*artifactDir, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, fault.CodeArtifactsIOFailed, "cannot resolve the artifacts path", err)
	}
	d, err := artifacts.Open(abs, artifacts.EvidenceNew)
	switch {
	case fault.CodeOf(err) == fault.CodeOutputExists:
		return nil, fault.Usage(fault.CodeArtifactsExist, "the artifacts directory already exists; give a new path").With("artifacts", abs)
	case err != nil:
		return nil, fault.Wrap(fault.Invalid, fault.CodeArtifactsIOFailed, "cannot create the artifacts directory", err).With("artifacts", abs)
	}
	return &artifactDir{dir: d}, nil
}

// root is the directory's absolute path.
func (a *artifactDir) root() string { return a.dir.Root() }

// rel is path (inside the directory) relative to it.
func (a *artifactDir) rel(path string) (string, error) {
	rel, err := filepath.Rel(a.root(), path)
	if err != nil {
		return "", fault.Wrap(fault.Internal, fault.CodeArtifactsIOFailed, "evidence outside the artifacts directory", err).With("file", path)
	}
	return rel, nil
}

// addSecret registers owner tokens and secrets to keep out of every file.
func (a *artifactDir) addSecret(s ...string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.red = a.red.With(s...)
}

func (a *artifactDir) redactor() *redact.Redactor {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.red
}

func (a *artifactDir) redact(s string) string { return a.redactor().Text(s) }

// sanitize returns v as evidence: a tree canonical JSON always writes
// (evidenceTree), without sensitive keys (ownerToken) and with the tokens
// hidden inside strings. Every value the engine writes passes through it.
func (a *artifactDir) sanitize(v any) any { return a.redactor().Value(evidenceTree(v)) }

// segmentDir is the directory of one segment's evidence.
func (a *artifactDir) segmentDir(segmentID string) (string, error) {
	rel := "segments/" + verify.EvidenceDirName(segmentID)
	dir, err := a.dir.Mkdir(rel)
	if err != nil {
		return "", fault.Wrap(fault.Internal, fault.CodeArtifactsIOFailed, "cannot create a segment's evidence directory", err).With("file", filepath.Join(a.root(), rel))
	}
	return dir, nil
}

// writeJSON writes v (sanitized) to path and returns its file evidence.
func (a *artifactDir) writeJSON(path string, v any, typ string) (verify.Evidence, error) {
	b, err := canonjson.MarshalIndent(a.sanitize(v), "  ")
	if err != nil {
		// sanitize leaves nothing canonical JSON refuses: this is a bug.
		return verify.Evidence{}, fault.Wrap(fault.Internal, fault.CodeArtifactsIOFailed, "cannot encode evidence", err).With("file", path)
	}
	b = append(b, '\n')
	return a.write(path, b, typ)
}

// write puts b at path (inside the directory) atomically and returns its
// file evidence.
func (a *artifactDir) write(path string, b []byte, typ string) (verify.Evidence, error) {
	rel, err := a.rel(path)
	if err != nil {
		return verify.Evidence{}, err
	}
	e, err := a.dir.WriteFile(rel, typ, b)
	if err != nil {
		return verify.Evidence{}, fault.Wrap(fault.Internal, fault.CodeArtifactsIOFailed, "cannot write evidence", err).With("file", path)
	}
	return verify.Evidence{Type: typ, Path: path, SHA256: e.SHA256, Size: e.Size}, nil
}

// fileEvidence hashes an existing file; text files the device produced
// (logcat) are first rewritten without owner tokens.
func (a *artifactDir) fileEvidence(path, typ string, redactText bool) (verify.Evidence, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return verify.Evidence{}, fault.Wrap(fault.Transport, fault.CodeArtifactsIOFailed, "cannot read verification evidence", err).With("file", path)
	}
	if redactText {
		if clean := []byte(a.redact(string(b))); !bytes.Equal(clean, b) {
			ev, err := a.write(path, clean, typ)
			if err != nil {
				return verify.Evidence{}, fault.Wrap(fault.Internal, fault.CodeArtifactsIOFailed, "cannot redact verification evidence", err).With("file", path)
			}
			return ev, nil
		}
	}
	sum := sha256.Sum256(b)
	return verify.Evidence{Type: typ, Path: path, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(b))}, nil
}

// events is the run's events.jsonl: one sorted-key JSON object per line
// with a sequence number and a millisecond timestamp.
type events struct {
	a     *artifactDir
	path  string
	clock clock.Clock
	seq   int
	mu    sync.Mutex
}

func (e *events) append(typ string, details map[string]any) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seq++
	ev := map[string]any{}
	for k, v := range e.a.sanitize(details).(map[string]any) {
		ev[k] = v
	}
	ev["sequence"], ev["timestamp"], ev["type"] = e.seq, e.clock.Now().UnixMilli(), typ
	b, err := canonjson.Marshal(ev)
	if err != nil {
		return fault.Wrap(fault.Internal, fault.CodeArtifactsIOFailed, "cannot encode a verification event", err)
	}
	rel, err := e.a.rel(e.path)
	if err != nil {
		return err
	}
	if _, err := e.a.dir.Append(rel, "events", append(b, '\n')); err != nil {
		return fault.Wrap(fault.Internal, fault.CodeArtifactsIOFailed, "cannot append a verification event", err).With("file", e.path)
	}
	return nil
}

package artifacts

import (
	"crypto/sha256"
	"encoding/hex"
	"github.com/solopi-dev/solopi/fault"
	"os"
	"path/filepath"
	"testing"
)

// EvidenceNew creates the directory itself and refuses anything there,
// an empty directory included.
func TestEvidenceNew(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	fresh := filepath.Join(root, "a", "run")
	if err := Check(fresh, EvidenceNew); err != nil {
		t.Fatalf("absent: %v", err)
	}
	d, err := Open(fresh, EvidenceNew)
	if err != nil || d.Root() != fresh {
		t.Fatalf("Open = %v, %v", d, err)
	}
	if _, err := Open(fresh, EvidenceNew); code(err) != fault.CodeOutputExists {
		t.Fatalf("an existing empty directory: %v", err)
	}
	if err := Check(fresh, EvidenceNew); code(err) != fault.CodeOutputExists {
		t.Fatalf("Check of an existing directory: %v", err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(filepath.Join(root, "elsewhere"), link); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(link, EvidenceNew); code(err) != fault.CodeOutputExists {
		t.Fatalf("a dangling symlink: %v", err)
	}
}

// Append grows a log line by line and keeps its record right; Mkdir makes
// a nested directory for another writer; neither goes through a symlink.
func TestAppendAndMkdir(t *testing.T) {
	t.Parallel()
	d, err := Open(filepath.Join(t.TempDir(), "ev"), EvidenceNew)
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	for _, line := range []string{"{\"a\":1}\n", "{\"b\":2}\n"} {
		e, err := d.Append("events.jsonl", "events", []byte(line))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, line...)
		sum := sha256.Sum256(want)
		if e.Size != int64(len(want)) || e.SHA256 != hex.EncodeToString(sum[:]) || e.Path != "events.jsonl" {
			t.Fatalf("record after %q: %+v", line, e)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(d.Root(), "events.jsonl")); string(got) != string(want) {
		t.Fatalf("log holds %q", got)
	}
	if files := d.Files(); len(files) != 1 || files[0].Size != int64(len(want)) {
		t.Fatalf("files %+v", files)
	}
	sub, err := d.Mkdir("segments/s1/replay")
	if err != nil || sub != filepath.Join(d.Root(), "segments", "s1", "replay") {
		t.Fatalf("Mkdir = %q, %v", sub, err)
	}
	if fi, err := os.Stat(sub); err != nil || !fi.IsDir() {
		t.Fatalf("not created: %v", err)
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(d.Root(), "out")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Append("out/events.jsonl", "events", []byte("x")); code(err) != fault.CodeUnsafeArtifactPath {
		t.Fatalf("append through a symlink: %v", err)
	}
	if _, err := d.Mkdir("out/x"); code(err) != fault.CodeUnsafeArtifactPath {
		t.Fatalf("mkdir through a symlink: %v", err)
	}
	if _, err := d.Append("../escape", "events", []byte("x")); code(err) != fault.CodeUnsafeArtifactPath {
		t.Fatalf("append escaping the root: %v", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("wrote outside the root: %v", entries)
	}
	// A file rewritten whole is no longer a log: its record is the new file.
	e, err := d.WriteFile("events.jsonl", "events", []byte("x\n"))
	if err != nil || e.Size != 2 {
		t.Fatalf("rewrite: %+v, %v", e, err)
	}
	if e, err = d.Append("events.jsonl", "events", []byte("y\n")); err != nil || e.Size != 4 {
		t.Fatalf("append after a rewrite: %+v, %v", e, err)
	}
}

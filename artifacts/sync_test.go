package artifacts

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/solopi-dev/solopi/fault"
)

// Sync flushes what was written since the last Sync; a file that cannot be
// flushed is an error and stays pending for the next Sync.
func TestSyncPendingFiles(t *testing.T) {
	t.Parallel()
	d, err := Open(filepath.Join(t.TempDir(), "ev"), EvidenceNew)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Sync(); err != nil {
		t.Fatalf("nothing to flush: %v", err)
	}
	if _, err := d.WriteFile("a/b/c.json", "t", []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Append("events.jsonl", "t", []byte("x\n")); err != nil {
		t.Fatal(err)
	}
	if len(d.unsynced) != 2 {
		t.Fatalf("pending = %v, want the file and the log", d.unsynced)
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	if len(d.unsynced) != 0 {
		t.Fatalf("pending after Sync = %v", d.unsynced)
	}
	if _, err := d.WriteFile("gone.json", "t", []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(d.Root(), "gone.json"))
	if err := d.Sync(); fault.CodeOf(err) != fault.CodeArtifactWriteFailed {
		t.Fatalf("flushing a removed file: %v", err)
	}
	if !d.unsynced["gone.json"] {
		t.Fatal("a file that failed to flush is no longer pending")
	}
}

// WriteManifest flushes the files before it writes the manifest, and the
// manifest after.
func TestWriteManifestFlushes(t *testing.T) {
	t.Parallel()
	d, err := Open(filepath.Join(t.TempDir(), "ev"), EvidenceNew)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.WriteFile("x.json", "t", []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(d.Root(), "x.json"))
	if _, err := d.WriteManifest(Manifest{Kind: "t"}); fault.CodeOf(err) != fault.CodeArtifactWriteFailed {
		t.Fatalf("manifest over a lost file: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(d.Root(), ManifestName)); !os.IsNotExist(err) {
		t.Fatalf("the manifest was written although a file it names was not flushed: %v", err)
	}
	if _, err := d.WriteFile("x.json", "t", []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.WriteManifest(Manifest{Kind: "t"}); err != nil {
		t.Fatal(err)
	}
	if len(d.unsynced) != 0 {
		t.Fatalf("pending after the manifest = %v", d.unsynced)
	}
}

// A directory resolve checked is not inspected again, but one removed by
// Open (EvidenceOverwrite) is forgotten: a symlink planted in its place is
// refused.
func TestResolveForgetsRemovedDirectories(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "ev")
	os.MkdirAll(filepath.Join(root, "device"), 0o755)
	d, err := Open(root, EvidenceOverwrite, "device")
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "device")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.WriteFile("device/x.png", "t", []byte("x")); fault.CodeOf(err) != fault.CodeUnsafeArtifactPath {
		t.Fatalf("write through a symlink planted after Open: %v", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("written outside the directory: %v", entries)
	}
	// A directory created once is reused without a new walk, and a
	// symlink at a new name below it is still refused.
	if _, err := d.Mkdir("segments/one"); err != nil {
		t.Fatal(err)
	}
	if !d.knownDir("segments/one") || !d.knownDir("segments") {
		t.Fatalf("created directories not remembered: %v", d.dirs)
	}
	if err := os.Symlink(outside, filepath.Join(root, "segments", "one", "replay")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.WriteFile("segments/one/replay/result.json", "t", []byte("{}")); fault.CodeOf(err) != fault.CodeUnsafeArtifactPath {
		t.Fatalf("write through a symlink below a remembered directory: %v", err)
	}
	if _, err := d.WriteFile("segments/one/ok.json", "t", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(root, "segments", "one", "ok.json")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("published file: %v %v", fi, err)
	}
}

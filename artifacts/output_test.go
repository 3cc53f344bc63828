package artifacts

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/internal/tooltest"
)

func TestOutputCheckFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "r.xml")
	if _, err := (Output{Mode: Exclusive}).CheckFile(p); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, nil, 0o644)
	if _, err := (Output{Mode: Exclusive}).CheckFile(p); code(err) != fault.CodeOutputExists {
		t.Fatalf("existing: %v", err)
	}
	if _, err := (Output{Mode: Replace}).CheckFile(p); err != nil {
		t.Fatal(err)
	}
	if _, err := (Output{Mode: Replace}).CheckFile(dir); code(err) != fault.CodeInvalidOutputPath {
		t.Fatalf("dir: %v", err)
	}
	if _, err := (Output{Mode: Replace}).CheckFile(""); code(err) != fault.CodeInvalidOutputPath {
		t.Fatalf("empty: %v", err)
	}
	if _, err := (Output{}).CheckFile(filepath.Join(dir, "missing", "r.xml")); code(err) != fault.CodeInvalidOutputPath {
		t.Fatalf("missing parent: %v", err)
	}
	if _, err := (Output{MakeParents: true}).CheckFile(filepath.Join(dir, "missing", "r.xml")); err != nil {
		t.Fatalf("missing parent with MakeParents: %v", err)
	}
}

// A symlink is never followed, in any mode, and never replaced.
func TestOutputRefusesSymlinks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		tooltest.Missing(t, "no symlinks here: %v", err)
	}
	for _, m := range []mode{Exclusive, Replace} {
		if _, err := (Output{Mode: m}).WriteFile(link, []byte("x")); code(err) != fault.CodeInvalidOutputPath {
			t.Fatalf("mode %d: %v", m, err)
		}
		if _, err := (Output{Mode: m}).CheckDir(link); code(err) != fault.CodeInvalidOutputPath {
			t.Fatalf("dir mode %d: %v", m, err)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatalf("the symlink target changed: %q", b)
	}
}

func TestOutputWriteFileModes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "out.txt")
	fr, err := (Output{}).WriteFile(p, []byte("one"))
	if err != nil || fr.Size != 3 || fr.Path != p {
		t.Fatalf("%+v %v", fr, err)
	}
	if _, err := (Output{}).WriteFile(p, []byte("two")); code(err) != fault.CodeOutputExists {
		t.Fatalf("exclusive over an existing file: %v", err)
	}
	if _, err := (Output{Mode: Replace, Perm: 0o600}).WriteFile(p, []byte("three")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	st, _ := os.Stat(p)
	if string(b) != "three" || st.Mode().Perm() != 0o600 {
		t.Fatalf("replace: %q %v", b, st.Mode())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
}

func TestOutputPublishDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	out := filepath.Join(root, "charts")
	fill := func(name string) func(*Dir) error {
		return func(d *Dir) error { _, err := d.WriteFile(name, "test", []byte(name)); return err }
	}
	if _, err := (Output{}).PublishDir(out, fill("a")); err != nil {
		t.Fatal(err)
	}
	if _, err := (Output{}).PublishDir(out, fill("b")); code(err) != fault.CodeOutputExists {
		t.Fatalf("exclusive over an existing directory: %v", err)
	}
	if _, err := (Output{Mode: Replace}).PublishDir(out, fill("c")); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 || entries[0].Name() != "c" {
		t.Fatalf("replaced directory holds %v", entries)
	}
	if all, _ := os.ReadDir(root); len(all) != 1 {
		t.Fatalf("temporary directories left behind: %v", all)
	}
	// The files inside obey the evidence rules: nothing escapes.
	_, err := (Output{Mode: Replace}).PublishDir(out, func(d *Dir) error { _, err := d.WriteFile("../x", "test", nil); return err })
	if code(err) != fault.CodeUnsafeArtifactPath {
		t.Fatalf("a file escaping the published directory: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(root, "x")); err == nil {
		t.Fatal("the escaping file was written")
	}
}

// MakeParents creates owner-only parents when asked (ParentPerm), and the
// published file gets Perm: the atomic replacement of state files.
func TestOutputParentPerm(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	p := filepath.Join(root, "a", "b", "state.json")
	o := Output{Mode: Replace, MakeParents: true, ParentPerm: 0o700, Perm: 0o600}
	for _, content := range []string{"first", "second"} {
		if _, err := o.WriteFile(p, []byte(content)); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(p); err != nil || string(b) != content {
			t.Fatalf("read %q, %v", b, err)
		}
	}
	for path, want := range map[string]os.FileMode{p: 0o600, filepath.Dir(p): 0o700, filepath.Join(root, "a"): 0o700} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, %v; want %v", path, fi.Mode().Perm(), err, want)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(p)); len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
}

// A location where no file can be created is refused by the checks, before
// any work: a read-only directory (for a user the permission bits bind)
// and a path below a regular file.
func TestUnwritableLocationsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	below := filepath.Join(file, "sub", "out")
	if err := Check(below, evidenceReplace); code(err) != fault.CodeUnsafeArtifactPath {
		t.Errorf("evidence below a file: %v", err)
	}
	if _, err := (Output{MakeParents: true}).CheckFile(below); code(err) != fault.CodeInvalidOutputPath {
		t.Errorf("output below a file: %v", err)
	}
	if runtime.GOOS == "linux" {
		// procfs refuses new files even to root.
		proc := "/proc/self/solopi-evidence"
		if err := Check(proc, evidenceReplace); code(err) != fault.CodeOutputNotWritable {
			t.Errorf("evidence in procfs: %v", err)
		}
		if _, err := (Output{}).CheckFile(proc); code(err) != fault.CodeOutputNotWritable {
			t.Errorf("output in procfs: %v", err)
		}
	}
	if os.Geteuid() == 0 {
		t.Log("running as root: permission bits do not bind; the read-only directory is covered by the end-to-end test as another user")
		return
	}
	ro := filepath.Join(dir, "ro")
	os.Mkdir(ro, 0o555)
	t.Cleanup(func() { os.Chmod(ro, 0o755) })
	for _, p := range []string{ro, filepath.Join(ro, "new")} {
		if err := Check(p, evidenceReplace); code(err) != fault.CodeOutputNotWritable {
			t.Errorf("evidence %s: %v", p, err)
		}
	}
	if _, err := (Output{}).CheckFile(filepath.Join(ro, "x.png")); code(err) != fault.CodeOutputNotWritable {
		t.Errorf("output in a read-only dir: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("the check left files behind: %v", entries)
	}
}

// Replace reports whether it replaced an existing file.
func TestOutputReportsReplaced(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "x")
	fr, err := (Output{Mode: Replace}).WriteFile(p, []byte("1"))
	if err != nil || fr.Replaced {
		t.Fatalf("first write: %+v %v", fr, err)
	}
	fr, err = (Output{Mode: Replace}).WriteFile(p, []byte("2"))
	if err != nil || !fr.Replaced {
		t.Fatalf("second write: %+v %v", fr, err)
	}
}

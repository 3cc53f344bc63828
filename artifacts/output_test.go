package artifacts

import (
	"os"
	"path/filepath"
	"testing"
)

func TestOutputCheckFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.xml")
	if _, err := (Output{Mode: Exclusive}).CheckFile(p); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, nil, 0o644)
	if _, err := (Output{Mode: Exclusive}).CheckFile(p); code(err) != CodeOutputExists {
		t.Fatalf("existing: %v", err)
	}
	if _, err := (Output{Mode: Replace}).CheckFile(p); err != nil {
		t.Fatal(err)
	}
	if _, err := (Output{Mode: Replace}).CheckFile(dir); code(err) != CodeInvalidOutput {
		t.Fatalf("dir: %v", err)
	}
	if _, err := (Output{Mode: Replace}).CheckFile(""); code(err) != CodeInvalidOutput {
		t.Fatalf("empty: %v", err)
	}
	if _, err := (Output{}).CheckFile(filepath.Join(dir, "missing", "r.xml")); code(err) != CodeInvalidOutput {
		t.Fatalf("missing parent: %v", err)
	}
	if _, err := (Output{MakeParents: true}).CheckFile(filepath.Join(dir, "missing", "r.xml")); err != nil {
		t.Fatalf("missing parent with MakeParents: %v", err)
	}
}

// A symlink is never followed, in any mode, and never replaced.
func TestOutputRefusesSymlinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symlinks here")
	}
	for _, m := range []Mode{Exclusive, Replace} {
		if _, err := (Output{Mode: m}).WriteFile(link, []byte("x")); code(err) != CodeInvalidOutput {
			t.Fatalf("mode %d: %v", m, err)
		}
		if _, err := (Output{Mode: m}).CheckDir(link); code(err) != CodeInvalidOutput {
			t.Fatalf("dir mode %d: %v", m, err)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatalf("the symlink target changed: %q", b)
	}
}

func TestOutputWriteFileModes(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.txt")
	fr, err := (Output{}).WriteFile(p, []byte("one"))
	if err != nil || fr.Size != 3 || fr.Path != p {
		t.Fatalf("%+v %v", fr, err)
	}
	if _, err := (Output{}).WriteFile(p, []byte("two")); code(err) != CodeOutputExists {
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
	root := t.TempDir()
	out := filepath.Join(root, "charts")
	fill := func(name string) func(string) error {
		return func(tmp string) error { return os.WriteFile(filepath.Join(tmp, name), []byte(name), 0o644) }
	}
	if _, err := (Output{}).PublishDir(out, fill("a")); err != nil {
		t.Fatal(err)
	}
	if _, err := (Output{}).PublishDir(out, fill("b")); code(err) != CodeOutputExists {
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
}

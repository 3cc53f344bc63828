package artifacts

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/fault"
)

func code(err error) string {
	var e *fault.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestCheckAndOpen(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	fresh := filepath.Join(root, "new")
	if err := Check(fresh, EvidenceExclusive); err != nil {
		t.Fatalf("absent dir: %v", err)
	}
	full := filepath.Join(root, "full")
	os.MkdirAll(full, 0o755)
	os.WriteFile(filepath.Join(full, "x"), nil, 0o644)
	if err := Check(full, EvidenceExclusive); code(err) != fault.CodeArtifactsDirNotEmpty {
		t.Fatalf("non-empty dir: %v", err)
	}
	if err := Check(full, EvidenceOverwrite); err != nil {
		t.Fatalf("overwrite: %v", err)
	}
	link := filepath.Join(root, "link")
	os.Symlink(fresh, link)
	if err := Check(link, EvidenceOverwrite); code(err) != fault.CodeUnsafeArtifactPath {
		t.Fatalf("symlink: %v", err)
	}
	file := filepath.Join(root, "file")
	os.WriteFile(file, nil, 0o644)
	if err := Check(file, EvidenceOverwrite); code(err) != fault.CodeUnsafeArtifactPath {
		t.Fatalf("file: %v", err)
	}
	// Overwrite removes only the named previous entries.
	os.MkdirAll(filepath.Join(full, "device"), 0o755)
	os.WriteFile(filepath.Join(full, "device", "old.png"), []byte("old"), 0o644)
	d, err := Open(full, EvidenceOverwrite, "device", "result.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(full, "device")); !os.IsNotExist(err) {
		t.Fatal("previous device/ kept")
	}
	if _, err := os.Stat(filepath.Join(full, "x")); err != nil {
		t.Fatal("unrelated file removed")
	}
	if d.Root() != full {
		t.Fatalf("root %s", d.Root())
	}
}

func TestWritesAreConfinedAtomicAndDigested(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "ev")
	d, err := Open(root, EvidenceExclusive)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"../x", "/etc/passwd", "a/../../x", ""} {
		if _, err := d.WriteFile(bad, "t", []byte("x")); code(err) != fault.CodeUnsafeArtifactPath {
			t.Fatalf("%q accepted: %v", bad, err)
		}
	}
	outside := t.TempDir()
	os.Symlink(outside, filepath.Join(root, "sub"))
	if _, err := d.WriteFile("sub/x", "t", []byte("x")); code(err) != fault.CodeUnsafeArtifactPath {
		t.Fatalf("write through symlink accepted: %v", err)
	}
	e, err := d.WriteFile("device/a.log", "/sdcard/solopi/a.log", []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("hello"))
	if e.Size != 5 || e.SHA256 != hex.EncodeToString(sum[:]) || e.Path != "device/a.log" {
		t.Fatalf("entry %+v", e)
	}
	w, _ := d.Create("aborted.bin", "t")
	w.Write([]byte("partial"))
	w.Abort()
	entries, _ := os.ReadDir(root)
	for _, en := range entries {
		if strings.Contains(en.Name(), ".tmp-") || en.Name() == "aborted.bin" {
			t.Fatalf("leftover %s", en.Name())
		}
	}
	if _, err := d.WriteManifest(Manifest{Kind: "run", RunID: "r1", RequestID: "q1", CaseName: "c", Complete: true}); err != nil {
		t.Fatal(err)
	}
	var m Manifest
	b, _ := os.ReadFile(filepath.Join(root, ManifestName))
	if err := json.Unmarshal(b, &m); err != nil || m.Schema != manifestSchema || m.RunID != "r1" || len(m.Files) != 1 || m.Files[0].Path != "device/a.log" {
		t.Fatalf("manifest %s", b)
	}
}

func TestSanitizeName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"payment smoke": "payment-smoke", "支付 & 退款": "case", "..a..": "a", "a--b": "a-b", "a/b\\c": "a-b-c",
		strings.Repeat("x", 100): strings.Repeat("x", 80), "v1.2_ok": "v1.2_ok",
	} {
		if got := SanitizeName(in); got != want {
			t.Errorf("SanitizeName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestJUnitStructureAndEscaping(t *testing.T) {
	t.Parallel()
	s := JUnitSuite{Name: "solopi.run-batch", Timestamp: time.Unix(1700000000, 0), Cases: []JUnitCase{
		{Name: "001-a", Classname: "solopi.a", Duration: 1500 * time.Millisecond},
		{Name: "002-b", Classname: "solopi.b", Duration: time.Second,
			Failure:     &JUnitProblem{Message: `node "x" <missing> & gone` + "\x01", Type: "replay_failed", Text: "exceptionStepId: s2"},
			Attachments: []string{"/tmp/a.png"}},
		{Name: "003-c", Classname: "solopi.c", Error: &JUnitProblem{Message: "timed out", Type: "run_timeout"}},
		{Name: "004-d", Classname: "solopi.d", Skipped: &JUnitProblem{Message: "not run"}},
	}}
	b, err := marshalJUnit("solopi", s)
	if err != nil {
		t.Fatal(err)
	}
	var doc XMLTestsuites
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("not well-formed: %v\n%s", err, b)
	}
	got := doc.Suites[0]
	if doc.Tests != 4 || got.Failures != 1 || got.Errors != 1 || got.Skipped != 1 || got.Time != "2.500" || got.Timestamp != "2023-11-14T22:13:20" {
		t.Fatalf("counters %+v", got)
	}
	tc := got.Cases[1]
	if tc.Failure.Message != `node "x" <missing> & gone` || tc.SystemOut == nil || !strings.Contains(tc.SystemOut.Text, "[[ATTACHMENT|/tmp/a.png]]") {
		t.Fatalf("testcase %+v", tc)
	}
	if c := s.Counts(); c != (counts{Tests: 4, Failures: 1, Errors: 1, Skipped: 1}) {
		t.Fatalf("counts %+v", c)
	}
}

// EvidenceReplace replaces an earlier evidence set of ours: files the old
// manifest listed and the new set does not write are removed, files no
// manifest names are kept, and a directory without our manifest is
// refused.
func TestEvidenceReplace(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "ev")
	d, err := Open(root, EvidenceExclusive)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"result.json", "screenshot.png", "device/run.log"} {
		if _, err := d.WriteFile(name, "t", []byte(name)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.WriteManifest(Manifest{Kind: "run", RunID: "old"}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "notes.txt"), []byte("mine"), 0o644)
	if err := Check(root, EvidenceExclusive); code(err) != fault.CodeArtifactsDirNotEmpty {
		t.Fatalf("exclusive over an evidence set: %v", err)
	}
	d, err = Open(root, evidenceReplace)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.WriteFile("result.json", "t", []byte("new")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.WriteManifest(Manifest{Kind: "run", RunID: "new"}); err != nil {
		t.Fatal(err)
	}
	r := d.Replaced()
	if r == nil || r.RunID != "old" || len(r.Removed) != 2 || len(r.Errors) != 0 {
		t.Fatalf("replaced %+v", r)
	}
	for name, want := range map[string]bool{"result.json": true, "screenshot.png": false, "device/run.log": false, "notes.txt": true} {
		if _, err := os.Stat(filepath.Join(root, name)); (err == nil) != want {
			t.Errorf("%s present=%v, want %v", name, err == nil, want)
		}
	}
	m, ok := readManifest(filepath.Join(root, ManifestName))
	if !ok || m.RunID != "new" || len(m.Files) != 1 {
		t.Fatalf("manifest %+v", m)
	}
	// A non-empty directory without our manifest is never adopted.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "x"), nil, 0o644)
	if err := Check(other, evidenceReplace); code(err) != fault.CodeArtifactsDirNotEmpty {
		t.Fatalf("foreign directory: %v", err)
	}
}

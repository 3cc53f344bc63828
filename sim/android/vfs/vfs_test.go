package vfs

import (
	"bytes"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/solopi-dev/solopi/clock"
)

func TestFSAliasesAndSemantics(t *testing.T) {
	t.Parallel()
	f := New(clock.NewScaled(1))
	mtime := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := f.MkdirAll("/sdcard/Android/data/com.x/files/a", 0o771); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteFile("/sdcard/Android/data/com.x/files/a/one.json", 0o644, mtime, bytes.NewReader([]byte("{}"))); err != nil {
		t.Fatal(err)
	}
	for _, alias := range []string{"/storage/emulated/0/Android/data/com.x/files/a/one.json",
		"/storage/self/primary/Android/data/com.x/files/a/one.json", "/sdcard//Android/./data/com.x/files/a/../a/one.json"} {
		fi, err := f.Stat(alias)
		if err != nil || fi.Size() != 2 || !fi.ModTime().Equal(mtime) || fi.Name() != "one.json" || fi.Mode().Perm() != 0o660 {
			t.Errorf("stat %s = %+v, %v", alias, fi, err)
		}
	}
	if got := Canonical("/sdcard"); got != ExternalStorage {
		t.Errorf("Canonical(/sdcard) = %s", got)
	}
	if got := shellPath("/storage/emulated/0/solopi/x"); got != "/sdcard/solopi/x" {
		t.Errorf("ShellPath = %s", got)
	}
	errCases := []struct {
		name string
		err  error
		want error
	}{
		{"write without parent", f.WriteFile("/sdcard/none/x", 0, time.Time{}, bytes.NewReader(nil)), fs.ErrNotExist},
		{"write outside storage", f.WriteFile("/system/x", 0, time.Time{}, bytes.NewReader(nil)), fs.ErrPermission},
		{"write over a dir", f.WriteFile("/sdcard/Download", 0, time.Time{}, bytes.NewReader(nil)), nil},
		{"mkdir existing", f.Mkdir("/sdcard/Download", 0o771), fs.ErrExist},
		{"remove non-empty", f.Remove("/sdcard/Android/data/com.x"), nil},
		{"remove missing", f.Remove("/sdcard/nope"), fs.ErrNotExist},
		{"remove storage root", f.RemoveAll("/sdcard"), fs.ErrPermission},
		{"rename into itself", f.Rename("/sdcard/Android/data", "/sdcard/Android/data/x"), nil},
		{"open a dir", func() error { _, err := f.Open("/sdcard"); return err }(), nil},
		{"mkdirall through a file", f.MkdirAll("/sdcard/Android/data/com.x/files/a/one.json/x", 0o771), nil},
	}
	for _, c := range errCases {
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		var pe *fs.PathError
		if !errors.As(c.err, &pe) {
			t.Errorf("%s: %v is not a PathError", c.name, c.err)
		}
		if c.want != nil && !errors.Is(c.err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.err, c.want)
		}
	}
	if err := f.MkdirAll("/data/local/tmp", 0o771); err != nil {
		t.Errorf("mkdir -p of an existing dir: %v", err)
	}
	// Rename replaces a file, moves directories with their content.
	if err := f.Rename("/sdcard/Android/data/com.x/files/a", "/data/local/tmp/moved"); err != nil {
		t.Fatal(err)
	}
	if b, err := f.ReadFile("/data/local/tmp/moved/one.json"); err != nil || string(b) != "{}" {
		t.Errorf("after rename: %q %v", b, err)
	}
	infos, err := f.ReadDir("/storage/emulated/0")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(infos); i++ {
		if infos[i-1].Name() >= infos[i].Name() {
			t.Errorf("ReadDir not sorted: %s before %s", infos[i-1].Name(), infos[i].Name())
		}
	}
	if err := f.RemoveAll("/data/local/tmp/moved"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Stat("/data/local/tmp/moved/one.json"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("RemoveAll left files: %v", err)
	}
}

// shellPath is the inverse used by SoloPi's "shell form": the canonical
// external storage prefix becomes /sdcard.
func shellPath(p string) string {
	c := Canonical(p)
	if c == ExternalStorage || strings.HasPrefix(c, ExternalStorage+"/") {
		return shellStorage + c[len(ExternalStorage):]
	}
	return c
}

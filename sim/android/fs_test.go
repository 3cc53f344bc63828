package android

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"testing"
	"time"
)

func TestFSLargeFile(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	data := make([]byte, 5<<20)
	for i := range data {
		data[i] = byte(i*7 + i>>11)
	}
	if err := p.FS().WriteFile("/sdcard/big.bin", 0o644, time.Time{}, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	r, err := p.FS().Open("/storage/emulated/0/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	if !bytes.Equal(got, data) {
		t.Fatal("5 MiB file corrupted")
	}
	// Readers keep their snapshot while the file is rewritten.
	r2, _ := p.FS().Open("/sdcard/big.bin")
	_ = p.FS().WriteFile("/sdcard/big.bin", 0, time.Time{}, bytes.NewReader([]byte("small")))
	if got, _ := io.ReadAll(r2); len(got) != len(data) {
		t.Errorf("snapshot changed under the reader: %d bytes", len(got))
	}
	if out := mustSh(t, p, "stat -c %s /sdcard/big.bin"); out != "5\n" {
		t.Errorf("stat after rewrite = %q", out)
	}
	mustSh(t, p, "cat /sdcard/big.bin > /dev/null")
	_ = p.FS().WriteFile("/sdcard/big.bin", 0, time.Time{}, bytes.NewReader(data))
	if out := mustSh(t, p, "sha256sum /sdcard/big.bin"); out != sha256Hex(data)+"  /sdcard/big.bin\n" {
		t.Errorf("sha256sum = %q", out)
	}
	if out := mustSh(t, p, "stat -c %s /storage/emulated/0/big.bin"); out != "5242880\n" {
		t.Errorf("stat = %q", out)
	}
}

func TestPhoneFileMethodsForAdbd(t *testing.T) {
	t.Parallel()
	p := newTestPhone(t)
	if err := p.WriteFile("/sdcard/Android/data/com.alipay.hulu/files/harness-import/r.json", 0o644, time.Time{}, bytes.NewReader([]byte("[]"))); err != nil {
		t.Fatalf("push into missing dirs: %v", err)
	}
	rc, err := p.Open("/storage/emulated/0/Android/data/com.alipay.hulu/files/harness-import/r.json")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	if string(b) != "[]" {
		t.Errorf("read %q", b)
	}
	if err := p.WriteFile("/system/x", 0, time.Time{}, bytes.NewReader(nil)); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("push to /system: %v", err)
	}
	if err := p.FS().AppendFile("/sdcard/log.txt", []byte("a")); err != nil {
		t.Fatal(err)
	}
	_ = p.FS().AppendFile("/sdcard/log.txt", []byte("b"))
	if b, _ := p.FS().ReadFile("/sdcard/log.txt"); string(b) != "ab" {
		t.Errorf("append: %q", b)
	}
	if prod, model, dev := p.Props(); prod != "panther" || model != "Pixel 7" || dev != "panther" {
		t.Errorf("Props = %s %s %s", prod, model, dev)
	}
}
